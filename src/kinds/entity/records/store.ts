/**
 * The ownership store (`src/ownership/store.ts`) over the entity wire format: ownership records
 * and leases are entities of the custom entity type `cortex-sync-inventory` (`inventory.ts`,
 * `lease.ts`). Whether that type exists is seen in the entity types a run reads anyway, so a
 * workspace without records costs no request; the first write creates the type.
 */
import type { ApiClient } from '../../../api/types.js';
import type { Diagnostic, LiveObject } from '../../../core/model.js';
import { emptyOwnershipIndex, indexRecords } from '../../../ownership/index-records.js';
import type { OwnershipIndex, OwnershipSnapshot, OwnershipStore } from '../../../ownership/store.js';
import { KIND as ENTITY_TYPE_KIND } from '../../entity-type/model.js';
import {
  INVENTORY_ENTITY_TYPE,
  type InventoryRecord,
  inventoryTag,
  readInventoriesKeeping,
  readRecordsByTag,
  recordTypeExists,
  writeInventory,
} from './inventory.js';
import { ensureRecordType, leaseTag, readLeaseAnswer, writeLease } from './lease.js';

/** The record type, among the entity types read. */
const isRecordType = (obj: LiveObject): boolean => obj.kind === ENTITY_TYPE_KIND && obj.id === INVENTORY_ENTITY_TYPE;

export const entityRecordStore: OwnershipStore = {
  uses: [ENTITY_TYPE_KIND],
  isOwn: isRecordType,
  recordId: inventoryTag,
  read: async (client, { sourceId, seen, kinds, twice }) => {
    // The record type missing from the entity types read is a list's word only: confirmed by its
    // definition (one GET) before every record is taken for absent.
    let typeExists = seen.some(isRecordType) || (await recordTypeExists(client));
    const { index, kept, records } = typeExists
      ? await readInventoriesKeeping(client, sourceId, kinds, twice === true)
      : { index: emptyOwnershipIndex(), kept: new Map<string, string[]>(), records: [] };
    const diagnostics: Diagnostic[] = [];
    for (const forged of index.ignored) {
      diagnostics.push({
        severity: 'warning',
        code: 'inventory-ignored',
        message: `the entity \`${forged.tag}\` claims to be the inventory of source \`${forged.source}\` but is not at that source's tag; it is ignored (delete it if nobody knows why it exists)`,
      });
    }
    for (const conflict of index.conflicts) {
      // Sources that each record the keys they declare share the object key by key (ADR 0004):
      // whether their keys overlap is the plan's `field-conflict`, not a warning about the records.
      if (conflict.sources.every((s) => index.declared.get(s)?.get(conflict.key)?.keys !== undefined)) continue;
      diagnostics.push({
        severity: 'warning',
        code: 'inventory-conflict',
        message: `${conflict.key} is listed in the inventories of several sources: ${conflict.sources.join(', ')}`,
      });
    }
    const write = async (writer: ApiClient, record: Parameters<OwnershipSnapshot['write']>[1]): Promise<void> => {
      await writeInventory(
        writer,
        record.sourceId,
        record.objects,
        typeExists,
        record.meta,
        record.declared,
        record.sourceId === sourceId ? kept : new Map(),
        record.serverIds,
      );
      typeExists = true;
    };
    // Records the list left out, read by their tags: indexed with the others (nothing to read without the record type).
    const snapshotOf = (shown: readonly InventoryRecord[], at: OwnershipIndex): OwnershipSnapshot => ({
      index: at,
      diagnostics,
      write,
      readRecordsOf: async (reader, sources) => {
        const missing = sources.filter((source) => source !== sourceId && !at.bySource.has(source));
        if (missing.length === 0 || !typeExists) return snapshotOf(shown, at);
        const read = await readRecordsByTag(reader, missing);
        const all = [...shown, ...read.records];
        const next = indexRecords(all, { ownSource: sourceId, kinds, recordId: inventoryTag });
        next.unreadable = new Map([...(at.unreadable ?? []), ...read.unreadable]);
        return snapshotOf(all, next);
      },
    });
    return snapshotOf(records, index);
  },
  lease: {
    id: leaseTag,
    prepare: ensureRecordType,
    read: readLeaseAnswer,
    write: writeLease,
  },
};
