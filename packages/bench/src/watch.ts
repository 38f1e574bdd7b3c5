/**
 * The watcher's benchmark (`npm run bench`, after the others): local-directory mode on a
 * generated repository, against the emulator in its own process.
 *
 * - one file changed → applied, median of 100, on N entities (goals: ≤ 2 s plus API time, i.e. the
 *   time outside the run's API span; a median ≤ 1.0 s and ≤ 5 requests), with how each run read
 *   the workspace, and one more change once the lease kept after an apply was let go; memory after
 *   the first sync and every 10 changes (RSS, and the heap after a full collection at both ends:
 *   after 100 changes within 1.2× of after the first sync);
 * - 500 reconcile cycles in one process → heap growth after GC from cycle 10 to 500 (goal < 5 MB;
 *   on a repository of 200 entities: a leak per cycle shows at any size, and 500 cycles of 10,000
 *   would take an hour);
 * - idle CPU over 10 s with nothing changing (goal < 1 % of a core).
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { median } from './analysis.js';
import type { Figure } from './figures.js';
import { generateRepository } from './generate.js';
import { startEmulatorProcess } from './processes.js';
import type { BenchContext } from './scenarios.js';

/** The watcher process's memory, MB: RSS as sampled; the rest after a full collection when `collected`. */
export interface MemorySample {
  changes: number;
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  arrayBuffersMb: number;
  rssAfterGcMb: number;
  collected: boolean;
}

interface ChangeChild {
  firstSyncMs: number;
  samples: {
    wallMs: number;
    runMs: number;
    loadMs: number;
    apiSpanMs: number;
    updates: number;
    /** API requests of the change's run (every method), and its GETs. */
    requests: number;
    gets: number;
    operations: Record<string, number>;
    /** Milliseconds per stage of the run (`*`: under the lease). */
    stages: Record<string, number>;
    /** How the run read the workspace (`incremental`, or `full` and why). */
    readPath?: string;
    /** RSS right after the change was stored. */
    rssMb: number;
  }[];
  /** After the first sync (`changes: 0`), then every 10 changes. */
  memoryAfter: MemorySample[];
  /** One more change once the lease kept after the last apply was let go (it is taken again). */
  afterLinger: ChangeChild['samples'][number];
  idleCpuShare: number;
  idleWallMs: number;
  runsDuringIdle: number;
}

interface CyclesChild {
  cycles: number;
  failed: number;
  samples: { cycle: number; heapMb: number }[];
}

const runWatchChild = <T>(args: string[], env: NodeJS.ProcessEnv, nodeFlags: string[] = []): Promise<T> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, join(import.meta.dirname, 'watch-child.js'), ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('exit', (code) => {
      const text = Buffer.concat(out).toString('utf8').trim();
      if (code !== 0)
        reject(new Error(`watch-child exited ${code}: ${Buffer.concat(err).toString('utf8').slice(-2000)}`));
      else resolve(JSON.parse(text.split('\n').pop() ?? '') as T);
    });
  });

export interface WatchBenchResult {
  entities: number;
  change: {
    medianWallMs: number;
    medianApiSpanMs: number;
    medianOutsideApiMs: number;
    medianLoadMs: number;
    /** API requests of a change's run, all methods and GETs (medians). */
    medianRequests: number;
    medianGets: number;
    /** Changes whose run read only what they touched. */
    incrementalRuns: number;
    runs: ChangeChild['samples'];
    /** A change once the kept lease was let go (`--lease-linger`): it takes the lease again. */
    afterLinger: ChangeChild['samples'][number];
    allApplied: boolean;
  };
  /** After the first sync (`changes: 0`), then every 10 changes. */
  memory: MemorySample[];
  firstSyncMs: number;
  idleCpuPercent: number;
  cycles: {
    runs: number;
    failed: number;
    repositoryEntities: number;
    heapMb: CyclesChild['samples'];
    growthMb: number;
  };
  goals: { id: string; target: string; value: string; met: boolean }[];
  /** This benchmark's rows of the figures table (`figures.ts`). */
  figures: Figure[];
}

