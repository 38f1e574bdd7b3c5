/**
 * A run's whole plan, pure and built once (the engine's `plan` stage calls it and changes nothing
 * after): `buildPlan`'s changes over the objects a read covers, its header (who it acts for and
 * the settings that widen removals, given), the ownership record's writes as steps of the plan, and
 * the warnings a plan adds about the workspace: a record tag another source shares, and the managed
 * objects left without a manifest. Same input, same plan; nothing given is changed.
 */
import { type InventoryStepsInput, plannedInventoryWrites } from './inventory-steps.js';
import type { KindModel } from './kind-contract.js';
import { leftoversDiagnostic, managedWithoutManifest } from './leftovers.js';
import {
  type DeleteScope,
  type DesiredObject,
  type Diagnostic,
  type LiveObject,
  type ObjectKey,
  objectKey,
  type Plan,
} from './model.js';
import { declarationsFor, serverIdsFor, trackedKinds } from './ownership-record.js';
import { buildPlan, type PlanOptions } from './plan.js';
import { printable } from './printable.js';
import type { Declaration, RecordMeta } from './record-meta.js';

/** This source's ownership record as the workspace read it (its entries in the records' index). */
interface RecordAsRead {
  /** The keys it lists; undefined: there is no record. */
  keys?: ReadonlySet<ObjectKey>;
  meta?: RecordMeta;
  declared?: ReadonlyMap<ObjectKey, Declaration>;
  serverIds?: ReadonlyMap<ObjectKey, string>;
}

/** The source a run acts for, and its record. */
export interface RunRecord {
  sourceId: string;
  /** The record's tag (`OwnershipStore.recordId`). */
  tag: string;
  asRead: RecordAsRead;
  /** The origin and settings this run records (`RecordMeta`). */
  meta: RecordMeta;
  /** Another source whose record has the same tag: writing this one's would replace it (a plan error). */
  sharesTagWith?: string;
}

export interface RunPlanInput {
  /** Every manifest's object. */
  desired: readonly DesiredObject[];
  /** The live objects as read. */
  live: readonly LiveObject[];
  /** The managed kinds, in apply order. */
  handlers: readonly KindModel[];
  /** A read of some objects only (by identity): the plan covers those alone (`LiveState.scope`). */
  readScope?: ReadonlySet<ObjectKey>;
  /** Objects a list left out that no read could confirm absent: never planned, never dropped from the record. */
  unconfirmed?: ReadonlySet<ObjectKey>;
  /** `buildPlan`'s options, but who the run acts for (`record`). */
  options: Omit<PlanOptions, 'sourceId' | 'ownInventory' | 'declaredBefore'>;
  /** The plan's header (`Plan.scope`). */
  deleteScope: DeleteScope;
  /** Without a source id: none (nothing is marked, adopted or recorded). */
  record?: RunRecord;
}

interface RunPlan {
  plan: Plan;
  /** What the record's writes are computed from (the apply computes its last write again from what succeeded). */
  steps: InventoryStepsInput | undefined;
}

const NONE: ReadonlySet<ObjectKey> = new Set();

