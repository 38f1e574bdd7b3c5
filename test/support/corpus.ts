/**
 * Where the real-world descriptor corpus is: `CORTEX_SYNC_CORPUS`, else `shared/` beside the
 * checkout (how CI lays out a clone), else this workplace's `/work/shared`. A missing corpus is an
 * error, never a silently empty test.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const candidates = [
  process.env.CORTEX_SYNC_CORPUS,
  join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'cortex-yaml'),
  '/work/shared/corpus/cortex-yaml',
];

const found = candidates.find((dir): dir is string => dir !== undefined && existsSync(dir));
if (found === undefined) {
  throw new Error(`the cortex.yaml corpus was not found (looked in ${candidates.filter(Boolean).join(', ')})`);
}

export const CORPUS_DIR: string = found;
