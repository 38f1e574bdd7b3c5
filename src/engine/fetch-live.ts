/**
 * Reads the live workspace, in three steps: the kinds some read uses (`live.uses` and the
 * ownership store's `uses`: entity lists filter by entity type name, and the store learns from the
 * entity types whether it holds any record), then the ownership records, then every other kind in
 * parallel (with what its records say this source manages) and the kinds only read that a
 * manifest references. Ownership of kinds without an own marker comes from the records. Only GET
 * requests. No kind is named here: what differs is what the kinds declare.
 */
import type { ApiClient } from '../api/types.js';
import {
  type DesiredObject,
  type Diagnostic,
  type KindName,
  type LiveObject,
  type ObjectKey,
  objectKey,
} from '../core/model.js';
import { referencesOf } from '../core/references.js';
import type { AnyKindHandler, AnyReadOnlyKind, FetchContext } from '../kinds/types.js';
import { OWNERSHIP_STORE } from '../kinds/ownership.js';
import type { OwnershipIndex, OwnershipSnapshot, OwnershipStore } from '../ownership/store.js';
import { adoptionCandidates, confirmAbsences, readRecordsTwice } from './confirm-absence.js';

export interface LiveState {
  /** The live objects of the managed kinds (never the store's own). */
  live: LiveObject[];
  /** Every source's ownership record, and how to write this source's. */
  ownership: OwnershipSnapshot;
  /** The same index as `ownership.index`. */
  inventories: OwnershipIndex;
  /** Live objects of the kinds only read that a manifest references (for reference checks only). */
  referenced: LiveObject[];
  /**
   * Kinds whose objects could not be read (a warning says so): kinds only read that a manifest
   * references, and managed kinds whose read said so (`FetchContext.unreadable`).
   */
  unreadable: Set<KindName>;
  diagnostics: Diagnostic[];
  /** What the ownership store was handed to read the records with: the objects of its `uses`, its own included. */
  seen?: readonly LiveObject[];
  /**
   * Only these objects were read live (by identity); everything else is as an earlier read found
   * it. The plan covers these objects alone. Absent: the whole workspace was read.
   */
  scope?: ReadonlySet<ObjectKey>;
  /**
   * Declared or recorded objects a list left out whose absence a read by identity could not
   * confirm (`engine/confirm-absence.ts`): neither created nor dropped from the record; an error
   * says why.
   */
  unconfirmed?: ReadonlySet<ObjectKey>;
}

/**
 * The kinds only read that some desired object references, read (in parallel with everything
 * else): what they hold, and which could not be read (each with its warning).
 */
const readReferenced = async (
  client: ApiClient,
  handlers: readonly AnyKindHandler[],
  readOnly: readonly AnyReadOnlyKind[],
  desired: readonly DesiredObject[],
): Promise<{ live: LiveObject[]; unreadable: Set<KindName>; diagnostics: Diagnostic[] }> => {
  const named = referencedReadOnlyKinds(handlers, readOnly, desired);
  const reads = await Promise.all(
    readOnly.filter((k) => named.has(k.kind)).map(async (k) => ({ k, read: await k.readLive({ client }) })),
  );
  const out = { live: [] as LiveObject[], unreadable: new Set<KindName>(), diagnostics: [] as Diagnostic[] };
  for (const { k, read } of reads) {
    if ('live' in read) out.live.push(...read.live);
    else {
      out.unreadable.add(k.kind);
      out.diagnostics.push(read.unreadable);
    }
  }
  return out;
};

/**
 * What still holds the objects a prune would remove (an archived entity holds its entity type):
 * objects of this source without a manifest, asked of every kind that has a `prune.fetchHolders` read.
 * Objects read already are not added twice.
 */
const readHolders = async (
  client: ApiClient,
  handlers: readonly AnyKindHandler[],
  desired: readonly DesiredObject[],
  live: readonly LiveObject[],
  sourceId: string,
  inventories: OwnershipIndex,
): Promise<LiveObject[]> => {
  const declared = new Set(desired.map((o) => objectKey(o.kind, o.id)));
  const own = inventories.bySource.get(sourceId);
  const targets = live.filter((o) => {
    const key = objectKey(o.kind, o.id);
    return o.owner === sourceId && own?.has(key) === true && !declared.has(key) && !o.protected && !o.archived;
  });
  if (targets.length === 0) return [];
  const known = new Set(live.map((o) => objectKey(o.kind, o.id)));
  const found = await Promise.all(
    handlers.map((h) => h.prune.fetchHolders?.(targets, { client }) ?? Promise.resolve([])),
  );
  return found.flat().filter((o) => {
    const key = objectKey(o.kind, o.id);
    if (known.has(key)) return false;
    known.add(key);
    return true;
  });
};

