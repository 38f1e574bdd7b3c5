/**
 * Who owns what, from the records read (pure): the rules that hold whatever the records are
 * stored in. Only the record at a source's own id counts as that source's (anyone who can write
 * the workspace can write one claiming any source, but the id is derived from the source id and a
 * manifest may not declare it); an object two sources list belongs to this run's source when it
 * is one of them, else to the first, and is reported.
 */
import { type KindName, type ObjectKey, objectKey } from '../core/model.js';
import type { Declaration, OwnershipIndex, RecordMeta } from './store.js';

/** One record as the adapter parsed it. */
export interface ParsedRecord {
  /** Where it is stored (its tag). */
  id: string;
  /** The source it claims to be. */
  source: string;
  /** Kind → ids, as stored. */
  objects: Record<string, readonly string[]>;
  meta: RecordMeta;
  /** Parsed for one index, which may take this map over. */
  declared: Map<ObjectKey, Declaration>;
  /** Server-assigned ids by object key, as stored (entries of keys the record does not list are ignored). */
  serverIds?: ReadonlyMap<ObjectKey, string>;
}

export const emptyOwnershipIndex = (): OwnershipIndex => ({
  bySource: new Map(),
  ownerOf: new Map(),
  conflicts: [],
  ignored: [],
  meta: new Map(),
  declared: new Map(),
  serverIds: new Map(),
});

/** Indexes the records (see the module comment); entries of kinds not in `kinds` are ignored. */
export const indexRecords = (
  records: readonly ParsedRecord[],
  options: { ownSource: string | undefined; kinds: ReadonlySet<KindName>; recordId: (source: string) => string },
): OwnershipIndex => {
  const index = emptyOwnershipIndex();
  // Each key's first claimant, and every claimant (in record order) of a key listed more than once:
  // the records are indexed on every run and one lists every object its source manages, so a
  // key claimed once costs no list of its own.
  const firstClaim = new Map<ObjectKey, string>();
  const sharedClaims = new Map<ObjectKey, string[]>();
  for (const record of records) {
    if (record.id !== options.recordId(record.source)) {
      index.ignored.push({ tag: record.id, source: record.source });
      continue;
    }
    const keys = new Set<ObjectKey>();
    for (const [kind, ids] of Object.entries(record.objects)) {
      if (!options.kinds.has(kind)) continue;
      for (const id of ids) keys.add(objectKey(kind, id));
    }
    index.bySource.set(record.source, keys);
    index.meta.set(record.source, record.meta);
    index.declared.set(record.source, declarationsAmong(record.declared, keys));
    const serverIds = new Map<ObjectKey, string>();
    for (const [key, serverId] of record.serverIds ?? []) if (keys.has(key)) serverIds.set(key, serverId);
    index.serverIds.set(record.source, serverIds);
    for (const key of keys) {
      const first = firstClaim.get(key);
      if (first === undefined) firstClaim.set(key, record.source);
      else sharedClaims.set(key, [...(sharedClaims.get(key) ?? [first]), record.source]);
    }
  }
  const { ownSource } = options;
  for (const [key, first] of firstClaim) {
    const sources = sharedClaims.get(key);
    const own = ownSource !== undefined && (first === ownSource || sources?.includes(ownSource) === true);
    index.ownerOf.set(key, own ? ownSource : first);
    if (sources !== undefined) index.conflicts.push({ key, sources });
  }
  return index;
};

/**
 * A record's declarations of `keys` alone: the parsed record's own map when it declares nothing
 * else (a record is parsed for one index: the map is handed on, not shared).
 */
const declarationsAmong = (
  declared: Map<ObjectKey, Declaration>,
  keys: ReadonlySet<ObjectKey>,
): Map<ObjectKey, Declaration> => {
  let all = true;
  for (const key of declared.keys()) if (!keys.has(key)) all = false;
  if (all) return declared;
  const among = new Map<ObjectKey, Declaration>();
  for (const [key, declaration] of declared) if (keys.has(key)) among.set(key, declaration);
  return among;
};

/** What this source's own record lists (empty when it has none): prune removes nothing else. */
export const ownInventoryOf = (index: OwnershipIndex, sourceId: string): ReadonlySet<ObjectKey> =>
  index.bySource.get(sourceId) ?? new Set<ObjectKey>();

/**
 * Another source whose record sits at this source's id: an id keeps only a short hash, so a
 * source id can be made to share another's. Writing this source's record there would replace the
 * other's (its objects would look unowned, then adoptable). A plan error instead.
 */
export const sharedRecordWith = (
  index: OwnershipIndex,
  sourceId: string,
  recordId: (source: string) => string,
): string | undefined => {
  const id = recordId(sourceId);
  return [...index.bySource.keys()].find((other) => other !== sourceId && recordId(other) === id);
};

export const sameKeys = (a: ReadonlySet<ObjectKey>, b: ReadonlySet<ObjectKey>): boolean =>
  a.size === b.size && [...a].every((k) => b.has(k));

/**
 * What every source but `sourceId` records, in a form two reads can be compared by (sorted; the
 * ignored records and the conflicts included): equal when no other source's record changed.
 */
export const othersFingerprint = (index: OwnershipIndex, sourceId: string): string => {
  const sources = [...index.bySource.keys()].filter((s) => s !== sourceId).sort();
  return JSON.stringify({
    sources: sources.map((s) => ({
      source: s,
      keys: [...(index.bySource.get(s) ?? [])].sort(),
      meta: sortedMeta(index.meta.get(s)),
    })),
    ignored: index.ignored.map((i) => `${i.tag} ${i.source}`).sort(),
    conflicts: index.conflicts.map((c) => `${c.key} ${[...c.sources].sort().join(',')}`).sort(),
  });
};

/** A record's meta in a fixed key order (for comparisons). */
export const sortedMeta = (meta: RecordMeta | undefined): RecordMeta => ({
  ...(meta?.origin !== undefined ? { origin: meta.origin } : {}),
  ...(meta?.protect !== undefined ? { protect: [...meta.protect] } : {}),
  ...(meta?.maxDeleteCount !== undefined ? { maxDeleteCount: meta.maxDeleteCount } : {}),
});

/**
 * Every other source's claim on each object its record lists, with the keys it declares there
 * (undefined when its record does not say): what a source writing only its declared keys is
 * checked against (`field-conflict`, `core/shared-writes.ts`).
 */
export const otherClaimsOf = (
  index: OwnershipIndex,
  sourceId: string | undefined,
): ((key: ObjectKey) => readonly { source: string; keys?: readonly string[] }[]) => {
  // Built on the first question: a run with no kind that shares writes never asks.
  let claims: Map<ObjectKey, { source: string; keys?: readonly string[] }[]> | undefined;
  const build = (): Map<ObjectKey, { source: string; keys?: readonly string[] }[]> => {
    const claims = new Map<ObjectKey, { source: string; keys?: readonly string[] }[]>();
    for (const [source, keys] of index.bySource) {
      if (source === sourceId) continue;
      const declared = index.declared.get(source);
      for (const key of keys) {
        const own = declared?.get(key)?.keys;
        const list = claims.get(key) ?? [];
        list.push(own !== undefined ? { source, keys: own } : { source });
        claims.set(key, list);
      }
    }
    return claims;
  };
  return (key) => {
    claims ??= build();
    return claims.get(key) ?? [];
  };
};
