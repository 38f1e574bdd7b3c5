/**
 * The benchmark of one watcher of many sources (`watch --config`), against the emulator in its
 * own process, each scenario in a measuring child (`watch-sources-child.ts`):
 *
 * - fleet: 20 sources of 500 entities each (local directories) in one process: the first sync of
 *   all, then one-file changes a source after another; RSS after every change and the heap after
 *   a full collection every 10 (neither may grow: ≤ 1.2× after the first sync), and the CPU while
 *   idle once converged (< 1 % of a core);
 * - fairness: a source of 5,000 entities to create beside a source of one file, the client at its
 *   default rate (1,000 requests a minute): the small source's file changed every 10 s while the
 *   big source's run loads, plans and writes; each change applied within 10 s (the slowest
 *   counts).
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { median } from './analysis.js';
import type { Figure } from './figures.js';
import { startEmulatorProcess } from './processes.js';
import type { BenchContext } from './scenarios.js';
import { writeOneServiceRepository, writeSourceRepository } from './sources-repos.js';

interface MemoryPoint {
  changes: number;
  atS: number;
  rssMb: number;
  heapUsedMb: number;
  externalMb: number;
  collected: boolean;
}

interface FleetChild {
  sources: number;
  firstSyncMs: number;
  samples: { source: string; wallMs: number; runMs: number; read: string; rssMb: number }[];
  memoryAfter: MemoryPoint[];
  idleCpuShare: number;
  idleWallMs: number;
  logLinesDuringIdle: number;
  errors: number;
}

interface FairnessChild {
  smallFirstRunMs: number;
  smallFirstResult: string;
  samples: { atS: number; wallMs: number; runMs: number; read: string; bigRunning: boolean }[];
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  /** When the big source's run ended (`interrupted`: by the stop after the last change). */
  bigRunEnded?: { atS: number; result: string };
  errors: number;
}

export interface SourcesBenchOptions {
  sources?: number;
  entitiesPerSource?: number;
  changes?: number;
  bigEntities?: number;
  probes?: number;
  /** One scenario only (the other's result is absent). */
  only?: 'fleet' | 'fairness';
}

export interface SourcesBenchResult {
  fleet?: FleetChild & { entitiesPerSource: number };
  fairness?: FairnessChild & { bigEntities: number };
  figures: Figure[];
}

const runChild = <T>(args: string[], env: NodeJS.ProcessEnv): Promise<T> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', join(import.meta.dirname, 'watch-sources-child.js'), ...args],
      { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('exit', (code) => {
      const text = Buffer.concat(out).toString('utf8').trim();
      if (code !== 0)
        reject(new Error(`watch-sources-child exited ${code}: ${Buffer.concat(err).toString('utf8').slice(-2000)}`));
      else resolve(JSON.parse(text.split('\n').pop() ?? '') as T);
    });
  });

/** Runs `fn` with a fresh emulator (no rate limit of its own: the client keeps to its rate). */
const withEmulator = async <T>(
  ctx: BenchContext,
  env: NodeJS.ProcessEnv,
  fn: (env: NodeJS.ProcessEnv) => Promise<T>,
) => {
  const emulator = await startEmulatorProcess({ apiKey: ctx.apiKey, rateLimit: 0 });
  try {
    return await fn({
      CORTEX_BASE_URL: emulator.url,
      CORTEX_API_KEY: ctx.apiKey,
      ...env,
    });
  } finally {
    await emulator.stop();
  }
};

const sourcesYaml = (names: readonly string[]): string =>
  `sources:\n${names.map((name) => `  - {name: ${name}, dir: ${name}}\n`).join('')}`;

const runFleet = async (ctx: BenchContext, sources: number, entities: number, changes: number) => {
  const root = join(ctx.workDir, 'sources-fleet');
  const names = Array.from({ length: sources }, (_, i) => `s${String(i).padStart(2, '0')}`);
  for (const name of names)
    await writeSourceRepository(join(root, name), { entities, prefix: `${name}-`, sourceId: `bench-${name}` });
  await writeFile(join(root, 'sources.yaml'), sourcesYaml(names));
  ctx.log(`watch sources: ${sources} sources of ${entities} entities, first sync, ${changes} changes, 10 s idle`);
  // The rate of the API is not what this scenario measures: 20 first syncs at 1,000 a minute would take 10 minutes.
  return withEmulator(ctx, { CORTEX_RATE_LIMIT: '100000' }, (env) =>
    runChild<FleetChild>(
      ['--root', root, '--scenario', 'fleet', '--sources', String(sources), '--changes', String(changes)],
      env,
    ),
  );
};

