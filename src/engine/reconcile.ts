/**
 * The one engine every runtime calls, as named stages (`core/outcome.ts` `STAGES`, each a file of
 * `stages/`, `(run, ctx) → run`, each a `stage.done` event with its duration): load → read-live →
 * validate → plan, then for an apply with work: lease → recheck (what the plan writes, read again
 * by identity; when it changed, load → read-live → validate → plan again in full, under the lease)
 * → approve → apply → record. It ends in one run report (`RunReport`: outcome, reason, whether
 * there is work, counts, stages, requests, how the workspace was read) that every runtime only
 * presents. Expected outcomes (invalid manifests, a refused plan) are results; unexpected failures
 * (the API refusing a read, another apply holding the lease) are thrown as typed errors for the
 * entrypoint to render.
 */
import { CortexSyncError, InterruptedError } from '../core/errors.js';
import { countOf } from '../core/plural.js';
import { type DesiredObject, type Diagnostic, hasErrors, type Plan, type ReconcileResult } from '../core/model.js';
import {
  type FailureReason,
  type PlanWork,
  type ReadReport,
  type RunReport,
  runReportOf,
  type StageName,
  type StageTiming,
} from '../core/outcome.js';
import { checkReferences } from '../core/references.js';
import { strictly } from '../core/strict.js';
import { OWNERSHIP_STORE } from '../kinds/ownership.js';
import { applyOrder } from '../kinds/order.js';
import { KIND_HANDLERS, KINDS, READ_ONLY_KINDS } from '../kinds/registry.js';
import type { AnyKindHandler, AnyReadOnlyKind } from '../kinds/types.js';
import type { OwnershipStore } from '../ownership/store.js';
import { loadManifests } from '../source/load.js';
import type { SyncConfig } from './config.js';
import type { EngineContext } from './context.js';
import { SETTINGS, settingsTable } from './settings.js';
import { LeaseHeldError, LeaseLostError } from './lease.js';
import type { LiveCacheRun } from './live-cache.js';
import type { PlanLogSink } from './plan-log.js';
import { boundAfterStop, withSignal } from './recording-client.js';
import { apply } from './stages/apply.js';
import { approve } from './stages/approve.js';
import { lease, needsLease, withLease } from './stages/lease.js';
import { load } from './stages/load.js';
import { plan } from './stages/plan.js';
import { readEverything, readLive } from './stages/read-live.js';
import { appliedRun, record, recordShrinks } from './stages/record.js';
import { recheck } from './stages/recheck.js';
import type { LiveReader, PlannedPass, Run, RunSession, Stage, StageContext } from './stages/run.js';
import { validate } from './stages/validate.js';

/** How long a write made after a stop (without the run's signal) may wait for the client. */
const STOP_GRACE_MS = 300;

export type { ReconcileResult } from '../core/model.js';
export type { RunReport } from '../core/outcome.js';

/** What `reconcile` returns: the result, and its run report (`run`), which is what runtimes read. */
export type ReconciledRun = ReconcileResult & { run: RunReport };

export interface ValidateResult {
  objects: DesiredObject[];
  files: string[];
  /** Paths where manifests would be that could not be read (`LoadResult.unreadable`). */
  unreadable: string[];
  diagnostics: Diagnostic[];
}

/** Offline: parse, validate and check references inside the repository. No key, no network. */
export const validateManifests = async (
  dir: string,
  ctx: Pick<EngineContext, 'signal'> & Partial<Pick<EngineContext, 'clock'>>,
  handlers: readonly AnyKindHandler[] = KIND_HANDLERS,
  options: { strict?: boolean; allowEmpty?: boolean } = {},
): Promise<ValidateResult> => {
  if (ctx.signal.aborted) throw new InterruptedError();
  const loaded = await loadManifests(dir, handlers, {
    ...(ctx.clock ? { now: ctx.clock.now() } : {}),
    ...(options.allowEmpty === true ? { allowEmpty: true } : {}),
  });
  const diagnostics = strictly(loaded.diagnostics, options.strict);
  if (!hasErrors(diagnostics))
    diagnostics.push(
      ...strictly(
        checkReferences({ desired: loaded.objects, handlers: [...handlers, ...READ_ONLY_KINDS] }),
        options.strict,
      ),
    );
  return { objects: loaded.objects, files: loaded.files, unreadable: loaded.unreadable, diagnostics };
};

