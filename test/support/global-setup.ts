/**
 * Runs once per test run: says, in one line, which suites a bare clone skips, and gives the run a
 * folder for what its files share (the CLI's bundle, built once by the first file that needs it:
 * `cli-bundle.ts`), removed when the run ends.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dirs = [
    process.env.CORTEX_SYNC_CORPUS,
    join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'cortex-yaml'),
  ];
  if (!dirs.some((dir) => dir !== undefined && dir !== '' && existsSync(dir)))
    console.log(
      'NOTE: cortex.yaml corpus not found (set CORTEX_SYNC_CORPUS, or put shared/corpus/ beside the checkout): its tests are skipped',
    );
  const shared = await mkdtemp(join(tmpdir(), 'cortex-sync-run-'));
  project.provide('cliBundleCache', shared);
  return () => rm(shared, { recursive: true, force: true });
}
