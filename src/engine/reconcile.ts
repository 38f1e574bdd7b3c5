/**
 * The one engine every runtime calls: load manifests → read the live workspace → plan → apply.
 * Expected outcomes (invalid manifests, a refused plan) are results; unexpected failures (the API
 * refusing a read) are thrown as typed errors for the entrypoint to render.
 */
import { InterruptedError } from '../core/errors.js';
import type { PendingCreates } from '../core/pending-creates.js';
import {
  type ApplyReport,
  type DesiredObject,
  type Diagnostic,
  hasErrors,
  type InventoryWrite,
  type InventoryWriteResult,
  type ObjectKey,
  objectKey,
  type Plan,
  type ReconcileResult,
} from '../core/model.js';
import { buildPlan } from '../core/plan.js';
import { checkReferences } from '../core/references.js';
import { printable } from '../core/printable.js';
import { sourceBinding } from '../core/source-binding.js';
import { applyOrder } from '../kinds/order.js';
import { KIND_HANDLERS, kindsFor, READ_ONLY_KINDS } from '../kinds/registry.js';
import type { AnyKindHandler, AnyReadOnlyKind } from '../kinds/types.js';
import { loadManifests } from '../source/load.js';
import type { ManifestCache } from '../source/manifest-cache.js';
import type { SyncConfig } from './config.js';
import type { EngineContext } from './context.js';
import { executePlan } from './executor.js';
import { fetchLiveState } from './fetch-live.js';
import { OWNERSHIP_STORE } from '../kinds/ownership.js';
import { ownInventoryOf, sharedRecordWith } from '../ownership/index-records.js';
import type { OwnershipSnapshot, OwnershipStore, RecordMeta } from '../ownership/store.js';
import { declarationsFor, trackedKinds } from './ownership-record.js';
import { deleteScopeOf } from './delete-scope.js';
import { applyUnderLease, leaseSettingsFor, newHolderName, withLoggedLease } from './lease.js';
import {
  afterWrite,
  beforeWrite,
  finalInventory,
  grownInventory,
  type InventoryStepsInput,
  plannedInventoryWrites,
} from './inventory-steps.js';
import { leftoversDiagnostic, managedWithoutManifest } from './leftovers.js';
import type { PlanLogSink } from './plan-log.js';
import { boundAfterStop, recordingClient, withSignal } from './recording-client.js';

/** How long a write made after a stop (without the run's signal) may wait for the client. */
export const STOP_GRACE_MS = 300;

export type { ReconcileResult } from '../core/model.js';

export interface ValidateResult {
  objects: DesiredObject[];
  files: string[];
  diagnostics: Diagnostic[];
}

/** Offline: parse, validate and check references inside the repository. No key, no network. */
export const validateManifests = async (
  dir: string,
  ctx: Pick<EngineContext, 'signal'>,
  handlers: readonly AnyKindHandler[] = KIND_HANDLERS,
): Promise<ValidateResult> => {
  if (ctx.signal.aborted) throw new InterruptedError();
  const loaded = await loadManifests(dir, handlers);
  const diagnostics = [...loaded.diagnostics];
  if (!hasErrors(diagnostics))
    diagnostics.push(...checkReferences({ desired: loaded.objects, handlers: [...handlers, ...READ_ONLY_KINDS] }));
  return { objects: loaded.objects, files: loaded.files, diagnostics };
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
   * Apply mode: called with the plan that is about to be applied (one with no errors), before
   * anything is written; `false` ends the run as `planned`. The CLI shows the plan and asks here.
   */
  approve?: (plan: Plan, diagnostics: readonly Diagnostic[]) => Promise<boolean>;
  /** Parse results kept between runs by a long-lived caller (the watcher): unchanged files are not read again. */
  manifestCache?: ManifestCache;
}

const NO_LOG: PlanLogSink = { write: () => {}, close: async () => {} };

/**
 * Loads, reads, plans and (in `apply` mode) applies. Aborting `ctx.signal` while reading throws
 * `InterruptedError` (nothing was written); while applying, it stops new operations and the
 * result's report says `interrupted` (the ownership record still reflects what was done).
 */
