/**
 * Reads by identity (`live.fetchByIds`): the objects a plan writes, re-read under the apply lease
 * (`recheckWrites`), and the objects a change touched (`live-cache.ts`). Only GET requests; a kind
 * without a read by identity is read in full instead (the caller says so).
 */
import { DotSegmentPathError } from '../api/errors.js';
import type { ApiClient } from '../api/types.js';
import { deepEqual } from '../core/diff.js';
import {
  type DesiredObject,
  type JsonValue,
  type KindName,
  type LiveObject,
  type ObjectKey,
  objectKey,
} from '../core/model.js';
import type { RecheckFallback } from '../core/outcome.js';
import type { AnyKindHandler } from '../kinds/types.js';
import { othersFingerprint, sortedMeta } from '../ownership/index-records.js';
import type { OwnershipIndex, OwnershipSnapshot, OwnershipStore } from '../ownership/store.js';
import { serverIdsOf } from './confirm-absence.js';
import { setRecordedOwners } from './fetch-live.js';
import type { PlannedPass } from './stages/run.js';

/** Do two reads of one object say the same (existence, owner, flags, the state as read)? */
const sameLive = (a: LiveObject | undefined, b: LiveObject | undefined): boolean => {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.owner === b.owner &&
    (a.archived ?? false) === (b.archived ?? false) &&
    (a.protected ?? false) === (b.protected ?? false) &&
    a.serverId === b.serverId &&
    // Live states are parsed JSON.
    deepEqual(a.state as JsonValue, b.state as JsonValue)
  );
};

/** Do two reads of the records say the same about every source? */
const sameRecords = (a: OwnershipIndex, b: OwnershipIndex, sourceId: string): boolean => {
  const own = (index: OwnershipIndex) =>
    JSON.stringify({
      keys: [...(index.bySource.get(sourceId) ?? [])].sort(),
      exists: index.bySource.has(sourceId),
      meta: sortedMeta(index.meta.get(sourceId)),
    });
  return othersFingerprint(a, sourceId) === othersFingerprint(b, sourceId) && own(a) === own(b);
};

/** The kinds of `keys` that have no read by identity (empty: every one has). */
export const kindsWithoutSingleRead = (
  keys: Iterable<{ kind: KindName }>,
  lookup: (kind: KindName) => AnyKindHandler,
): KindName[] => [...new Set([...keys].map((k) => k.kind))].filter((kind) => !lookup(kind).live.fetchByIds);

/**
 * The live objects with these keys, each kind's read by identity in parallel (every kind must
 * have one: see `kindsWithoutSingleRead`). `desired` gives each kind its manifests of those ids,
 * `readBefore` what a bulk read would have read first. Owners of kinds without an own marker are
 * set from `index`.
 */
export const readByKeys = async (input: {
  client: ApiClient;
  targets: readonly { kind: KindName; id: string }[];
  lookup: (kind: KindName) => AnyKindHandler;
  handlers: readonly AnyKindHandler[];
  desired: readonly DesiredObject[];
  readBefore: readonly LiveObject[];
  index: OwnershipIndex;
  /** This source: the server ids its record keeps read those objects by them. */
  sourceId?: string | undefined;
}): Promise<Map<ObjectKey, LiveObject>> => {
  const idsByKind = new Map<KindName, string[]>();
  for (const t of input.targets) idsByKind.set(t.kind, [...(idsByKind.get(t.kind) ?? []), t.id]);
  const read = await Promise.all(
    [...idsByKind].map(async ([kind, ids]) => {
      const handler = input.lookup(kind);
      const wanted = new Set(ids);
      const serverIds = serverIdsOf(input.index, input.sourceId, kind);
      const found = await (handler.live.fetchByIds?.(ids, {
        client: input.client,
        desired: input.desired.filter((d) => d.kind === kind && wanted.has(d.id)),
        managedIds: [],
        readBefore: input.readBefore.filter((o) => (handler.live.uses ?? []).includes(o.kind)),
        ...(serverIds !== undefined ? { serverIds } : {}),
      }) ?? Promise.resolve([]));
      return found.filter((o) => o.kind === kind && wanted.has(o.id));
    }),
  );
  const live = read.flat();
  setRecordedOwners(live, input.handlers, input.index);
  return new Map(live.map((o) => [objectKey(o.kind, o.id), o]));
};

