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
  declared: Map<ObjectKey, Declaration>;
}

export const emptyOwnershipIndex = (): OwnershipIndex => ({
  bySource: new Map(),
  ownerOf: new Map(),
  conflicts: [],
  ignored: [],
  meta: new Map(),
  declared: new Map(),
});

/** Indexes the records (see the module comment); entries of kinds not in `kinds` are ignored. */
export const indexRecords = (
  records: readonly ParsedRecord[],
  options: { ownSource: string | undefined; kinds: ReadonlySet<KindName>; recordId: (source: string) => string },
): OwnershipIndex => {
  const index = emptyOwnershipIndex();
  const claims = new Map<ObjectKey, string[]>();
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
    index.declared.set(record.source, new Map([...record.declared].filter(([key]) => keys.has(key))));
    for (const key of keys) claims.set(key, [...(claims.get(key) ?? []), record.source]);
  }
  for (const [key, sources] of claims) {
    const { ownSource } = options;
    index.ownerOf.set(key, ownSource !== undefined && sources.includes(ownSource) ? ownSource : (sources[0] as string));
    if (sources.length > 1) index.conflicts.push({ key, sources });
  }
  return index;
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