export const runWatchBenchmark = async (
  ctx: BenchContext,
  entities: number,
  outFile: string,
  options: { changes?: number; cycles?: number; cycleEntities?: number; snapshotDir?: string } = {},
): Promise<WatchBenchResult> => {
  const cycleEntities = options.cycleEntities ?? 200;
  /** Each scenario gets a fresh emulator: the two repositories share tags under different source ids. */
  const withEmulator = async <T>(fn: (env: NodeJS.ProcessEnv) => Promise<T>): Promise<T> => {
    const emulator = await startEmulatorProcess({ apiKey: ctx.apiKey, rateLimit: 0 });
    try {
      return await fn({
        CORTEX_BASE_URL: emulator.url,
        CORTEX_API_KEY: ctx.apiKey,
        CORTEX_RATE_LIMIT: '10000000',
        CORTEX_SYNC_CONCURRENCY: '16',
      });
    } finally {
      await emulator.stop();
    }
  };
  const bigDir = join(ctx.workDir, `watch-${entities}`);
  await generateRepository(bigDir, { entities, sourceId: 'bench-watch' });
  const changes = options.changes ?? 100;
  ctx.log(`watch: ${entities} entities, first sync, then ${changes} one-file changes and 10 s idle`);
  const change = await withEmulator((env) =>
    runWatchChild<ChangeChild>(
      [
        ...['--dir', bigDir, '--scenario', 'change', '--changes', String(changes), '--memory-every', '10'],
        ...(options.snapshotDir ? ['--snapshot-dir', options.snapshotDir] : []),
      ],
      env,
      // For the heap after a full collection at both ends; RSS is sampled before it.
      ['--expose-gc'],
    ),
  );
  const smallDir = join(ctx.workDir, `watch-${cycleEntities}`);
  await generateRepository(smallDir, { entities: cycleEntities, sourceId: 'bench-watch' });
  ctx.log(`watch: ${options.cycles ?? 500} reconcile cycles of ${cycleEntities} entities in one process`);
  const cycles = await withEmulator((env) =>
    runWatchChild<CyclesChild>(
      ['--dir', smallDir, '--scenario', 'cycles', '--cycles', String(options.cycles ?? 500)],
      env,
      ['--expose-gc'],
    ),
  );
  const wall = median(change.samples.map((s) => s.wallMs));
  const apiSpan = median(change.samples.map((s) => s.apiSpanMs));
  const outside = median(change.samples.map((s) => s.wallMs - s.apiSpanMs));
  const firstHeap = cycles.samples[0]?.heapMb ?? 0;
  const lastHeap = cycles.samples[cycles.samples.length - 1]?.heapMb ?? 0;
  const idle = change.idleCpuShare * 100;
  const n = entities.toLocaleString('en-US');
  const firstMemory = change.memoryAfter[0];
  const lastMemory = change.memoryAfter[change.memoryAfter.length - 1];
  // RSS right after a run depends on whether the collector has run since: the last ten, as a median.
  const lastTen = change.samples.map((sample, i) => ({ changes: i + 1, rssMb: sample.rssMb })).slice(-10);
  const rssLastTen = median(lastTen.map((sample) => sample.rssMb));
  const result: WatchBenchResult = {
    entities,
    change: {
      medianWallMs: wall,
      medianApiSpanMs: apiSpan,
      medianOutsideApiMs: outside,
      medianLoadMs: median(change.samples.map((s) => s.loadMs)),
      medianRequests: median(change.samples.map((s) => s.requests)),
      medianGets: median(change.samples.map((s) => s.gets)),
      incrementalRuns: change.samples.filter((s) => s.readPath === 'incremental').length,
      afterLinger: change.afterLinger,
      runs: change.samples,
      allApplied: change.samples.every((s) => s.updates === 1),
    },
    memory: change.memoryAfter,
    firstSyncMs: change.firstSyncMs,
    idleCpuPercent: idle,
    cycles: {
      runs: cycles.cycles,
      failed: cycles.failed,
      repositoryEntities: cycleEntities,
      heapMb: cycles.samples,
      growthMb: lastHeap - firstHeap,
    },
    goals: [
      {
        id: 'watch-change',
        target: '≤ 2 s plus API time',
        value: `${(outside / 1000).toFixed(2)} s outside ${(apiSpan / 1000).toFixed(2)} s of API (${(wall / 1000).toFixed(2)} s in all)`,
        met: outside <= 2000,
      },
      {
        id: 'watch-heap',
        target: '< 5 MB growth over 500 cycles',
        value: `${(lastHeap - firstHeap).toFixed(2)} MB (${firstHeap.toFixed(1)} → ${lastHeap.toFixed(1)} MB)`,
        met: lastHeap - firstHeap < 5,
      },
      {
        id: 'watch-change-median',
        target: 'one-file change stored in a median ≤ 1.0 s',
        value: `${(wall / 1000).toFixed(2)} s (after the kept lease was let go: ${(change.afterLinger.wallMs / 1000).toFixed(2)} s)`,
        met: wall <= 1000,
      },
      {
        id: 'watch-change-requests',
        target: 'one-file change: ≤ 5 requests (median)',
        value: `${median(change.samples.map((s) => s.requests))} requests, ${median(change.samples.map((s) => s.gets))} GET; ${change.samples.filter((s) => s.readPath === 'incremental').length} of ${change.samples.length} runs incremental (after the lease was let go: ${change.afterLinger.requests})`,
        met: median(change.samples.map((s) => s.requests)) <= 5,
      },
      { id: 'watch-idle-cpu', target: '< 1 % of a core', value: `${idle.toFixed(2)} %`, met: idle < 1 },
    ],
    figures: [
      {
        id: 'watch-change-wall',
        figure: `watcher, ${n} entities: one file changed → stored, wall (median of ${change.samples.length})`,
        value: wall / 1000,
        unit: 's',
        target: { atMost: 1 },
      },
      {
        id: 'watch-change-requests',
        figure: `watcher, ${n} entities: requests of a one-file change (median)`,
        value: median(change.samples.map((s) => s.requests)),
        unit: 'requests',
        floor: { value: 2, what: '1 read + 1 write' },
        target: { atMost: 5 },
      },
      ...(firstMemory && lastMemory && lastMemory.changes > 0
        ? ([
            {
              id: 'watch-rss-growth',
              figure: `watcher, ${n} entities: RSS after changes ${lastTen[0]?.changes}–${lastMemory.changes} (median) ÷ after the first sync (${firstMemory.rssMb.toFixed(0)} → ${rssLastTen.toFixed(0)} MB)`,
              value: rssLastTen / firstMemory.rssMb,
              unit: '×',
              floor: { value: 1, what: 'no growth' },
              target: { atMost: 1.2 },
            },
            {
              id: 'watch-heap-growth',
              figure: `watcher, ${n} entities: heap used after a full GC, after ${lastMemory.changes} changes ÷ after the first sync (${firstMemory.heapUsedMb.toFixed(1)} → ${lastMemory.heapUsedMb.toFixed(1)} MB)`,
              value: lastMemory.heapUsedMb / firstMemory.heapUsedMb,
              unit: '×',
              floor: { value: 1, what: 'no growth' },
              target: { atMost: 1.2 },
            },
          ] satisfies Figure[])
        : []),
    ],
  };
  for (const goal of result.goals)
    ctx.log(`watch goal ${goal.id}: ${goal.value} (${goal.target}) ${goal.met ? 'met' : 'MISSED'}`);
  await writeFile(outFile, `${JSON.stringify(result, null, 2)}\n`);
  ctx.log(`wrote ${outFile}`);
  return result;
};