/** How one kind is read: as a plan reads it (`live.fetch`), or as `export` does. */
export type ReadKind = (handler: AnyKindHandler, ctx: FetchContext) => Promise<LiveObject[]>;

const planRead: ReadKind = (handler, ctx) => handler.live.fetch(ctx);

/**
 * Reads `handlers` in the three steps of the module comment, with `read` for each kind; `usesOf`
 * says which kinds a kind's read uses. Owners of kinds without an own marker are set from the
 * records (and removed when the records do not list them).
 */
export const readKinds = async (input: {
  client: ApiClient;
  handlers: readonly AnyKindHandler[];
  store: OwnershipStore;
  desired: readonly DesiredObject[];
  sourceId: string | undefined;
  usesOf: (handler: AnyKindHandler) => readonly KindName[];
  read: ReadKind;
  /** The kinds whose entries of the records count (default: those of `handlers`). */
  recordKinds?: ReadonlySet<KindName>;
  /** Told when a kind's read says this key may not read its objects (`FetchContext.unreadable`). */
  onUnreadable?: (kind: KindName, warning: Diagnostic) => void;
}): Promise<{ live: LiveObject[]; ownership: OwnershipSnapshot; seen: LiveObject[] }> => {
  const { client, handlers, store, desired, sourceId, onUnreadable } = input;
  const desiredOf = (kind: KindName) => desired.filter((o) => o.kind === kind);
  const unreadableOf = (kind: KindName): Pick<FetchContext, 'unreadable'> =>
    onUnreadable ? { unreadable: (warning) => onUnreadable(kind, warning) } : {};
  const used = new Set<KindName>([...store.uses, ...handlers.flatMap(input.usesOf)]);

  // 1. What other reads use, each after what it uses itself (entity types before entities).
  const first = handlers.filter((h) => used.has(h.kind));
  const seen: LiveObject[] = [];
  const done = new Set<KindName>();
  while (done.size < first.length) {
    const ready = first.filter(
      (h) => !done.has(h.kind) && input.usesOf(h).every((k) => k === h.kind || done.has(k) || !used.has(k)),
    );
    // A cycle among the kinds' declared uses: read the rest together rather than never.
    const wave = ready.length > 0 ? ready : first.filter((h) => !done.has(h.kind));
    const readBefore = seen.filter((o) => !store.isOwn(o));
    const found = await Promise.all(
      wave.map((h) =>
        input.read(h, { client, desired: desiredOf(h.kind), managedIds: [], readBefore, ...unreadableOf(h.kind) }),
      ),
    );
    for (const h of wave) done.add(h.kind);
    seen.push(...found.flat());
  }

  // 2. The ownership records (every source's), with what the store needed of step 1.
  const kinds = input.recordKinds ?? new Set(handlers.map((h) => h.kind));
  const ownership = await store.read(client, { sourceId, seen, kinds });
  const own = sourceId !== undefined ? ownership.index.bySource.get(sourceId) : undefined;
  const managedIdsOf = (kind: KindName): string[] =>
    [...(own ?? [])].filter((key) => key.startsWith(`${kind}/`)).map((key) => key.slice(kind.length + 1));

  // 3. Every other kind, in parallel; cortex-sync's own records are never part of what is read.
  const readBefore = seen.filter((o) => !store.isOwn(o));
  const rest = await Promise.all(
    handlers
      .filter((h) => !used.has(h.kind))
      .map((h) =>
        input.read(h, {
          client,
          desired: desiredOf(h.kind),
          managedIds: managedIdsOf(h.kind),
          readBefore,
          ...unreadableOf(h.kind),
        }),
      ),
  );
  const live = [...readBefore, ...rest.flat()];

  setRecordedOwners(live, handlers, ownership.index);
  return { live, ownership, seen };
};

/**
 * Owners of the objects of kinds without an own marker, from the records (removed when the
 * records do not list them).
 */
export const setRecordedOwners = (
  live: readonly LiveObject[],
  handlers: readonly AnyKindHandler[],
  index: OwnershipIndex,
): void => {
  const ownershipOnObject = new Set(handlers.filter((h) => h.live.ownershipOnObject).map((h) => h.kind));
  for (const object of live) {
    if (ownershipOnObject.has(object.kind)) continue;
    const owner = index.ownerOf.get(objectKey(object.kind, object.id));
    if (owner !== undefined) object.owner = owner;
    else delete object.owner;
  }
};

