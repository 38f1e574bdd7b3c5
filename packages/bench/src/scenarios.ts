/**
 * The benchmark's scenarios, each against an emulator in its own process: no-op plans (with the
 * parse floor and the naive baseline), apply throughput under a rate limit, and memory across
 * repeated plans.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ApplyLogFigures, applyLogFigures, median, naiveRequests, requestBudget, requestsOf } from './analysis.js';
import { generateRepository, type RepositoryShape } from './generate.js';
import { type EmulatorProcess, runChild, startEmulatorProcess } from './processes.js';

export interface BenchContext {
  workDir: string;
  apiKey: string;
  /** Measurements per figure (the median is reported). */
  repeats: number;
  log: (line: string) => void;
}

interface ClientStatsJson {
  requestsSent: number;
  rateLimited: number;
  retries: number;
  requestsStartedDuringPause: number;
  pausedMs: number;
}

interface PlanChild {
  wallMs: number;
  cpuMs: number;
  status: string;
  summary?: { create: number; update: number; delete: number; archive: number; noop: number };
  errors: string[];
  requests: number;
  stats: ClientStatsJson;
  byOperation: Record<string, number>;
  processWallMs: number;
  processCpuMs: number;
  maxRssMb: number;
}

interface FloorChild {
  wallMs: number;
  cpuMs: number;
  objects: number;
  files: number;
  errors: number;
  processWallMs: number;
  processCpuMs: number;
  maxRssMb: number;
}

interface ApplyChild {
  wallMs: number;
  cpuMs: number;
  status: string;
  summary?: PlanChild['summary'];
  errors: string[];
  writeRequests: number;
  outcomes: { ok: number; failed: number; skipped: number };
  failures: string[];
  stats: ClientStatsJson;
  byOperation: Record<string, number>;
}

interface MemoryChild {
  runs: number;
  heapMb: number[];
  wallMs: number[];
  changes: number[];
  requests: number;
}

/** Medians of several runs of one measurement, and every run. */
export interface Measured {
  wallMs: number;
  cpuMs: number;
  processWallMs: number;
  maxRssMb: number;
  runs: { wallMs: number; cpuMs: number; processWallMs: number; maxRssMb: number }[];
}

const summarize = (
  runs: readonly { wallMs: number; cpuMs: number; processWallMs: number; maxRssMb: number }[],
): Measured => ({
  wallMs: median(runs.map((r) => r.wallMs)),
  cpuMs: median(runs.map((r) => r.cpuMs)),
  processWallMs: median(runs.map((r) => r.processWallMs)),
  maxRssMb: Math.max(...runs.map((r) => r.maxRssMb)),
  runs: runs.map(({ wallMs, cpuMs, processWallMs, maxRssMb }) => ({ wallMs, cpuMs, processWallMs, maxRssMb })),
});

const changesOf = (summary: PlanChild['summary']): number =>
  summary ? summary.create + summary.update + summary.delete + summary.archive : -1;

const setupApply = async (ctx: BenchContext, emulator: EmulatorProcess, dir: string): Promise<ApplyChild> => {
  const result = await runChild<ApplyChild>({
    script: 'run-apply.js',
    args: ['--dir', dir, '--rpm', '10000000', '--concurrency', '16'],
    emulator,
    apiKey: ctx.apiKey,
  });
  if (result.status !== 'applied' || result.outcomes.failed > 0 || result.outcomes.skipped > 0) {
    throw new Error(`the set-up apply did not succeed: ${JSON.stringify({ ...result, byOperation: undefined })}`);
  }
  return result;
};

export interface NoopPlanResult {
  entities: number;
  shape: RepositoryShape;
  setupMs: number;
  /** The plan as `cortex-sync plan` runs it (client at 1,000 requests/minute, concurrency 8). */
  plan: Measured & {
    requests: number;
    requestsInEmulatorLog: number;
    changes: number;
    byOperation: Record<string, number>;
    descriptorPages: number;
  };
  /** The same plan with the client's own rate limit lifted: what the rest costs. */
  planUnthrottled: Measured;
  /** `loadManifests` alone on the same files. */
  floor: Measured & { objects: number; files: number };
  /** Median of plan wall / floor wall over the alternating runs. */
  planToFloor: number;
  budget: ReturnType<typeof requestBudget>;
  naive: { requests: number; minutes: number };
  emulatorLogMs: { medianDurationMs: number; maxDurationMs: number };
  /**
   * `cortex-sync apply` after one entity's title changed: its requests (the emulator's log: reads,
   * the lease, the re-check under it, the write) beside the no-op plan's, and their ratio.
   */
  oneChange: {
    requests: number;
    gets: number;
    writes: number;
    wallMs: number;
    noopPlanRequests: number;
    ratioToNoopPlan: number;
    byOperation: Record<string, number>;
  };
}

