/**
 * The export round trip alone: `node dist/bench/export-main.js [--entities 10000] [--out FILE]`
 * (default `bench/export-results.json`). `npm run bench` runs it too, at its largest size.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { runExportBenchmark } from './export.js';

const option = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};

const entities = Number(option('--entities', '10000'));
const out = resolve(option('--out', join(import.meta.dirname, '..', '..', '..', 'bench', 'export-results.json')));
const started = performance.now();
const workDir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-export-'));
try {
  await mkdir(dirname(out), { recursive: true });
  await runExportBenchmark(
    {
      workDir,
      apiKey: `bench-${randomBytes(12).toString('hex')}`,
      repeats: 1,
      log: (line) =>
        process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`),
    },
    entities,
    out,
  );
} finally {
  await rm(workDir, { recursive: true, force: true });
}