/**
 * What the store reads the records with (`OwnershipStore.uses`): as the plan's read found it when
 * that read found records; else read again (the store may have skipped a look it had no reason
 * for then, and another apply, or the lease, may have made records since).
 */
const seenByStore = async (
  state: PlannedPass['state'],
  input: { client: ApiClient; handlers: readonly AnyKindHandler[]; store: OwnershipStore },
): Promise<readonly LiveObject[]> => {
  const index = state.inventories;
  if (state.seen !== undefined && index.bySource.size + index.ignored.length > 0) return state.seen;
  return readStoreUses(input);
};

/** The live objects the ownership store reads the records with (its `uses`), read now. */
export const readStoreUses = async (input: {
  client: ApiClient;
  handlers: readonly AnyKindHandler[];
  store: OwnershipStore;
}): Promise<LiveObject[]> => {
  const used = input.handlers.filter((h) => input.store.uses.includes(h.kind));
  const read = await Promise.all(
    used.map((h) => h.live.fetch({ client: input.client, desired: [], managedIds: [], readBefore: [] })),
  );
  return read.flat();
};

/**
 * An id that cannot be put in a path (`..`: the client refuses it before sending) cannot be read
 * by identity: `undefined`, for the caller to read everything instead. Any other failure is thrown.
 */
export const unreadableById = (error: unknown): undefined => {
  if (error instanceof DotSegmentPathError) return undefined;
  throw error;
};

type Rechecked =
  { same: true; ownership: OwnershipSnapshot; objects: number } | { same: false; fallback: RecheckFallback };

/**
 * Under the apply lease: what the plan will write — each object it creates or updates, read again
 * by identity, and the ownership records — still as the plan read it? Then the plan stands (with
 * the records as read now, which the apply writes this source's record after). A plan that
 * removes or hands over objects is not re-checked (removals are decided on a whole read), nor
 * one that writes a kind with no read by identity: the caller reads everything again.
 */
export const recheckWrites = async (
  planned: PlannedPass,
  input: {
    client: ApiClient;
    handlers: readonly AnyKindHandler[];
    lookup: (kind: KindName) => AnyKindHandler;
    store: OwnershipStore;
    /**
     * The GET requests the plan's read of the whole workspace took (undefined when it read only
     * what a change touched): a re-check that would cost more than that reads everything again.
     */
    fullReadGets?: number;
  },
): Promise<Rechecked> => {
  const { plan, sourceId } = planned;
  const writes = plan.changes.filter((c) => c.action !== 'noop');
  if (writes.some((c) => c.action === 'delete' || c.action === 'archive') || (plan.handOvers ?? []).length > 0)
    return { same: false, fallback: 'removals' };
  if (kindsWithoutSingleRead(writes, input.lookup).length > 0) return { same: false, fallback: 'no-single-read' };
  // Up to two GETs per object (an entity: its details and its descriptor): a large apply (the first
  // apply of a repository) re-reads in bulk, as cheap as the plan's own read, not one by one.
  if (input.fullReadGets !== undefined && writes.length * 2 > input.fullReadGets)
    return { same: false, fallback: 'many-changes' };

  const state = planned.state;
  const ownership = await input.store.read(input.client, {
    sourceId,
    seen: await seenByStore(state, input),
    kinds: new Set(input.handlers.map((h) => h.kind)),
  });
  if (!sameRecords(ownership.index, state.inventories, sourceId ?? '')) return { same: false, fallback: 'changed' };
  const fresh = await readByKeys({
    client: input.client,
    targets: writes,
    lookup: input.lookup,
    handlers: input.handlers,
    desired: planned.desired,
    readBefore: state.live,
    index: ownership.index,
    sourceId,
  }).catch(unreadableById);
  if (fresh === undefined) return { same: false, fallback: 'no-single-read' };
  for (const change of writes) {
    if (!sameLive(change.live, fresh.get(objectKey(change.kind, change.id))))
      return { same: false, fallback: 'changed' };
  }
  return { same: true, ownership, objects: writes.length };
};
