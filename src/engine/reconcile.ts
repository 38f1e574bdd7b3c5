/**
 * The one engine every runtime calls, as named stages (`core/outcome.ts` `STAGES`, each a
 * `stage.done` event with its duration): load → read-live → validate → plan (`plan-pass.ts`), then
 * for an apply with work: lease → recheck (what the plan writes, read again by identity; when it
 * changed, load → read-live → validate → plan again in full, under the lease) → approve → apply →
 * record (`apply-pass.ts`). It ends in one run report (`RunReport`: outcome, reason, whether there
 * is work, counts, stages, requests, how the workspace was read) that every runtime only
 * presents. Expected outcomes (invalid manifests, a refused plan) are results; unexpected failures
 * (the API refusing a read, another apply holding the lease) are thrown as typed errors for the
 * entrypoint to render.
 */
import { CortexSyncError, InterruptedError } from '../core/errors.js';
import { countOf } from '../core/plural.js';
import { type DesiredObject, type Diagnostic, hasErrors, type Plan, type ReconcileResult } from '../core/model.js';
import {
  type FailureReason,
  type FullReadReason,
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
import { KIND_HANDLERS, kindsFor, READ_ONLY_KINDS } from '../kinds/registry.js';
import type { AnyKindHandler, AnyReadOnlyKind } from '../kinds/types.js';
import type { OwnershipStore } from '../ownership/store.js';
import { loadManifests } from '../source/load.js';
import type { ManifestCache } from '../source/manifest-cache.js';
import { applyPass } from './apply-pass.js';
import type { SyncConfig } from './config.js';
import type { EngineContext } from './context.js';
import { fetchLiveState } from './fetch-live.js';
import { LeaseHeldError, LeaseLostError, leaseSettingsFor, newHolderName, withLoggedLease } from './lease.js';
import { type LeaseKeeper, releaseEachRun } from './lease-keeper.js';
import type { LiveCache, LiveCacheRun } from './live-cache.js';
import { type LiveReader, type PassInput, type PlannedPass, planPass, type StageRunner } from './plan-pass.js';
import type { PlanLogSink } from './plan-log.js';
import { recheckWrites } from './recheck.js';
import { boundAfterStop, withSignal } from './recording-client.js';

/** How long a write made after a stop (without the run's signal) may wait for the client. */
export const STOP_GRACE_MS = 300;

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
  /** Parse results kept between runs by a long-lived caller (the watcher): unchanged files are not read again. */
  manifestCache?: ManifestCache;
  /**
   * With `manifestCache`: the first load reads only the files noted to it as changed (the
   * watcher's file events; `source/noted-changes.ts`). A pass again under the lease looks at every file.
   */
  onlyNotedChanges?: boolean;
  /**
   * The live state kept between runs by a long-lived caller (the watcher): a run after a change
   * reads only what it touched (`live-cache.ts`); without it every run reads everything.
   */
  liveCache?: LiveCache;
  /** With `liveCache`: read everything this run, for this reason (the heal interval). */
  fullRead?: FullReadReason;
  /** Who takes and gives back the apply lease (default: taken for the apply, released after it). */
  leases?: LeaseKeeper;
  /**
   * Called with the first plan that may be applied, before the lease or any write: a saved plan's
   * judgement (`saved-plan.ts`) throws here when it is stale; `plan --out` keeps the pass.
   */
  onPlanned?: (pass: PlannedPass) => Promise<void> | void;
}

const NO_LOG: PlanLogSink = { write: () => {}, close: async () => {} };

/** The full read of the live workspace (the `read-live` stage). */
const readEverything: LiveReader = (request) => fetchLiveState({ ...request, holders: true });

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

/**
 * Loads, reads, plans and (in `apply` mode) applies. Aborting `ctx.signal` while reading throws
 * `InterruptedError` (nothing was written); while applying, it stops new operations and the
 * report says `interrupted` (the ownership record still reflects what was done).
 */