export interface ReconcileInput {
  config: SyncConfig;
  mode: 'plan' | 'apply';
  planLog?: PlanLogSink;
  /** The managed kinds (default: the registry's, configured with `config`); ordered by what they reference. */
  handlers?: readonly AnyKindHandler[];
  /** The kinds only read (default: the registry's). */
  readOnlyKinds?: readonly AnyReadOnlyKind[];
  /** Where the engine keeps its ownership records and lease (default: the registry's store). */
  ownership?: OwnershipStore;
  /**
   * Apply mode: called with the plan that is about to be applied (one with no errors) and what it
   * would write, before anything is written; `false` ends the run as `not-approved`. The CLI shows
   * the plan and asks here.
   */
  approve?: (plan: Plan, diagnostics: readonly Diagnostic[], work: PlanWork) => Promise<boolean>;
  /** What a long-lived caller (the watcher) keeps between runs: parse results, live state, its lease. */
  session?: RunSession;
  /**
   * Called with the first plan that may be applied, before the lease or any write: a saved plan's
   * judgement (`saved-plan.ts`) throws here when it is stale; `plan --out` keeps the pass; the
   * Action's merge judges it against the reviewed plans and returns `false` to end the run there
   * (not approved: no lease taken, nothing written).
   */
  onPlanned?: (pass: PlannedPass) => Promise<boolean | void> | boolean | void;
  /**
   * A name for this apply (the Action: its merge commit and the reviewed plans), asked for once it
   * went through, and remembered in the source's lease record
   * when the apply went through cleanly (`LeaseRecord.applied`, read back with `readLease`): a
   * re-run can tell that it applied already, whatever became of its report elsewhere.
   */
  applyMark?: () => string | undefined;
  /**
   * `apply FILE` (`saved-plan.ts` `savedPlanPrecheck`): judges the manifests and, read by
   * identity, what the saved plan writes and the records, before anything else is read (throws
   * when stale). The run then goes on as any apply: `onPlanned` judges the whole plan before the
   * lease (what the file says that only a plan shows, so a stale plan writes nothing, not even
   * the lease), `approve` the plan under it.
   */
  precheck?: StageContext['precheck'];
}

export type { RunSession } from './stages/run.js';

/** Why a run that threw ended, as the run report's stable reason. */
export const failureReason = (error: unknown, aborted: boolean): FailureReason => {
  // Stopped: whatever failed on the way out, the run was interrupted (and says so).
  if (aborted || error instanceof InterruptedError) return 'interrupted';
  if (error instanceof LeaseHeldError) return 'lease-held';
  if (error instanceof LeaseLostError) return 'lease-lost';
  if (error instanceof CortexSyncError)
    return error.code === 'CONFIG'
      ? 'config'
      : error.code === 'INTERNAL'
        ? 'internal'
        : error.code === 'STALE_PLAN'
          ? 'stale-plan'
          : 'api-error';
  return 'internal';
};

/** Runs one named stage: times it and says so (`stage.done`). */
type StageRunner = <T>(stage: StageName, work: () => Promise<T>) => Promise<T>;

/** Every stage timed and said (`stage.done`), and kept for the report. */
const stageTimer = (ctx: EngineContext) => {
  const timings: StageTiming[] = [];
  let underLease = false;
  const run: StageRunner = async (stage: StageName, work) => {
    const started = ctx.clock.now();
    let ok = false;
    try {
      const value = await work();
      ok = true;
      return value;
    } finally {
      // A clock stepped back reads as no time, never as a negative duration.
      const durationMs = Math.max(0, ctx.clock.now() - started);
      timings.push({
        stage,
        durationMs,
        ...(underLease ? { underLease: true as const } : {}),
        ...(ok ? {} : { failed: true as const }),
      });
      ctx.events.emit({ type: 'stage.done', stage, durationMs, underLease, ok });
    }
  };
  return {
    run,
    timings,
    /** The stages from now on run under the apply lease. */
    leased: () => {
      underLease = true;
    },
  };
};

/** What every stage of the run reads: the context, the settings, the kinds (configured once). */
const stageContextOf = (input: ReconcileInput, ctx: EngineContext): StageContext => {
  const registry = ctx.kinds ?? KINDS;
  const handlers = applyOrder(input.handlers ?? registry.configured(input.config));
  return {
    ...ctx,
    config: input.config,
    mode: input.mode,
    handlers,
    readOnlyKinds: input.readOnlyKinds ?? registry.readOnly,
    settings: ctx.kinds === undefined ? SETTINGS : settingsTable(registry.handlers),
    store: input.ownership ?? OWNERSHIP_STORE,
    lookup: (kind) => {
      const handler = handlers.find((h) => h.kind === kind);
      if (!handler) throw new Error(`no handler for kind ${kind}`);
      return handler;
    },
    planLog: input.planLog,
    ...(input.approve ? { approve: input.approve } : {}),
    ...(input.onPlanned ? { onPlanned: input.onPlanned } : {}),
    ...(input.applyMark !== undefined ? { applyMark: input.applyMark } : {}),
    ...(input.precheck !== undefined ? { precheck: input.precheck } : {}),
    session: input.session ?? {},
    // Without a source id (not a git checkout, none configured) plan and apply still work: nothing
    // is marked, adopted or recorded, and --prune is refused by the planner.
    sourceId: input.config.sourceId || undefined,
  };
};

