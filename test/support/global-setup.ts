/** Runs once per test run: says, in one line, which suites a bare clone skips. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export default function setup(): void {
  const dirs = [
    process.env.CORTEX_SYNC_CORPUS,
    join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'cortex-yaml'),
  ];
  if (!dirs.some((dir) => dir !== undefined && dir !== '' && existsSync(dir)))
    console.log(
      'NOTE: cortex.yaml corpus not found (set CORTEX_SYNC_CORPUS, or put shared/corpus/ beside the checkout): its tests are skipped',
    );
}