export const reconcile = async (input: ReconcileInput, ctx: EngineContext): Promise<ReconciledRun> => {
  const started = ctx.clock.now();
  const before = ctx.client.stats();
  const { config } = input;
  ctx.events.emit({
    type: 'reconcile.started',
    mode: input.mode,
    dir: config.dir,
    ...(config.sourceId ? { sourceId: config.sourceId } : {}),
  });
  let status = 'error';
  let reason: RunReport['reason'] | FailureReason = 'internal';
  const timer = stageTimer(ctx);
  // Once stopped, writes without the run's signal (the record's shrink, the lease's release) get a
  // short grace to start, never a long Retry-After pause.
  const runCtx: EngineContext = { ...ctx, client: boundAfterStop(ctx, STOP_GRACE_MS) };
  const cache = input.liveCache?.begin({
    config,
    now: ctx.clock.now(),
    mode: input.mode,
    ...(input.fullRead !== undefined ? { full: input.fullRead } : {}),
  });
  try {
    const staged = await stagesOf(input, runCtx, timer, cache);
    const { result } = staged;
    cache?.settle(result, staged.applied);
    const after = ctx.client.stats();
    const writesOf = (s: typeof before) => s.requestsSent - s.requestsByMethod.GET;
    const firstRead = cache?.read() ?? (result.status === 'invalid' ? undefined : { path: 'full' as const });
    const read: ReadReport | undefined = firstRead && {
      ...firstRead,
      ...(staged.underLease !== undefined ? { underLease: staged.underLease } : {}),
      ...(staged.fallback !== undefined ? { fallback: staged.fallback } : {}),
    };
    const run = runReportOf(result, {
      mode: input.mode,
      stages: timer.timings,
      requests: { sent: after.requestsSent - before.requestsSent, writes: writesOf(after) - writesOf(before) },
      durationMs: Math.max(0, ctx.clock.now() - started),
      ...(read !== undefined ? { read } : {}),
    });
    status = run.outcome === 'interrupted' ? 'interrupted' : result.status;
    reason = run.reason;
    return { ...result, run };
  } catch (error) {
    cache?.fail();
    reason = failureReason(error, ctx.signal.aborted);
    if (ctx.signal.aborted || error instanceof InterruptedError) {
      status = 'interrupted';
      // Stopped before any change of the plan: say whether cortex-sync's own records (the lease,
      // the record's entity type) were written on the way, rather than "nothing was written".
      const now = ctx.client.stats();
      const wrote = now.requestsSent - now.requestsByMethod.GET - (before.requestsSent - before.requestsByMethod.GET);
      throw new InterruptedError(
        wrote > 0
          ? `interrupted before any change was made (${countOf(wrote, 'write request')} went to cortex-sync's own records, such as its lease)`
          : undefined,
        { cause: error },
      );
    }
    throw error;
  } finally {
    ctx.events.emit({ type: 'reconcile.done', status, reason, durationMs: ctx.clock.now() - started });
  }
};

/** The kinds of a run, in apply order: each reads its own settings from the configuration (`configure`). */
const handlersOf = (input: ReconcileInput): readonly AnyKindHandler[] =>
  applyOrder(input.handlers ?? kindsFor(input.config));

/** The handler of a kind among `handlers`. */
const lookupIn =
  (handlers: readonly AnyKindHandler[]) =>
  (kind: AnyKindHandler['kind']): AnyKindHandler => {
    const handler = handlers.find((h) => h.kind === kind);
    if (!handler) throw new Error(`no handler for kind ${kind}`);
    return handler;
  };

/** What the stages came to: the result, the pass whose plan was applied, and what happened under the lease. */
interface Staged {
  result: ReconcileResult;
  applied?: PlannedPass;
  underLease?: ReadReport['underLease'];
  fallback?: ReadReport['fallback'];
}

/** Did an apply go through without a problem (a kept lease may stay kept after it)? */
const appliedCleanly = (result: ReconcileResult): boolean =>
  result.status === 'applied' &&
  !result.report.interrupted &&
  result.report.results.every((r) => r.outcome === 'ok') &&
  (result.report.inventory ?? []).every((r) => r.outcome === 'ok');

/**
 * The stages in order. A plan, an apply without a source id or without work runs the reading
 * stages once, without the lease. An apply with work takes the source's lease (or keeps the one
 * its keeper still holds: the plan was then read under it) and re-checks what the plan writes
 * under it (`recheck.ts`): the objects, read by identity, and the ownership records. When they are
 * as the plan read them the plan is applied; otherwise (or when the plan removes objects, or
 * writes a kind with no read by identity) the reading stages run again in full under the lease
 * and that plan is applied, with the lease's pending creates. A holder whose lease another apply
 * broke (`--break-lease`) starts no further change and fails naming it.
 */