/** One entity's title changed, then `cortex-sync apply`: what it sends (see `NoopPlanResult.oneChange`). */
const measureOneChange = async (
  ctx: BenchContext,
  emulator: EmulatorProcess,
  dir: string,
  noopPlanRequests: number,
): Promise<NoopPlanResult['oneChange']> => {
  const file = join(dir, '.cortex', 'catalog', 'svc-00050.yaml');
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/^ {2}title: .*$/m, '  title: Service 50 (one change)'));
  const before = (await emulator.requests()).length;
  const applied = await runChild<ApplyChild>({
    script: 'run-apply.js',
    args: ['--dir', dir, '--rpm', '10000000', '--concurrency', '16'],
    emulator,
    apiKey: ctx.apiKey,
  });
  const log = (await emulator.requests()).slice(before);
  if (applied.status !== 'applied' || applied.summary?.update !== 1 || applied.outcomes.failed > 0)
    throw new Error(`the one-change apply did not update one entity: ${JSON.stringify(applied.summary)}`);
  const gets = log.filter((r) => r.method === 'GET').length;
  return {
    requests: log.length,
    gets,
    writes: log.length - gets,
    wallMs: applied.wallMs,
    noopPlanRequests,
    ratioToNoopPlan: log.length / noopPlanRequests,
    byOperation: applied.byOperation,
  };
};

/** Generates N entities, brings the emulator in sync, then measures no-op plans and the floor. */
export const measureNoopPlan = async (
  ctx: BenchContext,
  entities: number,
  after?: (emulator: EmulatorProcess, dir: string) => Promise<void>,
): Promise<NoopPlanResult> => {
  const dir = join(ctx.workDir, `noop-${entities}`);
  const shape = await generateRepository(dir, { entities });
  const emulator = await startEmulatorProcess({ apiKey: ctx.apiKey, rateLimit: 0 });
  try {
    ctx.log(`no-op plan, ${entities} entities: set-up apply of ${shape.files} files`);
    const started = performance.now();
    await setupApply(ctx, emulator, dir);
    const setupMs = performance.now() - started;

    // Plans and floors alternate, so that both see the same load on a shared machine.
    const plans: PlanChild[] = [];
    const floors: FloorChild[] = [];
    const logCounts: number[] = [];
    const durations: number[] = [];
    for (let i = 0; i < ctx.repeats; i++) {
      ctx.log(`no-op plan, ${entities} entities: plan ${i + 1}/${ctx.repeats}`);
      const before = (await emulator.requests()).length;
      const plan = await runChild<PlanChild>({
        script: 'run-plan.js',
        args: ['plan', '--dir', dir],
        emulator,
        apiKey: ctx.apiKey,
      });
      const log = (await emulator.requests()).slice(before);
      if (plan.status !== 'planned' || changesOf(plan.summary) !== 0) {
        throw new Error(
          `the plan is not a no-op: ${plan.status} ${JSON.stringify(plan.summary)} ${plan.errors.join('; ')}`,
        );
      }
      plans.push(plan);
      logCounts.push(log.length);
      durations.push(...log.map((r) => r.durationMs));
      ctx.log(`no-op plan, ${entities} entities: parse floor ${i + 1}/${ctx.repeats}`);
      floors.push(
        await runChild<FloorChild>({
          script: 'run-plan.js',
          args: ['floor', '--dir', dir],
          emulator,
          apiKey: ctx.apiKey,
        }),
      );
    }
    const unthrottled: PlanChild[] = [];
    ctx.log(`no-op plan, ${entities} entities: plan without the client's rate limit`);
    unthrottled.push(
      await runChild<PlanChild>({
        script: 'run-plan.js',
        args: ['plan', '--dir', dir, '--rpm', '10000000'],
        emulator,
        apiKey: ctx.apiKey,
      }),
    );
    ctx.log(`apply of one changed entity among ${entities}`);
    const oneChange = await measureOneChange(ctx, emulator, dir, Math.max(...logCounts));
    if (after) await after(emulator, dir);

    const first = plans[0] as PlanChild;
    const naive = naiveRequests(shape);
    return {
      entities,
      shape,
      setupMs,
      plan: {
        ...summarize(plans),
        requests: Math.max(...plans.map((p) => p.requests)),
        requestsInEmulatorLog: Math.max(...logCounts),
        changes: changesOf(first.summary),
        byOperation: first.byOperation,
        descriptorPages: requestsOf(first.byOperation, 'list entity descriptors'),
      },
      planUnthrottled: summarize(unthrottled),
      floor: { ...summarize(floors), objects: floors[0]?.objects ?? 0, files: floors[0]?.files ?? 0 },
      planToFloor: median(plans.map((p, i) => p.wallMs / (floors[i]?.wallMs ?? Number.NaN))),
      budget: requestBudget(shape),
      naive: { requests: naive, minutes: naive / 1000 },
      emulatorLogMs: { medianDurationMs: median(durations), maxDurationMs: Math.max(...durations) },
      oneChange,
    };
  } finally {
    await emulator.stop();
  }
};

