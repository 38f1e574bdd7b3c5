/**
 * The reading half of `reconcile`, as named stages (`core/outcome.ts` `STAGES`):
 *
 * - `load`: the manifests read, parsed and checked per file (strict schemas, duplicates, layout);
 *   any error ends the run as `invalid` before anything is read from the API;
 * - `read-live`: the live workspace, through a `LiveReader`: the full bulk read of every kind
 *   (`fetchLiveState`), or, for a caller that keeps the last read (the watcher, `live-cache.ts`),
 *   only the objects a change touched, read by identity (the state then says so: `scope`);
 * - `validate`: references against the repository and the workspace, and the source id's binding
 *   to its origin;
 * - `plan`: the pure plan, its header (the settings that widen removals), the ownership-record
 *   writes, and the managed objects left without a manifest. A read with a `scope` plans the
 *   objects in it alone (references, the ownership record's writes and the leftovers are still
 *   judged over every manifest).
 *
 * An apply with work re-checks under the apply lease what the plan writes (`recheck.ts`) and runs
 * the pass again in full only when that changed. Only GET requests.
 */
import { InterruptedError } from '../core/errors.js';
import { type DesiredObject, type Diagnostic, hasErrors, type ObjectKey, objectKey, type Plan } from '../core/model.js';
import { type PlanWork, planWork, type StageName } from '../core/outcome.js';
import { buildPlan } from '../core/plan.js';
import { checkReferences } from '../core/references.js';
import { strictly } from '../core/strict.js';
import { printable } from '../core/printable.js';
import { sourceBinding } from '../core/source-binding.js';
import type { AnyKindHandler, AnyReadOnlyKind } from '../kinds/types.js';
import { ownInventoryOf, sharedRecordWith } from '../ownership/index-records.js';
import type { OwnershipSnapshot, OwnershipStore, RecordMeta } from '../ownership/store.js';
import { loadManifests } from '../source/load.js';
import { lookalikeChangeWarnings, lookalikeSourceIdWarnings } from '../source/lookalike-ids.js';
import type { ManifestCache } from '../source/manifest-cache.js';
import type { SyncConfig } from './config.js';
import type { EngineContext } from './context.js';
import { deleteScopeOf } from './delete-scope.js';
import type { LiveState } from './fetch-live.js';
import { type InventoryStepsInput, plannedInventoryWrites } from './inventory-steps.js';
import { declarationsFor, serverIdsFor, trackedKinds } from './ownership-record.js';
import { leftoversDiagnostic, managedWithoutManifest } from './leftovers.js';
import { withSignal } from './recording-client.js';

/** Runs one named stage: times it and says so (`stage.done`). */
export type StageRunner = <T>(stage: StageName, work: () => Promise<T>) => Promise<T>;

/**
 * How the `read-live` stage reads the workspace for a set of desired objects: the full read, or
 * the watcher's, which keeps the last read and re-reads what a change touches (`live-cache.ts`).
 */
export type LiveReader = (request: {
  client: EngineContext['client'];
  handlers: readonly AnyKindHandler[];
  readOnlyKinds: readonly AnyReadOnlyKind[];
  store: OwnershipStore;
  desired: readonly DesiredObject[];
  sourceId: string | undefined;
}) => Promise<LiveState>;

export interface PassInput {
  config: SyncConfig;
  handlers: readonly AnyKindHandler[];
  /** The kinds only read (what manifests reference; for reference checks). */
  readOnlyKinds: readonly AnyReadOnlyKind[];
  /** Where the engine keeps its ownership records. */
  store: OwnershipStore;
  /** The handler of a kind. */
  lookup: (kind: AnyKindHandler['kind']) => AnyKindHandler;
  readLive: LiveReader;
  manifestCache?: ManifestCache;
  /** Load only what was noted to `manifestCache` as changed (`LoadOptions.onlyNotedChanges`). */
  onlyNotedChanges?: boolean;
}

/** A plan that may be applied, with what the writing stages need. */
export interface PlannedPass {
  status: 'planned';
  plan: Plan;
  diagnostics: Diagnostic[];
  work: PlanWork;
  /** Undefined without a source id: no ownership record is written. */
  steps: InventoryStepsInput | undefined;
  sourceId: string | undefined;
  /** The records as read, which write this source's record. */
  ownership: OwnershipSnapshot;
  /** What the plan was made on: every manifest, and the live state as read. */
  desired: readonly DesiredObject[];
  state: LiveState;
}

export type PassResult =
  | { status: 'invalid'; diagnostics: Diagnostic[] }
  | { status: 'refused'; plan: Plan; diagnostics: Diagnostic[] }
  | PlannedPass;

/** What this run records with its source's objects: its origin, and the settings that limit removals. */
const recordMetaOf = (config: SyncConfig): RecordMeta => ({
  ...(config.origin !== undefined ? { origin: config.origin } : {}),
  protect: config.protect,
  ...(config.maxDeleteCount !== undefined ? { maxDeleteCount: config.maxDeleteCount } : {}),
});