const stagesOf = async (
  input: ReconcileInput,
  ctx: EngineContext,
  timer: ReturnType<typeof stageTimer>,
  cache: LiveCacheRun | undefined,
): Promise<Staged> => {
  const { config } = input;
  const store = input.ownership ?? OWNERSHIP_STORE;
  const pass = (
    passCtx: EngineContext,
    readLive: LiveReader,
    onlyNotedChanges = false,
  ): ReturnType<typeof planPass> => {
    const handlers = handlersOf(input);
    const passInput: PassInput = {
      config,
      handlers,
      readOnlyKinds: input.readOnlyKinds ?? READ_ONLY_KINDS,
      store,
      lookup: lookupIn(handlers),
      readLive,
      ...(input.manifestCache ? { manifestCache: input.manifestCache } : {}),
      ...(onlyNotedChanges ? { onlyNotedChanges } : {}),
    };
    return planPass(passInput, passCtx, timer.run);
  };
  const write = async (
    planned: PlannedPass,
    writeCtx: EngineContext,
    pendingCreates: Parameters<typeof applyPass>[0]['pendingCreates'],
  ): Promise<ReconcileResult> => {
    const { plan, diagnostics } = planned;
    if (input.approve) {
      const approve = input.approve;
      if (!(await timer.run('approve', () => approve(plan, diagnostics, planned.work))))
        return { status: 'planned', plan, diagnostics };
    }
    const handlers = handlersOf(input);
    const report = await applyPass(
      {
        planned,
        lookup: lookupIn(handlers),
        kindOrder: handlers.map((h) => h.kind),
        concurrency: config.concurrency,
        log: input.planLog ?? NO_LOG,
        pendingCreates,
      },
      writeCtx,
      timer.run,
    );
    return { status: 'applied', plan, diagnostics, report };
  };

  const getsBefore = ctx.client.stats().requestsByMethod.GET;
  const first = await pass(ctx, cache?.readLive ?? readEverything, input.onlyNotedChanges === true);
  const firstReadGets = ctx.client.stats().requestsByMethod.GET - getsBefore;
  if (first.status !== 'planned') return { result: first };
  await input.onPlanned?.(first);
  const { plan, diagnostics } = first;
  if (input.mode === 'plan') return { result: { status: 'planned', plan, diagnostics } };
  const sourceId = first.sourceId;
  if (sourceId === undefined || !first.work.hasWork)
    return { result: await write(first, ctx, undefined), applied: first };

  const keeper = input.leases ?? releaseEachRun;
  const leaseCtx = withLoggedLease(ctx, sourceId, input.planLog, store.lease);
  const settings = leaseSettingsFor(config, newHolderName());
  const { lease, kept } = await timer.run('lease', () => keeper.take(leaseCtx, sourceId, settings, store.lease));
  timer.leased();
  let staged: Staged;
  try {
    // Once another apply takes the lease (--break-lease), no further change starts.
    const leased: EngineContext = { ...ctx, signal: AbortSignal.any([ctx.signal, lease.lost]) };
    let planned: Awaited<ReturnType<typeof pass>> = first;
    let underLease: Staged['underLease'] = 'held';
    let fallback: Staged['fallback'];
    if (!kept) {
      const handlers = handlersOf(input);
      const checked = await timer.run('recheck', () =>
        recheckWrites(first, {
          client: withSignal(leased.client, leased.signal),
          handlers,
          lookup: lookupIn(handlers),
          store,
          ...((cache?.read()?.path ?? 'full') === 'full' ? { fullReadGets: firstReadGets } : {}),
        }),
      );
      if (checked.same) {
        // The records as read now write this source's record.
        planned = { ...first, ownership: checked.ownership };
        underLease = 'recheck';
      } else {
        underLease = 'full';
        fallback = checked.fallback;
        planned = await pass(leased, cache?.readFull ?? readEverything);
      }
    }
    const result = planned.status === 'planned' ? await write(planned, leased, lease.pending) : planned;
    staged = {
      result,
      ...(planned.status === 'planned' ? { applied: planned } : {}),
      underLease,
      ...(fallback !== undefined ? { fallback } : {}),
    };
  } catch (error) {
    await keeper.done(lease, false).catch(() => {});
    const lostTo = lease.lostTo();
    throw lostTo !== undefined ? new LeaseLostError(sourceId, lostTo, { cause: error }) : error;
  }
  await keeper.done(lease, appliedCleanly(staged.result)).catch(() => {});
  // Another apply broke this one's lease: what was written is in the plan log and the record; the
  // run fails rather than report a complete apply.
  const lostTo = lease.lostTo();
  if (lostTo !== undefined) throw new LeaseLostError(sourceId, lostTo);
  return staged;
};
