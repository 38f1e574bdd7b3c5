/**
 * Where the real-world descriptor corpus is: `CORTEX_SYNC_CORPUS`, else `shared/corpus/` beside
 * the checkout (how CI lays out a clone). A clone on its own has no corpus: the suites that need
 * it are skipped (`describeWithCorpus`) and the run prints one line saying so (`global-setup.ts`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'vitest';

const candidates = [
  process.env.CORTEX_SYNC_CORPUS,
  join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'cortex-yaml'),
].filter((dir): dir is string => dir !== undefined && dir !== '');

export const CORPUS_DIR: string | undefined = candidates.find((dir) => existsSync(dir));

/** `describe`, skipped when the corpus is absent. */
export const describeWithCorpus = describe.skipIf(CORPUS_DIR === undefined);