type Timed = (name: StageName, stage: Stage) => Stage;

/** load → read-live → validate → plan (an invalid load ends the pass). */
const readingStages = async (run: Run, ctx: StageContext, step: Timed): Promise<Run> => {
  const loaded = await step('load', load)(run, ctx);
  if (loaded.pass !== undefined) return loaded;
  if (ctx.signal.aborted) throw new InterruptedError();
  const read = await step('read-live', readLive)(loaded, ctx);
  return step('plan', plan)(await step('validate', validate)(read, ctx), ctx);
};

/** The reading stages again, from the start, with `readLive` (under the lease: every file, and in full). */
const readAgain = (run: Run, reader: LiveReader): Run => {
  const { loaded: _l, state: _s, checked: _c, pass: _p, readAgain: _r, ...rest } = run;
  return { ...rest, readLive: reader, onlyNotedChanges: false };
};

/** approve → apply → record, with the result. */
const writingStages = async (run: Run, ctx: StageContext, step: Timed): Promise<Run> => {
  if (ctx.approve !== undefined) {
    run = await step('approve', approve)(run, ctx);
    if (run.result !== undefined) return run;
  }
  run = await step('apply', apply)(run, ctx);
  if (recordShrinks(run)) run = await step('record', record)(run, ctx);
  return appliedRun(run);
};

/** A pass that ends the run (invalid, refused; a plan in plan mode): its result. */
const endedBy = (run: Run, ctx: StageContext): Run | undefined => {
  const pass = run.pass;
  if (pass === undefined) throw new Error('the reading stages end in a pass');
  if (pass.status !== 'planned') return { ...run, result: pass };
  if (ctx.mode === 'plan')
    return { ...run, result: { status: 'planned', plan: pass.plan, diagnostics: pass.diagnostics } };
  return undefined;
};

/**
 * The stages in order. A plan, an apply without a source id or without work runs the reading
 * stages once, without the lease. An apply with work takes the source's lease (or keeps the one
 * its keeper still holds: the plan was then read under it) and re-checks what the plan writes
 * under it; when that changed, the reading stages run again in full under the lease and that plan
 * is applied, with the lease's pending creates.
 */
const stagesOf = async (
  ctx: StageContext,
  timer: ReturnType<typeof stageTimer>,
  cache?: LiveCacheRun,
): Promise<Run> => {
  const step: Timed = (name, stage) => (run, stageCtx) => timer.run(name, () => stage(run, stageCtx));
  const getsBefore = ctx.client.stats().requestsByMethod.GET;
  const start: Run = {
    readLive: cache?.readLive ?? readEverything,
    onlyNotedChanges: ctx.session.onlyNotedChanges === true,
  };
  // A saved plan is judged by identity first: a stale one costs a few reads, not the workspace's.
  const precheck = ctx.precheck;
  if (precheck !== undefined && ctx.mode === 'apply') {
    const ended = await savedPlanPrecheck(start, { ...ctx, precheck }, step);
    if (ended !== undefined) return ended;
  }
  const first = await readingStages(start, ctx, step);
  if (first.pass?.status === 'planned' && (await ctx.onPlanned?.(first.pass)) === false)
    return { ...first, result: { status: 'planned', plan: first.pass.plan, diagnostics: first.pass.diagnostics } };
  const ended = endedBy(first, ctx);
  if (ended !== undefined) return ended;
  if (!needsLease(first, ctx)) return writingStages(first, ctx, step);
  const fullFirst = (cache?.read()?.path ?? 'full') === 'full';
  const gets = ctx.client.stats().requestsByMethod.GET - getsBefore;
  const leased = await step('lease', lease)(fullFirst ? { ...first, firstReadGets: gets } : first, ctx);
  timer.leased();
  return withLease(leased, ctx, async (run, underLease) => {
    if (run.lease?.kept !== true) {
      run = await step('recheck', recheck)(run, underLease);
      if (run.readAgain === true) {
        run = await readingStages(readAgain(run, cache?.readFull ?? readEverything), underLease, step);
        if (run.pass?.status !== 'planned') return { ...run, result: run.pass };
      }
    }
    return writingStages(run, underLease, step);
  });
};

/**
 * A saved plan's first judgement, before anything else is read: the manifests loaded, then the
 * saved plan's pre-check (the records and, by identity, what it writes: no read of the
 * workspace). Throws when the plan is stale; an invalid load ends the run.
 */
