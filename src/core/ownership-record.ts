/**
 * What this run writes into its source's ownership record besides the keys (pure): which kinds
 * the record tracks, and where each object it will hold was declared.
 */
import type { DesiredObject, LiveObject, ObjectKey } from './model.js';
import { objectKey } from './model.js';
import type { KindModel } from './kind-contract.js';
import type { Declaration } from './record-meta.js';

/**
 * The kinds whose objects a source's record lists: all of them. Entities carry a marker too, but a
 * marker can be copied by hand onto a foreign entity; prune needs both (see `ownInventoryOf`).
 */
export const trackedKinds = (handlers: readonly { kind: string }[]): Set<string> =>
  new Set(handlers.map((h) => h.kind));

/**
 * Where each object was declared: a desired object by its manifest file and, for kinds whose
 * objects another source may co-own, the keys its manifest sets; any other object the record
 * holds as the record had it (`previous`).
 */
export const declarationsFor = (
  desired: readonly DesiredObject[],
  handlers: readonly (Pick<KindModel, 'kind'> & { manifest: Pick<KindModel['manifest'], 'managedKeys'> })[],
  previous: ReadonlyMap<ObjectKey, Declaration> = new Map(),
): Map<ObjectKey, Declaration> => {
  const byKind = new Map(handlers.map((h) => [h.kind, h]));
  const out = new Map(previous);
  for (const obj of desired) {
    const keys = byKind.get(obj.kind)?.manifest.managedKeys?.(obj);
    out.set(objectKey(obj.kind, obj.id), { file: obj.source.file, ...(keys !== undefined ? { keys } : {}) });
  }
  return out;
};

/**
 * The server-assigned ids the record keeps (kinds whose identity the server assigns): each object
 * read live by its id now; an object not read live keeps the record's entry only while its absence
 * is unconfirmed (a confirmed absence drops it: the id names nothing any more).
 */
export const serverIdsFor = (
  handlers: readonly (Pick<KindModel, 'kind'> & { live: Pick<KindModel['live'], 'serverAssignsIdentity'> })[],
  live: readonly LiveObject[],
  previous: ReadonlyMap<ObjectKey, string> = new Map(),
  unconfirmed: ReadonlySet<ObjectKey> = new Set(),
): Map<ObjectKey, string> => {
  const kinds = new Set(handlers.filter((h) => h.live.serverAssignsIdentity === true).map((h) => h.kind));
  const out = new Map<ObjectKey, string>();
  for (const [key, serverId] of previous) if (unconfirmed.has(key)) out.set(key, serverId);
  for (const o of live) if (kinds.has(o.kind) && o.serverId !== undefined) out.set(objectKey(o.kind, o.id), o.serverId);
  return out;
};
