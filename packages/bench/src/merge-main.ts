/**
 * The merge benchmark alone (`merge-noop.ts`): `node packages/bench/dist/merge-main.js
 * [--entities 10000] [--out FILE]` (default `bench/merge-results.json`). `npm run bench` runs it too.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { renderFigures } from './figures.js';
import { runMergeNoopBenchmark } from './merge-noop.js';

const option = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};

const out = resolve(option('--out', join(import.meta.dirname, '..', '..', '..', 'bench', 'merge-results.json')));
const started = performance.now();
const workDir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-merge-'));
try {
  await mkdir(dirname(out), { recursive: true });
  const result = await runMergeNoopBenchmark(
    {
      workDir,
      apiKey: `bench-${randomBytes(12).toString('hex')}`,
      repeats: 1,
      log: (line) =>
        process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`),
    },
    Number(option('--entities', '10000')),
    out,
  );
  process.stdout.write(`${renderFigures(result.figures)}\n`);
} finally {
  await rm(workDir, { recursive: true, force: true });
}
