/**
 * `status`: what the workspace says about one source, read with GET requests only — its ownership
 * record (through the ownership port, as every run reads it: `recheck.ts` `readStoreUses`, then
 * `OwnershipStore.read`) and its lease (`LeaseStore.read`). Nothing is judged or written here.
 */
import type { ApiClient } from '../api/types.js';
import type { AnyKindHandler } from '../kinds/types.js';
import type { OwnershipStore } from '../ownership/store.js';
import { readStoreUses } from './recheck.js';

interface SourceStatus {
  sourceId: string;
  /** The origin the source id is bound to, as its record says (null: no record, or none recorded). */
  origin: string | null;
  /** Objects the record lists, per kind. */
  objects: Record<string, number>;
  /** Who holds the apply lease now, and since when (null: nobody). */
  lease: { holder: string; since: string | null } | null;
  /** When an apply last took the lease to write (the one holding it now included); null: never. */
  lastApply: { at: string; revision?: string } | null;
  /** With `objects: true`: every object the record lists, with the file that declared it when known. */
  list?: { kind: string; id: string; file?: string }[];
}

/** What `readSourceStatus` found besides the status: whether there is a record, and the records' warnings. */
export interface StatusRead {
  status: SourceStatus;
  recorded: boolean;
  /** The lease's record is there but cannot be read. */
  leaseUnreadable: boolean;
  /** The holder keeps the lease between its runs (a watcher) and is applying nothing. */
  leaseIdle: boolean;
  /** The lease's expiry is judged by the server's `Date`; without one, a lease not released counts as held. */
  serverTime: boolean;
}

const iso = (ms: number | undefined): string | null =>
  ms !== undefined && Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null;

const splitKey = (key: string): { kind: string; id: string } => {
  const slash = key.indexOf('/');
  return { kind: key.slice(0, slash), id: key.slice(slash + 1) };
};

export const readSourceStatus = async (
  client: ApiClient,
  input: { sourceId: string; handlers: readonly AnyKindHandler[]; store: OwnershipStore; objects: boolean },
): Promise<StatusRead> => {
  const { sourceId, handlers, store } = input;
  const seen = await readStoreUses({ client, handlers, store });
  const { index } = await store.read(client, { sourceId, seen, kinds: new Set(handlers.map((h) => h.kind)) });
  const keys = [...(index.bySource.get(sourceId) ?? [])].sort();
  const objects: Record<string, number> = {};
  for (const key of keys) {
    const { kind } = splitKey(key);
    objects[kind] = (objects[kind] ?? 0) + 1;
  }
  const declared = index.declared.get(sourceId);
  const { lease, seen: seenLease, date } = await store.lease.read(client, sourceId);
  const serverNow = date !== undefined ? Date.parse(date) : NaN;
  const serverTime = Number.isFinite(serverNow);
  const held = lease !== undefined && lease.expiresAt > 0 && (!serverTime || lease.expiresAt > serverNow);
  const status: SourceStatus = {
    sourceId,
    origin: index.meta.get(sourceId)?.origin ?? null,
    objects,
    lease: held ? { holder: lease.holder, since: iso(lease.since) } : null,
    lastApply: iso(lease?.since) !== null ? { at: iso(lease?.since) as string } : null,
    ...(input.objects
      ? {
          list: keys.map((key) => {
            const file = declared?.get(key)?.file;
            return { ...splitKey(key), ...(file !== undefined ? { file } : {}) };
          }),
        }
      : {}),
  };
  return {
    status,
    recorded: index.bySource.has(sourceId),
    leaseUnreadable: seenLease?.unreadable === true,
    leaseIdle: held && lease.idle === true,
    serverTime,
  };
};