/** The ownership record's steps: what it holds, and what this run's plan makes it hold. */
const recordStepsOf = (input: RunPlanInput, record: RunRecord): InventoryStepsInput => {
  const { desired, handlers, live } = input;
  const unconfirmed = input.unconfirmed ?? NONE;
  const tracked = trackedKinds(handlers);
  const { asRead } = record;
  const shared = new Set(handlers.filter((h) => h.write?.sharedWrites !== undefined).map((h) => h.kind));
  const declared = new Set(desired.map((o) => objectKey(o.kind, o.id)));
  const released = (o: LiveObject): boolean =>
    shared.has(o.kind) && o.owner !== record.sourceId && !declared.has(objectKey(o.kind, o.id));
  return {
    id: record.tag,
    sourceId: record.sourceId,
    previous: new Set<ObjectKey>(asRead.keys ?? []),
    recordExists: asRead.keys !== undefined,
    desired: desired.filter((o) => tracked.has(o.kind)).map((o) => objectKey(o.kind, o.id)),
    // Unconfirmed absences count as live: never dropped from the record on a list's word. An
    // object of a kind shared key by key that this source no longer declares and does not own
    // leaves the record (its keys are no longer claimed; existence was never this source's).
    live: new Set([...live.filter((o) => !released(o)).map((o) => objectKey(o.kind, o.id)), ...unconfirmed]),
    previousMeta: asRead.meta ?? {},
    meta: record.meta,
    declared: declarationsFor(desired, handlers, asRead.declared),
    serverIds: serverIdsFor(handlers, live, asRead.serverIds, unconfirmed),
    previousServerIds: asRead.serverIds ?? new Map(),
    serverAssigned: new Set(handlers.filter((h) => h.live.serverAssignsIdentity === true).map((h) => h.kind)),
    sharedKinds: new Set(handlers.filter((h) => h.write?.sharedWrites !== undefined).map((h) => h.kind)),
    previousDeclared: asRead.declared ?? new Map(),
  };
};

/** The error of a record tag another source's record already has. */
const sharedTagDiagnostic = (record: RunRecord, other: string): Diagnostic => ({
  severity: 'error',
  code: 'source-claimed',
  message: `source id \`${printable(record.sourceId)}\` has the same ownership-record tag as source \`${printable(other)}\` (\`${record.tag}\`): writing its record would replace that source's; choose another source id`,
});

/**
 * The warning naming the objects this source manages whose manifests are gone, when the run does
 * not prune (and its source id is not another origin's): those a hand-over or a held prune keeps
 * are not leftovers.
 */
const leftoversOf = (input: RunPlanInput, plan: Pick<Plan, 'handOvers' | 'held'>): Diagnostic[] => {
  const { record } = input;
  if (input.options.prune || record === undefined || input.options.binding?.state === 'claimed') return [];
  const leftovers = managedWithoutManifest({
    desired: input.desired,
    live: input.live,
    sourceId: record.sourceId,
    ownInventory: record.asRead.keys ?? NONE,
  });
  const kept = new Set([...(plan.handOvers ?? []).map((h) => objectKey(h.kind, h.id)), ...(plan.held ?? [])]);
  return leftoversDiagnostic(leftovers.filter((key) => !kept.has(key)));
};

/** The run's plan, built once. */
export const planRun = (input: RunPlanInput): RunPlan => {
  const { record, readScope } = input;
  const unconfirmed = input.unconfirmed ?? NONE;
  const inScope = (o: { kind: string; id: string }) =>
    readScope === undefined || readScope.has(objectKey(o.kind, o.id));
  // An object a list left out that no read could confirm absent is not planned (never a create).
  const planned = input.desired.filter((o) => !unconfirmed.has(objectKey(o.kind, o.id)));
  const built = buildPlan({
    desired: readScope === undefined ? planned : planned.filter(inScope),
    live: readScope === undefined ? input.live : input.live.filter(inScope),
    handlers: input.handlers,
    options: {
      ...(record !== undefined ? { sourceId: record.sourceId, ownInventory: record.asRead.keys ?? NONE } : {}),
      ...(record?.asRead.declared !== undefined ? { declaredBefore: record.asRead.declared } : {}),
      ...input.options,
    },
  });
  // The ownership record's writes are steps of the plan, shown like any change.
  const steps = record !== undefined ? recordStepsOf(input, record) : undefined;
  const handedOver = (built.handOvers ?? []).map((h) => objectKey(h.kind, h.id));
  const plan: Plan = {
    ...built,
    diagnostics: [
      ...built.diagnostics,
      ...(record?.sharesTagWith !== undefined ? [sharedTagDiagnostic(record, record.sharesTagWith)] : []),
      ...leftoversOf(input, built),
    ],
    scope: input.deleteScope,
    inventory: steps ? plannedInventoryWrites(steps, built.changes, handedOver) : [],
  };
  return { plan, steps };
};