const runFairness = async (ctx: BenchContext, bigEntities: number, probes: number) => {
  const root = join(ctx.workDir, 'sources-fairness');
  await writeSourceRepository(join(root, 'big'), { entities: bigEntities, prefix: 'big-', sourceId: 'bench-big' });
  await writeOneServiceRepository(join(root, 'small'), 'small-', 'bench-small');
  await writeFile(join(root, 'sources.yaml'), sourcesYaml(['big', 'small']));
  ctx.log(`watch sources: fairness, ${bigEntities} entities to create beside one file changed every 10 s`);
  return withEmulator(ctx, {}, (env) =>
    runChild<FairnessChild>(['--root', root, '--scenario', 'fairness', '--probes', String(probes)], env),
  );
};

/**
 * Growth is judged from the end of the first round (every source changed once), not from the first
 * sync: a source's first change reads the workspace in full (the other sources' records changed
 * since its first sync), and from then on each source keeps the whole workspace as that read saw
 * it (`LiveCache`), where its first sync saw only the sources applied before it.
 */
const fleetFigures = (fleet: FleetChild, entities: number): Figure[] => {
  const round = fleet.memoryAfter.find((m) => m.changes === fleet.sources);
  const last = fleet.memoryAfter[fleet.memoryAfter.length - 1];
  const where = `watcher, ${fleet.sources} sources × ${entities} entities`;
  const rss = (from: number, to?: number) => median(fleet.samples.slice(from, to).map((s) => s.rssMb));
  const figures: Figure[] = [
    {
      id: 'sources-idle-cpu',
      figure: `${where}: CPU while idle once converged (${(fleet.idleWallMs / 1000).toFixed(0)} s)`,
      value: fleet.idleCpuShare * 100,
      unit: '%',
      floor: { value: 0, what: 'nothing to do' },
      target: { atMost: 1 },
    },
    {
      id: 'sources-change-wall',
      figure: `${where}: one file changed → stored, wall (median of ${fleet.samples.length}; the apply lease taken again each time)`,
      value: median(fleet.samples.map((s) => s.wallMs)) / 1000,
      unit: 's',
    },
  ];
  if (round && last && last.changes > round.changes) {
    const before = rss(round.changes - 10, round.changes);
    const after = rss(-10);
    figures.push(
      {
        id: 'sources-rss-growth',
        figure: `${where}: RSS after changes ${last.changes - 9}–${last.changes} ÷ after changes ${round.changes - 9}–${round.changes} (medians, ${before.toFixed(0)} → ${after.toFixed(0)} MB)`,
        value: after / before,
        unit: '×',
        floor: { value: 1, what: 'no growth' },
        target: { atMost: 1.2 },
      },
      {
        id: 'sources-heap-growth',
        figure: `${where}: heap used after a full GC, after ${last.changes} changes ÷ after ${round.changes} (${round.heapUsedMb.toFixed(1)} → ${last.heapUsedMb.toFixed(1)} MB)`,
        value: last.heapUsedMb / round.heapUsedMb,
        unit: '×',
        floor: { value: 1, what: 'no growth' },
        target: { atMost: 1.2 },
      },
    );
  }
  return figures;
};

const fairnessFigures = (fairness: FairnessChild, bigEntities: number): Figure[] => {
  const during = fairness.samples.filter((s) => s.bigRunning);
  const big = `watcher, a source of ${bigEntities.toLocaleString('en-US')} entities to create beside a source of one file`;
  return [
    {
      id: 'sources-fairness',
      figure: `${big}: the small source's change applied, slowest of ${during.length} changes during the big source's run`,
      value: Math.max(0, ...during.map((s) => s.wallMs)) / 1000,
      unit: 's',
      target: { atMost: 10 },
    },
    {
      id: 'sources-fairness-first-run',
      figure: `${big}: the small source's first run applied, from the start, beside the big source's load and plan`,
      value: fairness.smallFirstRunMs / 1000,
      unit: 's',
      target: { atMost: 10 },
    },
  ];
};

export const runSourcesBenchmark = async (
  ctx: BenchContext,
  outFile: string,
  options: SourcesBenchOptions = {},
): Promise<SourcesBenchResult> => {
  const sources = options.sources ?? 20;
  const entitiesPerSource = options.entitiesPerSource ?? 500;
  const bigEntities = options.bigEntities ?? 5000;
  const fleet =
    options.only === 'fairness' ? undefined : await runFleet(ctx, sources, entitiesPerSource, options.changes ?? 100);
  const fairness = options.only === 'fleet' ? undefined : await runFairness(ctx, bigEntities, options.probes ?? 6);
  const result: SourcesBenchResult = {
    ...(fleet ? { fleet: { ...fleet, entitiesPerSource } } : {}),
    ...(fairness ? { fairness: { ...fairness, bigEntities } } : {}),
    figures: [
      ...(fleet ? fleetFigures(fleet, entitiesPerSource) : []),
      ...(fairness ? fairnessFigures(fairness, bigEntities) : []),
    ],
  };
  await writeFile(outFile, `${JSON.stringify(result, null, 2)}\n`);
  ctx.log(`wrote ${outFile}`);
  return result;
};