export const reconcile = async (input: ReconcileInput, ctx: EngineContext): Promise<ReconcileResult> => {
  const started = ctx.clock.now();
  const { config } = input;
  ctx.events.emit({
    type: 'reconcile.started',
    mode: input.mode,
    dir: config.dir,
    ...(config.sourceId ? { sourceId: config.sourceId } : {}),
  });
  let status = 'error';
  // Once stopped, writes without the run's signal (the record's shrink, the lease's release) get a
  // short grace to start, never a long Retry-After pause.
  const runCtx: EngineContext = { ...ctx, client: boundAfterStop(ctx, STOP_GRACE_MS) };
  try {
    const store = input.ownership ?? OWNERSHIP_STORE;
    const lease = {
      mode: input.mode,
      sourceId: config.sourceId,
      settings: leaseSettingsFor(config, newHolderName()),
      store: store.lease,
    };
    const leaseCtx = withLoggedLease(runCtx, config.sourceId, input.planLog, store.lease);
    // Once another apply takes the lease (--break-lease), no further change starts.
    const result = await applyUnderLease(lease, leaseCtx, hasWork, (mode, pending, lost) =>
      run({ ...input, mode }, lost ? { ...runCtx, signal: AbortSignal.any([runCtx.signal, lost]) } : runCtx, pending),
    );
    status = result.status === 'applied' && result.report.interrupted ? 'interrupted' : result.status;
    return result;
  } catch (error) {
    if (ctx.signal.aborted && !(error instanceof InterruptedError)) {
      status = 'interrupted';
      throw new InterruptedError(undefined, { cause: error });
    }
    if (error instanceof InterruptedError) status = 'interrupted';
    throw error;
  } finally {
    ctx.events.emit({ type: 'reconcile.done', status, durationMs: ctx.clock.now() - started });
  }
};

/** What this run records with its source's objects: its origin, and the settings that limit removals. */
const recordMetaOf = (config: SyncConfig): RecordMeta => ({
  ...(config.origin !== undefined ? { origin: config.origin } : {}),
  protect: config.protect,
  ...(config.maxDeleteCount !== undefined ? { maxDeleteCount: config.maxDeleteCount } : {}),
});

/** Whether a planned result would write anything (an apply of it needs the lease). */
const hasWork = (result: ReconcileResult): boolean =>
  result.status === 'planned' &&
  (result.plan.changes.some((c) => c.action !== 'noop') || (result.plan.inventory?.length ?? 0) > 0);