/** The kinds only read that some desired object references. */
export const referencedReadOnlyKinds = (
  handlers: readonly AnyKindHandler[],
  readOnly: readonly AnyReadOnlyKind[],
  desired: readonly DesiredObject[],
): Set<KindName> => {
  const byKind = new Map(handlers.map((h) => [h.kind, h]));
  const readable = new Set(readOnly.map((k) => k.kind));
  const named = new Set<KindName>();
  for (const obj of desired) {
    const handler = byKind.get(obj.kind);
    if (handler === undefined) continue;
    for (const ref of referencesOf(handler, obj)) if (readable.has(ref.kind)) named.add(ref.kind);
  }
  return named;
};

export const fetchLiveState = async (input: {
  client: ApiClient;
  handlers: readonly AnyKindHandler[];
  /** Where the engine's records are kept (default: the registry's store). */
  store?: OwnershipStore;
  /** Kinds only read: those the desired objects reference are read too (`referenced`). */
  readOnlyKinds?: readonly AnyReadOnlyKind[];
  desired: readonly DesiredObject[];
  /** Undefined when the run has no source id (nothing is owned: objects are left unmarked). */
  sourceId: string | undefined;
  /** The kinds whose entries of the records count, when more than `handlers` (export reads some kinds its own way). */
  recordKinds?: ReadonlySet<KindName>;
  /**
   * Read what still holds the objects of this source that have no manifest (kinds'
   * `prune.fetchHolders`), so a plan knows what a prune would keep. `export` does not need it.
   */
  holders?: boolean;
}): Promise<LiveState> => {
  const { client, handlers, desired, sourceId } = input;
  const unreadable = new Set<KindName>();
  const unreadableWarnings: Diagnostic[] = [];
  const onUnreadable = (kind: KindName, warning: Diagnostic): void => {
    if (!unreadable.has(kind)) unreadableWarnings.push(warning);
    unreadable.add(kind);
  };
  const [{ live, ownership, seen }, referenced] = await Promise.all([
    readKinds({
      ...input,
      store: input.store ?? OWNERSHIP_STORE,
      usesOf: (h) => h.live.uses ?? [],
      read: planRead,
      onUnreadable,
    }),
    readReferenced(client, handlers, input.readOnlyKinds ?? [], desired),
  ]);
  for (const kind of referenced.unreadable) unreadable.add(kind);
  const store = input.store ?? OWNERSHIP_STORE;
  const confirmed = await confirmLive({ ...input, store, live, ownership, seen });
  if (input.holders && sourceId !== undefined)
    live.push(...(await readHolders(client, handlers, desired, live, sourceId, confirmed.ownership.index)));
  return {
    live,
    ownership: confirmed.ownership,
    inventories: confirmed.ownership.index,
    referenced: referenced.live,
    unreadable,
    diagnostics: [
      ...confirmed.ownership.diagnostics,
      ...unreadableWarnings,
      ...referenced.diagnostics,
      ...confirmed.diagnostics,
    ],
    seen,
    ...(confirmed.unconfirmed.size > 0 ? { unconfirmed: confirmed.unconfirmed } : {}),
  };
};

/**
 * What the lists left out, confirmed (`engine/confirm-absence.ts`): declared and recorded objects
 * read again by identity (those found join `live`), and, before an object no record lists is
 * adopted, the records read again (an owner either read showed counts).
 */
const confirmLive = async (input: {
  client: ApiClient;
  handlers: readonly AnyKindHandler[];
  store: OwnershipStore;
  desired: readonly DesiredObject[];
  sourceId: string | undefined;
  recordKinds?: ReadonlySet<KindName>;
  live: LiveObject[];
  ownership: OwnershipSnapshot;
  seen: readonly LiveObject[];
}): Promise<{ ownership: OwnershipSnapshot; unconfirmed: Set<ObjectKey>; diagnostics: Diagnostic[] }> => {
  const { client, handlers, desired, sourceId, live } = input;
  const check = await confirmAbsences({ client, handlers, desired, live, index: input.ownership.index, sourceId });
  setRecordedOwners(check.found, handlers, input.ownership.index);
  live.push(...check.found);
  let ownership = input.ownership;
  if (sourceId !== undefined && adoptionCandidates(handlers, desired, live).length > 0) {
    const first = ownership.index;
    ownership = await readRecordsTwice(client, input.store, {
      sourceId,
      seen: input.seen,
      kinds: input.recordKinds ?? new Set(handlers.map((h) => h.kind)),
    });
    setRecordedOwners(live, handlers, ownership.index);
    // An owner the first read showed still counts: a later list can leave its record out too.
    const recorded = new Set(handlers.filter((h) => !h.live.ownershipOnObject).map((h) => h.kind));
    for (const object of live) {
      if (!recorded.has(object.kind) || object.owner !== undefined) continue;
      const owner = first.ownerOf.get(objectKey(object.kind, object.id));
      if (owner !== undefined) object.owner = owner;
    }
  }
  ownership = await readNamedRecords(client, handlers, desired, live, ownership, sourceId);
  return { ownership, unconfirmed: new Set(check.unconfirmed.keys()), diagnostics: check.diagnostics };
};

