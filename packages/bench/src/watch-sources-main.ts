/**
 * The many-sources benchmark alone: `node packages/bench/dist/watch-sources-main.js [--sources 20]
 * [--entities 500] [--changes 100] [--big 5000] [--probes 6] [--only fleet|fairness] [--out FILE]`
 * (default `bench/watch-sources-results.json`). `npm run bench` runs it too.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { renderFigures } from './figures.js';
import { runSourcesBenchmark } from './watch-sources.js';

const option = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};

const out = resolve(
  option('--out', join(import.meta.dirname, '..', '..', '..', 'bench', 'watch-sources-results.json')),
);
const started = performance.now();
const workDir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-sources-'));
try {
  await mkdir(dirname(out), { recursive: true });
  const result = await runSourcesBenchmark(
    {
      workDir,
      apiKey: `bench-${randomBytes(12).toString('hex')}`,
      repeats: 1,
      log: (line) =>
        process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`),
    },
    out,
    {
      sources: Number(option('--sources', '20')),
      entitiesPerSource: Number(option('--entities', '500')),
      changes: Number(option('--changes', '100')),
      bigEntities: Number(option('--big', '5000')),
      probes: Number(option('--probes', '6')),
      ...(option('--only', '') === 'fleet' || option('--only', '') === 'fairness'
        ? { only: option('--only', '') as 'fleet' | 'fairness' }
        : {}),
    },
  );
  process.stdout.write(`${renderFigures(result.figures)}\n`);
} finally {
  if (!process.argv.includes('--keep')) await rm(workDir, { recursive: true, force: true });
}