export interface MemoryResult {
  entities: number;
  runs: number;
  heapMb: number[];
  wallMs: number[];
  /** Last sample minus the first (after plan 1). */
  growthMb: number;
  growthShare: number;
  /** Last sample minus the middle one: growth once the code is warm (JIT, inline caches). */
  secondHalfGrowthMb: number;
  allNoop: boolean;
}

/** Consecutive no-op plans in one process (the watcher's loop), heap sampled after a full GC. */
export const measureMemory = async (
  ctx: BenchContext,
  emulator: EmulatorProcess,
  dir: string,
  entities: number,
  runs: number,
): Promise<MemoryResult> => {
  ctx.log(`memory: ${runs} consecutive no-op plans of ${entities} entities in one process`);
  const result = await runChild<MemoryChild>({
    script: 'run-plan.js',
    args: ['memory', '--dir', dir, '--runs', String(runs), '--rpm', '10000000'],
    nodeFlags: ['--expose-gc'],
    emulator,
    apiKey: ctx.apiKey,
  });
  const firstHeap = result.heapMb[0] ?? 0;
  const lastHeap = result.heapMb[result.heapMb.length - 1] ?? 0;
  return {
    entities,
    runs: result.runs,
    heapMb: result.heapMb,
    wallMs: result.wallMs,
    growthMb: lastHeap - firstHeap,
    growthShare: firstHeap > 0 ? (lastHeap - firstHeap) / firstHeap : 0,
    secondHalfGrowthMb: lastHeap - (result.heapMb[Math.floor((result.heapMb.length - 1) / 2)] ?? firstHeap),
    allNoop: result.changes.every((c) => c === 0),
  };
};

export interface ApplyResult {
  label: string;
  entities: number;
  changedEntities: number;
  emulatorPerMinute: number;
  emulatorBurst: number;
  clientPerMinute: number;
  concurrency: number;
  wallMs: number;
  outcomes: ApplyChild['outcomes'];
  failures: string[];
  writeRequests: number;
  client: ClientStatsJson;
  log: ApplyLogFigures;
  /** Writes per minute over the write phase, as a share of the emulator's budget. */
  shareOfBudget: number;
}

export interface ApplyScenario {
  label: string;
  clientPerMinute: number;
}

/**
 * N entities brought in sync without a limit, then every entity changed and applied against the
 * emulator restarted (same data) with a rate limit, once per scenario (each changes every entity again).
 */
export const measureApply = async (
  ctx: BenchContext,
  entities: number,
  budget: { perMinute: number; burst: number },
  scenarios: readonly ApplyScenario[],
  concurrency: number,
): Promise<ApplyResult[]> => {
  const dir = join(ctx.workDir, `apply-${entities}`);
  const dataFile = join(ctx.workDir, `apply-${entities}-state.json`);
  await generateRepository(dir, { entities, revision: 0 });
  ctx.log(`apply: set-up of ${entities} entities`);
  const unlimited = await startEmulatorProcess({ apiKey: ctx.apiKey, rateLimit: 0, dataFile });
  try {
    await setupApply(ctx, unlimited, dir);
  } finally {
    await unlimited.stop();
  }
  const results: ApplyResult[] = [];
  for (const [index, scenario] of scenarios.entries()) {
    const shape = await generateRepository(dir, { entities, revision: index + 1 });
    const emulator = await startEmulatorProcess({
      apiKey: ctx.apiKey,
      rateLimit: budget.perMinute,
      burst: budget.burst,
      dataFile,
    });
    try {
      ctx.log(`apply: ${scenario.label}`);
      const run = await runChild<ApplyChild>({
        script: 'run-apply.js',
        args: ['--dir', dir, '--rpm', String(scenario.clientPerMinute), '--concurrency', String(concurrency)],
        emulator,
        apiKey: ctx.apiKey,
      });
      const log = applyLogFigures(await emulator.requests(), budget.perMinute);
      results.push({
        label: scenario.label,
        entities,
        changedEntities: run.summary?.update ?? 0,
        emulatorPerMinute: budget.perMinute,
        emulatorBurst: budget.burst,
        clientPerMinute: scenario.clientPerMinute,
        concurrency,
        wallMs: run.wallMs,
        outcomes: run.outcomes,
        failures: run.failures,
        writeRequests: run.writeRequests,
        client: run.stats,
        log,
        shareOfBudget: log.writesPerMinute / budget.perMinute,
      });
      if (run.status !== 'applied') throw new Error(`apply ended ${run.status}: ${run.errors.join('; ')}`);
      if ((run.summary?.update ?? 0) < shape.entities) {
        throw new Error(`expected ${shape.entities} changed entities, the plan had ${JSON.stringify(run.summary)}`);
      }
    } finally {
      await emulator.stop();
    }
  }
  return results;
};