/** load → read-live → validate → plan. */
export const planPass = async (input: PassInput, ctx: EngineContext, stage: StageRunner): Promise<PassResult> => {
  const { config, handlers, store } = input;
  const client = withSignal(ctx.client, ctx.signal);
  // Without a source id (not a git checkout, none configured) plan and apply still work: nothing
  // is marked, adopted or recorded, and --prune is refused by the planner.
  const sourceId = config.sourceId || undefined;

  const loaded = await stage('load', () =>
    loadManifests(config.dir, handlers, {
      now: ctx.clock.now(),
      ...(input.manifestCache ? { cache: input.manifestCache } : {}),
      ...(input.onlyNotedChanges === true ? { onlyNotedChanges: true } : {}),
      ...(config.allowEmpty === true ? { allowEmpty: true } : {}),
    }),
  );
  // Strict mode: every warning is an error, those of the manifests first (nothing is read then).
  const loadDiagnostics = strictly(loaded.diagnostics, config.strict);
  if (hasErrors(loadDiagnostics)) return { status: 'invalid', diagnostics: loadDiagnostics };
  const desired = loaded.objects;
  if (ctx.signal.aborted) throw new InterruptedError();

  const state = await stage('read-live', () =>
    input.readLive({ client, handlers, readOnlyKinds: input.readOnlyKinds, store, desired, sourceId }),
  );

  const checked = await stage('validate', async () => {
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
    const diagnostics = checkReferences({
      desired,
      live: [...state.live, ...state.referenced],
      handlers: [...handlers, ...input.readOnlyKinds],
      unreadable: state.unreadable,
    });
    // A new source id that reads as a recorded one: a reviewer would take this plan for that source's.
    if (sourceId !== undefined && !state.inventories.bySource.has(sourceId))
      diagnostics.push(...(await lookalikeSourceIdWarnings(sourceId, state.inventories.bySource.keys())));
    return { recordedMeta, binding, diagnostics };
  });

  return stage('plan', async () => {
    const { recordedMeta, binding } = checked;
    // A read of some objects only (by identity) plans those objects alone.
    const scope = state.scope;
    const inScope = (o: { kind: string; id: string }) => scope === undefined || scope.has(objectKey(o.kind, o.id));
    // An object a list left out that no read could confirm absent is not planned (never a create);
    // an error says why (`engine/confirm-absence.ts`).
    const unconfirmed = state.unconfirmed ?? new Set<ObjectKey>();
    const planned = desired.filter((o) => !unconfirmed.has(objectKey(o.kind, o.id)));
    const plan = buildPlan({
      desired: scope === undefined ? planned : planned.filter(inScope),
      live: scope === undefined ? state.live : state.live.filter(inScope),
      handlers,
      options: {
        ...(sourceId !== undefined ? { sourceId, ownInventory: ownInventoryOf(state.inventories, sourceId) } : {}),
        prune: config.prune,
        allowTakeover: config.allowTakeover,
        allowMassDelete: config.allowMassDelete,
        ...(config.allowEmpty === true ? { allowEmpty: true } : {}),
        maxDeleteShare: config.maxDeleteShare,
        ...(config.maxDeleteCount !== undefined ? { maxDeleteCount: config.maxDeleteCount } : {}),
        protect: config.protect,
        manifestsComplete: true,
        now: ctx.clock.now(),
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
            // Unconfirmed absences count as live: never dropped from the record on a list's word.
            live: new Set([...state.live.map((o) => objectKey(o.kind, o.id)), ...unconfirmed]),
            previousMeta: recordedMeta ?? {},
            meta: recordMetaOf(config),
            declared: declarationsFor(desired, handlers, state.inventories.declared.get(sourceId)),
            serverIds: serverIdsFor(handlers, state.live, state.inventories.serverIds.get(sourceId), unconfirmed),
            previousServerIds: state.inventories.serverIds.get(sourceId) ?? new Map(),
            serverAssigned: new Set(handlers.filter((h) => h.serverAssignsIdentity === true).map((h) => h.kind)),
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

    // Ids a reviewer cannot tell apart in one plan (a create beside an archive reads as a move): flagged beside each.
    const declared = new Set(desired.map((o) => `${o.kind}/${o.id}`));
    plan.diagnostics.push(...(await lookalikeChangeWarnings(plan.changes, declared, handlers)));

    const diagnostics = [
      ...loadDiagnostics,
      ...strictly([...state.diagnostics, ...checked.diagnostics, ...plan.diagnostics], config.strict),
    ];
    const work = planWork(plan);
    ctx.events.emit({ type: 'plan.ready', summary: plan.summary, pending: work.pending });
    if (hasErrors(diagnostics)) return { status: 'refused' as const, plan, diagnostics };
    return {
      status: 'planned' as const,
      plan,
      diagnostics,
      work,
      steps,
      sourceId,
      ownership: state.ownership,
      desired,
      state,
    };
  });
};