/**
 * The sources to read, each once, in turns over the objects (by key): each object's owner, then
 * each object's first claimant, and so on. One object naming many sources (anyone who can edit it
 * can) then takes its turns, not the reads of the sources the other objects name.
 */
const readOrder = (namedBy: ReadonlyMap<ObjectKey, readonly string[]>): string[] => {
  const lists = [...namedBy].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, names]) => names);
  const order = new Set<string>();
  const longest = lists.reduce((most, names) => Math.max(most, names.length), 0);
  for (let turn = 0; turn < longest; turn += 1)
    for (const names of lists) {
      const name = names[turn];
      if (name !== undefined) order.add(name);
    }
  return [...order];
};

/** The most records of sources named on declared objects one run reads by their ids. */
export const MAX_NAMED_RECORD_READS = 50;

/**
 * The records the list left out of the sources that declared objects of kinds shared key by key
 * (`write.sharedWrites`) name — their owner, and each source that names itself on them as writing
 * keys (`claimants`) — read by their ids (ADR 0004): a conflict with a key such a source declares
 * is judged on its record, never missed because a list left the record out; a record that cannot
 * be read is in `index.unreadable`, and the plan refuses the objects naming it. Costs nothing when
 * the list showed every such record.
 */
export const readNamedRecords = async (
  client: ApiClient,
  handlers: readonly AnyKindHandler[],
  desired: readonly DesiredObject[],
  live: readonly LiveObject[],
  ownership: OwnershipSnapshot,
  sourceId: string | undefined,
): Promise<OwnershipSnapshot> => {
  // A run without a source id is refused in merge mode (`merge-needs-source-id`); its plan still shows the conflicts.
  if (ownership.readRecordsOf === undefined) return ownership;
  const shared = new Map(handlers.flatMap((h) => (h.write?.sharedWrites ? [[h.kind, h.write.sharedWrites]] : [])));
  if (shared.size === 0) return ownership;
  const declared = new Set(desired.map((d) => objectKey(d.kind, d.id)));
  const isMissing = (s: string): boolean => s !== sourceId && !ownership.index.bySource.has(s);
  const namedBy = new Map<ObjectKey, string[]>();
  for (const object of live) {
    const writes = shared.get(object.kind);
    const key = objectKey(object.kind, object.id);
    if (writes === undefined || !declared.has(key)) continue;
    const names = [...(object.owner !== undefined ? [object.owner] : []), ...(writes.claimants?.(object) ?? [])];
    namedBy.set(key, [...new Set(names.filter(isMissing))]);
  }
  const missing = readOrder(namedBy);
  if (missing.length === 0) return ownership;
  // Anyone who can edit an entity can name sources on it: the reads are bounded, the rest refused.
  const read = await ownership.readRecordsOf(client, missing.slice(0, MAX_NAMED_RECORD_READS));
  if (missing.length > MAX_NAMED_RECORD_READS) {
    const unread = new Map(read.index.unreadable ?? []);
    for (const source of missing.slice(MAX_NAMED_RECORD_READS))
      unread.set(
        source,
        `more than ${MAX_NAMED_RECORD_READS} sources named on the declared objects are missing from the list of records, and this run reads no more than that by their ids: remove in Cortex the claims (custom metadata keys \`cortex-sync-merge-…\`) of sources that no longer write here`,
      );
    read.index.unreadable = unread;
  }
  // Owners the records read now add (owners set before stay: an earlier read's owner still counts).
  const recorded = new Set(handlers.filter((h) => !h.live.ownershipOnObject).map((h) => h.kind));
  for (const object of live) {
    if (!recorded.has(object.kind) || object.owner !== undefined) continue;
    const owner = read.index.ownerOf.get(objectKey(object.kind, object.id));
    if (owner !== undefined) object.owner = owner;
  }
  return read;
};
