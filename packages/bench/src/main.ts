/**
 * `npm run bench`: the CLI's start beside Node's own; then generates synthetic repositories, runs
 * the emulator in its own process, and measures no-op plans (with the parse floor and the naive
 * baseline) and an apply of one changed entity, apply throughput under a rate limit, memory across
 * repeated plans, export and the watcher. Prints markdown tables, ending with every figure beside
 * its floor (`figures.ts`), writes `bench/results.json`, and exits 0 even when a goal is missed
 * (it is a report; misses say MISSED).
 *
 * Options: `--sizes 1000,10000`, `--repeats 3`, `--startup-runs 15`, `--apply-entities 2000`,
 * `--memory-entities 1000`, `--memory-runs 10`, `--adaptive-entities 500`, `--watch-changes 100`,
 * `--scorecards 200` (the scorecard round trip: that many scorecards and Initiatives), `--out FILE`
 * (default bench/results.json), `--keep` (keep the temp dir).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { VERSION } from '../../../src/version.js';
import { countOf } from '../../../src/core/plural.js';
import { runExportBenchmark } from './export.js';
import { measureAdaptiveRate, renderAdaptiveRate } from './adaptive-rate.js';
import { type Figure, renderFigures } from './figures.js';
import { judgeGoals, oneChangeFigure, renderReport } from './report.js';
import { measureStartup, startupFigures } from './startup.js';
import {
  type BenchContext,
  type MemoryResult,
  measureApply,
  measureMemory,
  measureNoopPlan,
  type NoopPlanResult,
} from './scenarios.js';
import { runWatchBenchmark } from './watch.js';
import { runMergeNoopBenchmark } from './merge-noop.js';
import { runSourcesBenchmark } from './watch-sources.js';
import { runScorecardBenchmark } from './scorecards.js';

/** The repository: `dist/` of packages/bench/ is three folders below it. */
const ROOT = join(import.meta.dirname, '..', '..', '..');

const option = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};

const sizes = option('--sizes', '1000,10000').split(',').map(Number);
const repeats = Number(option('--repeats', '3'));
const applyEntities = Number(option('--apply-entities', '2000'));
const memoryEntities = Number(option('--memory-entities', String(sizes[0] ?? 1000)));
const memoryRuns = Number(option('--memory-runs', '10'));
const adaptiveEntities = Number(option('--adaptive-entities', '500'));
const startupRuns = Number(option('--startup-runs', '15'));
const watchChanges = Number(option('--watch-changes', '100'));
const scorecards = Number(option('--scorecards', '200'));
const out = resolve(option('--out', join(ROOT, 'bench', 'results.json')));
const APPLY_BUDGET = { perMinute: 6000, burst: 100 };
const APPLY_CONCURRENCY = 8;

const started = performance.now();
const log = (line: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
};
const workDir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-'));
const ctx: BenchContext = { workDir, apiKey: `bench-${randomBytes(12).toString('hex')}`, repeats, log };
const loadBefore = loadavg();

try {
  log(`CLI start: --help, --version and validate beside node -e 0, ${startupRuns} runs each`);
  const startup = await measureStartup(startupRuns);
  const figures: Figure[] = startupFigures(startup);
  let memory: MemoryResult | undefined;
  const plans: NoopPlanResult[] = [];
  for (const entities of sizes) {
    plans.push(
      await measureNoopPlan(ctx, entities, async (emulator, dir) => {
        if (entities === memoryEntities) memory = await measureMemory(ctx, emulator, dir, entities, memoryRuns);
      }),
    );
  }
  if (!memory) throw new Error(`--memory-entities ${memoryEntities} is not one of --sizes ${sizes.join(',')}`);
  const applies = await measureApply(
    ctx,
    applyEntities,
    APPLY_BUDGET,
    [
      { label: 'client at the budget', clientPerMinute: APPLY_BUDGET.perMinute },
      { label: 'client set to 2× the budget (429s)', clientPerMinute: APPLY_BUDGET.perMinute * 2 },
    ],
    APPLY_CONCURRENCY,
  );
  const adaptive = await measureAdaptiveRate(workDir, ctx.apiKey, adaptiveEntities, [100, 300, 1000], log);
  const goals = judgeGoals(plans, applies, memory);
  const biggest = plans[plans.length - 1];
  if (biggest) figures.push(oneChangeFigure(biggest));
  const cpu = cpus();
  const machine = {
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: process.version,
    loadAverageBefore: loadBefore.map((l) => Number(l.toFixed(2))),
    loadAverageAfter: loadavg().map((l) => Number(l.toFixed(2))),
  };
  const durationS = (performance.now() - started) / 1000;
  const machineLine = `${machine.cores} × ${machine.cpu}, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}, cortex-sync ${VERSION}; load average ${machine.loadAverageBefore[0]} → ${machine.loadAverageAfter[0]}; ${durationS.toFixed(0)} s in all.`;
  const markdown = renderReport({ plans, applies, memory, goals, machine: machineLine });
  process.stdout.write(markdown);
  process.stdout.write(`\n### Adaptive rate (client at its default)\n\n${renderAdaptiveRate(adaptive)}`);
  const missed = goals.filter((g) => !g.met);
  process.stdout.write(
    missed.length === 0
      ? '\nAll goals met.\n'
      : `\nMISSED ${countOf(missed.length, 'goal')}: ${missed.map((g) => g.id).join(', ')}\n`,
  );
  await mkdir(dirname(out), { recursive: true });
  const results = (all: readonly Figure[]) =>
    `${JSON.stringify(
      {
        formatVersion: 1,
        date: new Date().toISOString(),
        version: VERSION,
        machine,
        durationS: Number(durationS.toFixed(1)),
        settings: {
          sizes,
          repeats,
          applyEntities,
          applyBudget: APPLY_BUDGET,
          applyConcurrency: APPLY_CONCURRENCY,
          memoryEntities,
          memoryRuns,
          startupRuns,
          watchChanges,
          scorecards,
        },
        figures: all,
        goals,
        startup,
        noopPlans: plans,
        applies,
        memory,
        adaptiveRate: adaptive,
      },
      null,
      2,
    )}\n`;
  // Written now and again at the end: a failure in the export or watch benchmark keeps these.
  await writeFile(out, results(figures));
  log(`wrote ${out}`);
  await runExportBenchmark(ctx, Math.max(...sizes), join(dirname(out), 'export-results.json'));
  const watch = await runWatchBenchmark(ctx, Math.max(...sizes), join(dirname(out), 'watch-results.json'), {
    changes: watchChanges,
  });
  figures.push(...watch.figures);
  const merged = await runMergeNoopBenchmark(ctx, Math.max(...sizes), join(dirname(out), 'merge-results.json'));
  figures.push(...merged.figures);
  figures.push(...(await runSourcesBenchmark(ctx, join(dirname(out), 'watch-sources-results.json'))).figures);
  await writeFile(out, results(figures));
  log(`wrote ${out}`);
  await runScorecardBenchmark(ctx, scorecards, join(dirname(out), 'scorecard-results.json'));
  process.stdout.write(`\n## Each figure beside its floor\n\n${renderFigures(figures)}\n`);
} finally {
  if (!process.argv.includes('--keep')) await rm(workDir, { recursive: true, force: true });
}