const run = async (
  input: ReconcileInput,
  ctx: EngineContext,
  pendingCreates?: PendingCreates,
): Promise<ReconcileResult> => {
  const { config } = input;
  const client = withSignal(ctx.client, ctx.signal);
  // Each kind reads its own settings from the configuration (`configure`).
  const handlers = applyOrder(input.handlers ?? kindsFor(config));
  const readOnlyKinds = input.readOnlyKinds ?? READ_ONLY_KINDS;
  const store = input.ownership ?? OWNERSHIP_STORE;
  const byKind = new Map(handlers.map((h) => [h.kind, h]));
  const lookup = (kind: AnyKindHandler['kind']): AnyKindHandler => {
    const handler = byKind.get(kind);
    if (!handler) throw new Error(`no handler for kind ${kind}`);
    return handler;
  };
  // Without a source id (not a git checkout, none configured) plan and apply still work: nothing
  // is marked, adopted or recorded, and --prune is refused by the planner.
  const sourceId = config.sourceId || undefined;

  const loaded = await loadManifests(config.dir, handlers, {
    now: ctx.clock.now(),
    ...(input.manifestCache ? { cache: input.manifestCache } : {}),
  });
  if (hasErrors(loaded.diagnostics)) return { status: 'invalid', diagnostics: loaded.diagnostics };
  const desired = loaded.objects;
  if (ctx.signal.aborted) throw new InterruptedError();

  const state = await fetchLiveState({ client, handlers, store, readOnlyKinds, desired, sourceId, holders: true });
  // The source id's binding to the origin that first applied it: another origin claiming it
  // removes, changes and takes over nothing (core/source-binding.ts).
  const recordedMeta = sourceId !== undefined ? state.inventories.meta.get(sourceId) : undefined;
  const binding =
    sourceId !== undefined && config.origin !== undefined
      ? sourceBinding({
          sourceId,
          origin: config.origin,
          record: {
            exists: state.inventories.bySource.has(sourceId),
            ...(recordedMeta?.origin !== undefined ? { origin: recordedMeta.origin } : {}),
          },
          allowTakeover: config.allowTakeover,
        })
      : undefined;
  const referenceDiagnostics = checkReferences({
    desired,
    live: [...state.live, ...state.referenced],
    handlers: [...handlers, ...readOnlyKinds],
    unreadable: state.unreadable,
  });
  const plan = buildPlan({
    desired,
    live: state.live,
    handlers,
    options: {
      ...(sourceId !== undefined ? { sourceId, ownInventory: ownInventoryOf(state.inventories, sourceId) } : {}),
      prune: config.prune,
      allowTakeover: config.allowTakeover,
      allowMassDelete: config.allowMassDelete,
      maxDeleteShare: config.maxDeleteShare,
      ...(config.maxDeleteCount !== undefined ? { maxDeleteCount: config.maxDeleteCount } : {}),
      protect: config.protect,
      manifestsComplete: true,
      ...(binding !== undefined ? { binding } : {}),
    },
  });
  plan.scope = deleteScopeOf(config, recordedMeta, binding);

  // The ownership record's writes are steps of the plan, shown like any change.
  const tracked = trackedKinds(handlers);
  const previousKeys = sourceId !== undefined ? state.inventories.bySource.get(sourceId) : undefined;
  const steps: InventoryStepsInput | undefined =
    sourceId === undefined
      ? undefined
      : {
          id: store.recordId(sourceId),
          sourceId,
          previous: new Set<ObjectKey>(previousKeys ?? []),
          recordExists: previousKeys !== undefined,
          desired: desired.filter((o) => tracked.has(o.kind)).map((o) => objectKey(o.kind, o.id)),
          live: new Set(state.live.map((o) => objectKey(o.kind, o.id))),
          previousMeta: recordedMeta ?? {},
          meta: recordMetaOf(config),
          declared: declarationsFor(desired, handlers, state.inventories.declared.get(sourceId)),
        };
  const handedOver = (plan.handOvers ?? []).map((h) => objectKey(h.kind, h.id));
  plan.inventory = steps ? plannedInventoryWrites(steps, plan.changes, handedOver) : [];
  const sharedTag =
    sourceId !== undefined ? sharedRecordWith(state.inventories, sourceId, (s) => store.recordId(s)) : undefined;
  if (sharedTag !== undefined)
    plan.diagnostics.push({
      severity: 'error',
      code: 'source-claimed',
      message: `source id \`${printable(sourceId ?? '')}\` has the same ownership-record tag as source \`${printable(sharedTag)}\` (\`${store.recordId(sharedTag)}\`): writing its record would replace that source's; choose another source id`,
    });
  if (!config.prune && sourceId !== undefined && binding?.state !== 'claimed') {
    const ownInventory = ownInventoryOf(state.inventories, sourceId);
    const leftovers = managedWithoutManifest({ desired, live: state.live, sourceId, ownInventory });
    const kept = new Set([...handedOver, ...(plan.held ?? [])]);
    plan.diagnostics.push(...leftoversDiagnostic(leftovers.filter((key) => !kept.has(key))));
  }

  const diagnostics = [...loaded.diagnostics, ...state.diagnostics, ...referenceDiagnostics, ...plan.diagnostics];
  const pending = plan.changes.filter((c) => c.action !== 'noop').length + plan.inventory.length;
  ctx.events.emit({ type: 'plan.ready', summary: plan.summary, pending });
  if (hasErrors(diagnostics)) return { status: 'refused', plan, diagnostics };
  if (input.mode === 'plan') return { status: 'planned', plan, diagnostics };
  if (input.approve && !(await input.approve(plan, diagnostics))) return { status: 'planned', plan, diagnostics };

  const report = await applyPlan(input, ctx, {
    plan,
    steps,
    sourceId,
    pendingCreates,
    ownership: state.ownership,
    lookup,
    kindOrder: handlers.map((h) => h.kind),
  });
  return { status: 'applied', plan, diagnostics, report };
};

/**
 * Apply: the record grows before the writes (so nothing created is ever untracked) and shrinks
 * after them (so a failed delete stays tracked). Once interrupted, the shrink still runs, without
 * the signal, so the record matches what was done.
 */