const savedPlanPrecheck = async (
  start: Run,
  ctx: StageContext & { precheck: NonNullable<StageContext['precheck']> },
  step: Timed,
): Promise<Run | undefined> => {
  const loaded = await step('load', load)(start, ctx);
  if (loaded.pass !== undefined) return { ...loaded, result: loaded.pass };
  const desired = loaded.loaded?.desired ?? [];
  await step('recheck', async (run) => {
    await ctx.precheck(desired, {
      client: withSignal(ctx.client, ctx.signal),
      handlers: ctx.handlers,
      lookup: ctx.lookup,
      store: ctx.store,
      sourceId: ctx.sourceId,
    });
    return run;
  })(loaded, ctx);
  return undefined;
};

/** The run report of a run that ended with a result. */
const reportOf = (
  run: Run & { result: ReconcileResult },
  facts: {
    mode: ReconcileInput['mode'];
    ctx: EngineContext;
    started: number;
    before: ReturnType<EngineContext['client']['stats']>;
  },
  timer: ReturnType<typeof stageTimer>,
  cache: LiveCacheRun | undefined,
): RunReport => {
  const { result } = run;
  const { ctx, before } = facts;
  const after = ctx.client.stats();
  const writesOf = (s: typeof before) => s.requestsSent - s.requestsByMethod.GET;
  const firstRead = cache?.read() ?? (result.status === 'invalid' ? undefined : { path: 'full' as const });
  const read: ReadReport | undefined = firstRead && {
    ...firstRead,
    ...(run.underLease !== undefined ? { underLease: run.underLease } : {}),
    ...(run.fallback !== undefined ? { fallback: run.fallback } : {}),
  };
  return runReportOf(result, {
    mode: facts.mode,
    stages: timer.timings,
    requests: { sent: after.requestsSent - before.requestsSent, writes: writesOf(after) - writesOf(before) },
    durationMs: Math.max(0, ctx.clock.now() - facts.started),
    ...(read !== undefined ? { read } : {}),
  });
};

/**
 * Stopped before any change of the plan: says whether cortex-sync's own records (the lease, the
 * record's entity type) were written on the way, rather than "nothing was written".
 */
const interruptedBy = (error: unknown, ctx: EngineContext, before: ReturnType<EngineContext['client']['stats']>) => {
  const now = ctx.client.stats();
  const wrote = now.requestsSent - now.requestsByMethod.GET - (before.requestsSent - before.requestsByMethod.GET);
  return new InterruptedError(
    wrote > 0
      ? `interrupted before any change was made (${countOf(wrote, 'write request')} went to cortex-sync's own records, such as its lease)`
      : undefined,
    { cause: error },
  );
};

/**
 * Loads, reads, plans and (in `apply` mode) applies. Aborting `ctx.signal` while reading throws
 * `InterruptedError` (nothing was written); while applying, it stops new operations and the
 * report says `interrupted` (the ownership record still reflects what was done).
 */
export const reconcile = async (input: ReconcileInput, ctx: EngineContext): Promise<ReconciledRun> => {
  const started = ctx.clock.now();
  const before = ctx.client.stats();
  const { config, mode } = input;
  ctx.events.emit({
    type: 'reconcile.started',
    mode,
    dir: config.dir,
    ...(config.sourceId ? { sourceId: config.sourceId } : {}),
  });
  let status = 'error';
  let reason: RunReport['reason'] | FailureReason = 'internal';
  const timer = stageTimer(ctx);
  // Once stopped, writes without the run's signal (the record's shrink, the lease's release) get a
  // short grace to start, never a long Retry-After pause.
  const runCtx: EngineContext = { ...ctx, client: boundAfterStop(ctx, STOP_GRACE_MS) };
  const fullRead = input.session?.fullRead;
  const cache = input.session?.liveCache?.begin({
    config,
    now: ctx.clock.now(),
    mode,
    ...(fullRead !== undefined ? { full: fullRead } : {}),
  });
  try {
    const run = await stagesOf(stageContextOf(input, runCtx), timer, cache);
    const result = run.result;
    if (result === undefined) throw new Error('the stages end in a result');
    cache?.settle(result, run.applied);
    const report = reportOf({ ...run, result }, { mode, ctx, started, before }, timer, cache);
    status = report.outcome === 'interrupted' ? 'interrupted' : result.status;
    reason = report.reason;
    return { ...result, run: report };
  } catch (error) {
    cache?.fail();
    reason = failureReason(error, ctx.signal.aborted);
    if (ctx.signal.aborted || error instanceof InterruptedError) {
      status = 'interrupted';
      throw interruptedBy(error, ctx, before);
    }
    throw error;
  } finally {
    ctx.events.emit({ type: 'reconcile.done', status, reason, durationMs: ctx.clock.now() - started });
  }
};
