/**
 * The watch benchmark alone: `node dist/bench/watch-main.js [--entities 10000] [--changes 100]
 * [--cycles 500] [--out FILE] [--snapshot-dir DIR]` (default `bench/watch-results.json`). `npm run
 * bench` runs it too. `--snapshot-dir` keeps heap snapshots of the watcher after the first sync and
 * after the last change, for `heap-diff.js`.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { runWatchBenchmark } from './watch.js';

const option = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};

const out = resolve(option('--out', join(import.meta.dirname, '..', '..', '..', 'bench', 'watch-results.json')));
const started = performance.now();
const workDir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-watch-'));
try {
  await mkdir(dirname(out), { recursive: true });
  await runWatchBenchmark(
    {
      workDir,
      apiKey: `bench-${randomBytes(12).toString('hex')}`,
      repeats: 1,
      log: (line) =>
        process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`),
    },
    Number(option('--entities', '10000')),
    out,
    {
      changes: Number(option('--changes', '100')),
      cycles: Number(option('--cycles', '500')),
      ...(process.argv.includes('--snapshot-dir') ? { snapshotDir: resolve(option('--snapshot-dir', '.')) } : {}),
    },
  );
} finally {
  await rm(workDir, { recursive: true, force: true });
}