const applyPlan = async (
  input: ReconcileInput,
  ctx: EngineContext,
  run: {
    plan: NonNullable<Extract<ReconcileResult, { plan: unknown }>['plan']>;
    /** Undefined without a source id: no ownership record is written. */
    steps: InventoryStepsInput | undefined;
    sourceId: string | undefined;
    pendingCreates: PendingCreates | undefined;
    /** The records as read, which write this source's record. */
    ownership: OwnershipSnapshot;
    lookup: (kind: AnyKindHandler['kind']) => AnyKindHandler;
    kindOrder: readonly string[];
  },
): Promise<ApplyReport> => {
  const { config } = input;
  const { sourceId, steps } = run;
  const log = input.planLog ?? NO_LOG;
  const inventory: InventoryWriteResult[] = [];
  let writes = 0;

  const writeRecord = async (write: InventoryWrite, keys: ReadonlySet<ObjectKey>, signal?: AbortSignal) => {
    const started = ctx.clock.now();
    const sent = recordingClient(
      { client: ctx.client, clock: ctx.clock, ...(signal ? { signal } : {}) },
      { kind: 'inventory', id: write.id, action: write.action },
      log,
    );
    try {
      if (sourceId !== undefined)
        await run.ownership.write(sent.client, {
          sourceId,
          objects: keys,
          ...(steps?.meta ? { meta: steps.meta } : {}),
          ...(steps?.declared ? { declared: steps.declared } : {}),
        });
      inventory.push({ write, outcome: 'ok' });
      return true;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      inventory.push({ write, outcome: signal?.aborted ? 'skipped' : 'failed', error: message });
      if (!signal?.aborted) throw error;
      return false;
    } finally {
      writes += sent.writes;
      const last = inventory[inventory.length - 1];
      ctx.events.emit({
        type: 'operation.done',
        kind: 'inventory',
        id: write.id,
        action: write.action,
        outcome: last?.outcome ?? 'failed',
        status: sent.lastStatus,
        durationMs: ctx.clock.now() - started,
        ...(last?.error !== undefined ? { error: last.error } : {}),
      });
    }
  };

  const grown = steps ? grownInventory(steps) : new Set<ObjectKey>();
  const before = steps ? beforeWrite(steps) : undefined;
  /** The record holds `grown` (written now, or already): the shrink after the changes may follow. */
  let grownRecorded = before === undefined;
  if (before) {
    if (ctx.signal.aborted) inventory.push({ write: before, outcome: 'skipped', error: 'interrupted' });
    else grownRecorded = await writeRecord(before, grown, ctx.signal);
  }

  const report = await executePlan(
    {
      changes: run.plan.changes,
      handlerFor: run.lookup,
      kindOrder: run.kindOrder,
      options: {
        ...(sourceId !== undefined ? { sourceId } : {}),
        ...(run.pendingCreates ? { pendingCreates: run.pendingCreates } : {}),
      },
      concurrency: config.concurrency,
      log,
    },
    ctx,
  );

  if (grownRecorded && steps) {
    const removed = new Set(
      report.results
        .filter((r) => r.outcome === 'ok' && (r.change.action === 'delete' || r.change.action === 'archive'))
        .map((r) => objectKey(r.change.kind, r.change.id)),
    );
    // A handed-over object leaves the record once the manifest that declares it now is applied.
    const outcomes = new Map(report.results.map((r) => [objectKey(r.change.kind, r.change.id), r.outcome]));
    for (const h of run.plan.handOvers ?? []) {
      if ((outcomes.get(h.to) ?? 'ok') === 'ok') removed.add(objectKey(h.kind, h.id));
    }
    const final = finalInventory(steps, grown, removed);
    const after = afterWrite({ ...steps, recordExists: true }, grown, final);
    if (after) {
      try {
        await writeRecord(after, final);
      } catch {
        // Reported as a failed step of the apply (the record keeps the removed keys: safe).
      }
    }
  }
  report.writeRequests += writes;
  if (inventory.length > 0) report.inventory = inventory;
  if (inventory.some((r) => r.outcome === 'skipped')) report.interrupted = true;
  return report;
};
