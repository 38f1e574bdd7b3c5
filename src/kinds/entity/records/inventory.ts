/**
 * Ownership records stored as entities: each repository (source id) keeps one record in the
 * workspace itself — an entity of the custom type `cortex-sync-inventory` whose definition lists
 * the objects it manages — so a stateless CI run knows what it owns (compare Flux's inventory and
 * kubectl's ApplySet parent object). See docs/adr-0002-ownership.md. The engine reaches this
 * through the ownership port (`src/ownership/store.ts`, `store.ts` here), never directly.
 *
 * The record's definition, as written:
 *
 * ```yaml
 * source: github.com/acme/catalog        # the source id
 * origin: github.com/acme/catalog        # the origin it is bound to
 * settings: { protect: [...], maxDeleteCount: 50 }
 * objects:                               # kind → sorted ids: every version reads this
 *   catalog-page: [home]
 *   entity: [payments, shipping]
 * serverIds:                             # ids the server assigned (an Initiative's cid); older readers ignore it
 *   initiative: { Production readiness Q3: in2da8159dbeefb974 }
 * declared:                              # since declarations were recorded; older readers ignore it
 *   files: [.cortex/catalog-pages/home.yaml, services/payments/cortex.yaml, ...]  # each file once
 *   keys: [[info.title, info.x-cortex-owners, info.x-cortex-tag]]                 # each key list once
 *   objects:                             # aligned with `objects`: [file index, key list index], or null
 *     catalog-page: [[0]]
 *     entity: [[1, 0], null]
 * ```
 *
 * Declarations are what a later version needs to follow a renamed manifest file or to share an
 * entity with another source; ownership does not depend on them. So they are left out of a record
 * they would take past `DECLARATIONS_BUDGET_BYTES` (three quarters of the API's 2 MB body limit):
 * the objects are always written, their declarations are then unknown.
 */
import { createHash } from 'node:crypto';
import { Document, isMap, isSeq } from 'yaml';
import { z } from 'zod';
import { MAX_REQUEST_BODY_BYTES } from '../../../api/errors.js';
import type { ApiClient } from '../../../api/types.js';
import { encodePathSegment } from '../../../api/types.js';
import type { KindName, ObjectKey } from '../../../core/model.js';
import { type ParsedRecord, indexRecords, sharedRecordWith } from '../../../ownership/index-records.js';
import type { Declaration, OwnershipIndex, RecordMeta } from '../../../ownership/store.js';
import { KIND_NAMES } from '../../registry.js';
import { RECORD_ENTITY_TYPE } from './names.js';

export {
  emptyOwnershipIndex as emptyInventoryIndex,
  ownInventoryOf,
  sameKeys,
} from '../../../ownership/index-records.js';
export type { OwnershipIndex as InventoryIndex, RecordMeta } from '../../../ownership/store.js';

export const INVENTORY_ENTITY_TYPE = RECORD_ENTITY_TYPE;

/** The kinds whose entries count when a caller names none: the registry's managed kinds. */
const registeredKinds = (): ReadonlySet<KindName> => new Set<KindName>(KIND_NAMES);

/** The inventory entity's tag for a source id: readable, and unique through a hash. */
export const inventoryTag = (sourceId: string): string => {
  const slug = sourceId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  const hash = createHash('sha256').update(sourceId).digest('hex').slice(0, 8);
  return `${INVENTORY_ENTITY_TYPE}-${slug}-${hash}`;
};

/**
 * The lists a record holds one entry per managed object in (ids, files, declaration entries),
 * checked in one pass each: what zod's element-by-element parse accepts (strings; arrays of
 * non-negative safe integers, or null), without the objects it makes per element. The records are
 * read on every run, and this source's own lists every object it manages (at 10,000 objects that
 * parse was most of what reading the records allocated).
 */
const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');
const isIndexList = (value: unknown): value is number[] =>
  Array.isArray(value) && value.every((item) => Number.isSafeInteger(item) && (item as number) >= 0);
const isDeclarationList = (value: unknown): value is (number[] | null)[] =>
  Array.isArray(value) && value.every((item) => item === null || isIndexList(item));
const stringList = z.custom<string[]>(isStringList, { message: 'expected a list of strings' });
const declarationList = z.custom<(number[] | null)[]>(isDeclarationList, {
  message: 'expected a list of index lists or nulls',
});

/** Declarations as stored: tables of files and key lists, and per kind one entry per id (or null). */
const declaredSchema = z
  .object({
    files: stringList,
    keys: z.array(z.array(z.string())).default([]),
    objects: z.record(z.string(), declarationList),
  })
  .loose();

const inventoryDefinitionSchema = z
  .object({
    source: z.string(),
    /** Where the source was first applied from (absent in records written before origins were recorded). */
    origin: z.unknown().optional(),
    settings: z
      .object({
        protect: z.array(z.string()).optional().catch(undefined),
        maxDeleteCount: z.number().optional().catch(undefined),
      })
      .loose()
      .optional()
      .catch(undefined),
    objects: z.record(z.string(), stringList).default({}),
    /** Where each object was declared (absent in records written before; anything unreadable is ignored). */
    declared: declaredSchema.optional().catch(undefined),
    /** The ids the server assigned to objects whose identity it assigns (absent before; anything unreadable is ignored). */
    serverIds: z.record(z.string(), z.record(z.string(), z.string())).optional().catch(undefined),
  })
  .loose();

type InventoryDefinition = z.infer<typeof inventoryDefinitionSchema>;

/** An origin that is there but is not a string (edited by hand): never equal to any run's origin. */
export const UNREADABLE_ORIGIN = '(unreadable origin)';

const metaOf = (def: InventoryDefinition): RecordMeta => {
  const origin = def.origin === undefined ? undefined : typeof def.origin === 'string' ? def.origin : UNREADABLE_ORIGIN;
  return {
    ...(origin !== undefined ? { origin } : {}),
    ...(def.settings?.protect !== undefined ? { protect: def.settings.protect } : {}),
    ...(def.settings?.maxDeleteCount !== undefined ? { maxDeleteCount: def.settings.maxDeleteCount } : {}),
  };
};

/** The declarations a record holds, per object; a kind whose list does not line up with its ids is left out. */
const declarationsOf = (def: InventoryDefinition): Map<ObjectKey, Declaration> => {
  const out = new Map<ObjectKey, Declaration>();
  const declared = def.declared;
  if (declared === undefined) return out;
  for (const [kind, entries] of Object.entries(declared.objects)) {
    const ids = def.objects[kind];
    if (ids === undefined || ids.length !== entries.length) continue;
    entries.forEach((entry, i) => {
      if (entry === null) return;
      const file = entry[0] === undefined ? undefined : declared.files[entry[0]];
      const keys = entry[1] === undefined ? undefined : declared.keys[entry[1]];
      const id = ids[i] as string;
      out.set(`${kind}/${id}`, {
        ...(file !== undefined ? { file } : {}),
        ...(keys !== undefined ? { keys } : {}),
      });
    });
  }
  return out;
};

const inventoryDescriptorSchema = z
  .object({
    info: z.object({ 'x-cortex-tag': z.string().optional(), 'x-cortex-definition': inventoryDefinitionSchema }).loose(),
  })
  .loose();

/** A record as read: its tag, what it claims, and its definition as stored (to keep what this version cannot read). */
const parseRecord = (raw: unknown): (ParsedRecord & { definition: InventoryDefinition }) | undefined => {
  const parsed = inventoryDescriptorSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const def = parsed.data.info['x-cortex-definition'];
  return {
    id: parsed.data.info['x-cortex-tag'] ?? '',
    source: def.source,
    objects: def.objects,
    meta: metaOf(def),
    declared: declarationsOf(def),
    serverIds: serverIdsOf(def),
    definition: def,
  };
};

/** The server ids a record keeps, by object key. */
const serverIdsOf = (def: InventoryDefinition): Map<ObjectKey, string> => {
  const out = new Map<ObjectKey, string>();
  for (const [kind, ids] of Object.entries(def.serverIds ?? {}))
    for (const [id, serverId] of Object.entries(ids)) if (serverId !== '') out.set(`${kind}/${id}`, serverId);
  return out;
};

/**
 * A record at a source's exact tag that does not parse (edited by hand): it is there, so it is
 * never read as absent (a run would bind the source to its own origin and write over it). It
 * lists nothing and names an origin no run has: every origin is refused until the operator rebinds
 * the source (--allow-takeover), and nothing is pruned on its word.
 */
const unreadableRecord = (sourceId: string): ParsedRecord & { definition: InventoryDefinition } => ({
  id: inventoryTag(sourceId),
  source: sourceId,
  objects: {},
  meta: { origin: UNREADABLE_ORIGIN },
  declared: new Map(),
  definition: { source: sourceId, objects: {} },
});

/** The tag a raw descriptor is at, if it says. */
const tagOfRaw = (raw: unknown): string | undefined => {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const info = (raw as { info?: unknown }).info;
  if (typeof info !== 'object' || info === null) return undefined;
  const tag = (info as Record<string, unknown>)['x-cortex-tag'];
  return typeof tag === 'string' ? tag : undefined;
};

/**
 * The records of `descriptors`; the one at `ownSource`'s exact tag counts whether or not it parses
 * (see `unreadableRecord`).
 */
const parseRecords = (
  descriptors: readonly unknown[],
  ownSource: string | undefined,
): (ParsedRecord & { definition: InventoryDefinition })[] => {
  const ownTag = ownSource === undefined ? undefined : inventoryTag(ownSource);
  return descriptors.flatMap((raw) => {
    const record = parseRecord(raw);
    if (record !== undefined) return [record];
    return ownSource !== undefined && tagOfRaw(raw) === ownTag ? [unreadableRecord(ownSource)] : [];
  });
};

/**
 * Indexes the inventory records read from the workspace (see `src/ownership/index-records.ts`):
 * only the record at the exact tag of a source id (`inventoryTag(source)`) counts as that
 * source's; a record elsewhere is listed in `ignored`, not trusted. Entries of kinds not in
 * `kinds` (default: the registry's managed kinds) are ignored.
 */
export const indexInventories = (
  descriptors: readonly unknown[],
  ownSource: string | undefined,
  kinds: ReadonlySet<KindName> = registeredKinds(),
): OwnershipIndex => indexRecords(parseRecords(descriptors, ownSource), { ownSource, kinds, recordId: inventoryTag });

/** Every inventory descriptor (one paged list filtered to the inventory type). */
const readDescriptors = (client: ApiClient): Promise<unknown[]> =>
  client.paginate<unknown>(
    {
      operation: 'read ownership inventories',
      method: 'GET',
      path: '/api/v1/catalog/descriptors',
      query: { types: [INVENTORY_ENTITY_TYPE], yaml: false, pageSize: 1000 },
    },
    'descriptors',
  );

/**
 * A source's record read by its exact tag (`GET /catalog/{tag}/openapi`): a list answer can leave
 * it out (an eventually consistent index, a page boundary that moved), and a record taken for
 * absent lets another origin bind the source and write over it. `undefined` only on a 404; any
 * other failure is thrown (nothing is decided on it).
 */
const readRecordByTag = async (client: ApiClient, sourceId: string): Promise<unknown> => {
  const tag = inventoryTag(sourceId);
  const res = await client.request<unknown>({
    operation: `read ownership inventory \`${tag}\``,
    method: 'GET',
    path: `/api/v1/catalog/${encodePathSegment(tag)}/openapi`,
    query: { yaml: false },
    acceptStatus: [404],
  });
  return res.status === 404 ? undefined : res.body;
};

/**
 * Every record the list shows, and this source's own read by its tag when the list did not show
 * it. `twice`: the list is read a second time and every record either answer showed is kept (the
 * second's version of one both showed).
 */
const readRecords = async (
  client: ApiClient,
  ownSource: string | undefined,
  twice = false,
): Promise<(ParsedRecord & { definition: InventoryDefinition })[]> => {
  const first = parseRecords(await readDescriptors(client), ownSource);
  let records = first;
  if (twice) {
    const second = parseRecords(await readDescriptors(client), ownSource);
    const shown = new Set(second.map((r) => `${r.id}\n${r.source}`));
    records = [...second, ...first.filter((r) => !shown.has(`${r.id}\n${r.source}`))];
  }
  if (ownSource === undefined) return records;
  const ownTag = inventoryTag(ownSource);
  if (records.some((r) => r.id === ownTag)) return records;
  const raw = await readRecordByTag(client, ownSource);
  return raw === undefined ? records : [...records, ...parseRecords([raw], ownSource)];
};

/** A record as parsed, with its definition as stored. */
export type InventoryRecord = ParsedRecord & { definition: InventoryDefinition };

/**
 * Other sources' records read by their exact tags (a list left them out, and an object names
 * their sources): `records` those found, `unreadable` source → why its record could not be read
 * (a failed read, a record that does not parse or names another source). A 404 is neither: that
 * source has no record.
 */
export const readRecordsByTag = async (
  client: ApiClient,
  sources: readonly string[],
): Promise<{ records: InventoryRecord[]; unreadable: Map<string, string> }> => {
  const records: InventoryRecord[] = [];
  const unreadable = new Map<string, string>();
  await Promise.all(
    [...new Set(sources)].map(async (source) => {
      const tag = inventoryTag(source);
      let raw: unknown;
      try {
        raw = await readRecordByTag(client, source);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        unreadable.set(source, `${message}; run again when the API answers`);
        return;
      }
      if (raw === undefined) return;
      const record = parseRecord(raw);
      if (record === undefined)
        unreadable.set(
          source,
          `its ownership record \`${tag}\` does not parse (edited by hand?): repair or delete it in Cortex`,
        );
      else if (record.source !== source || record.id !== tag)
        unreadable.set(
          source,
          `the record at its tag \`${tag}\` is not its own (edited by hand, or forged): delete it in Cortex, and this entity's claim naming that source if the source does not write here`,
        );
      else records.push(record);
    }),
  );
  return { records, unreadable };
};

/** Reads and indexes every inventory (one paged descriptor list filtered to the inventory type). */
export const readInventories = async (
  client: ApiClient,
  ownSource: string | undefined,
  kinds: ReadonlySet<KindName> = registeredKinds(),
): Promise<OwnershipIndex> =>
  indexRecords(await readRecords(client, ownSource), { ownSource, kinds, recordId: inventoryTag });

/**
 * Reads every inventory, and what this source's own record holds of kinds not in `kinds` (written
 * by a version that knows more kinds): kept when this version rewrites the record.
 */
export const readInventoriesKeeping = async (
  client: ApiClient,
  ownSource: string | undefined,
  kinds: ReadonlySet<KindName>,
  twice = false,
): Promise<{ index: OwnershipIndex; kept: Map<string, string[]>; records: InventoryRecord[] }> => {
  // Each record parsed once (this source's own holds every object it manages).
  const records = await readRecords(client, ownSource, twice);
  const kept = new Map<string, string[]>();
  if (ownSource !== undefined) {
    for (const record of records) {
      if (record.source !== ownSource || record.id !== inventoryTag(ownSource)) continue;
      for (const [kind, ids] of Object.entries(record.objects)) if (!kinds.has(kind)) kept.set(kind, [...ids]);
    }
  }
  return { index: indexRecords(records, { ownSource, kinds, recordId: inventoryTag }), kept, records };
};

/** Kind → sorted ids, for the keys and the entries kept. */
const sortedObjects = (keys: ReadonlySet<ObjectKey>, kept: ReadonlyMap<string, readonly string[]>) => {
  const objects: Record<string, string[]> = {};
  for (const key of [...keys].sort()) {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash);
    const ids = objects[kind] ?? [];
    ids.push(key.slice(slash + 1));
    objects[kind] = ids;
  }
  for (const [kind, ids] of kept) if (objects[kind] === undefined) objects[kind] = [...ids].sort();
  return objects;
};

/** The `declared` block for `objects`: tables of files and key lists, one entry per id. */
const declaredBlock = (
  objects: Record<string, string[]>,
  declared: ReadonlyMap<ObjectKey, Declaration>,
): Record<string, unknown> | undefined => {
  if (declared.size === 0) return undefined;
  const files: string[] = [];
  const keyLists: string[][] = [];
  const fileIndex = new Map<string, number>();
  const keysIndex = new Map<string, number>();
  const indexOf = <T>(table: T[], index: Map<string, number>, value: T, id: string): number => {
    let at = index.get(id);
    if (at === undefined) {
      at = table.length;
      table.push(value);
      index.set(id, at);
    }
    return at;
  };
  const perKind: Record<string, (number[] | null)[]> = {};
  let any = false;
  for (const [kind, ids] of Object.entries(objects)) {
    perKind[kind] = ids.map((id) => {
      const d = declared.get(`${kind}/${id}`);
      if (d?.file === undefined) return null;
      any = true;
      const entry = [indexOf(files, fileIndex, d.file, d.file)];
      if (d.keys !== undefined) {
        const keys = [...d.keys].sort();
        entry.push(indexOf(keyLists, keysIndex, keys, JSON.stringify(keys)));
      }
      return entry;
    });
  }
  return any ? { files, keys: keyLists, objects: perKind } : undefined;
};

/** The most a record with declarations may take; beyond, they are left out (see the module comment). */
export const DECLARATIONS_BUDGET_BYTES = Math.floor(MAX_REQUEST_BODY_BYTES * 0.75);

/** YAML text of a record: block style, but each declaration entry and key list on one line (flow). */
const recordText = (value: unknown): string => {
  const doc = new Document(value);
  const declared = doc.getIn(['info', 'x-cortex-definition', 'declared'], true);
  if (isMap(declared)) {
    for (const name of ['keys', 'objects']) {
      const node = declared.get(name, true);
      const lists = isMap(node) ? node.items.map((pair) => pair.value) : isSeq(node) ? node.items : [];
      for (const list of lists) if (isSeq(list)) list.flow = true;
    }
  }
  return doc.toString();
};

/**
 * The inventory record as written: the ids of each kind in one sorted list and, when known, where
 * each was declared (10,000 entities of 45-character tags take about 0.5 MB without declarations;
 * with a 70-character file each about 1.4 MB; tests measure both against the 2 MB body limit).
 */
export const inventoryDescriptor = (
  sourceId: string,
  keys: ReadonlySet<ObjectKey>,
  meta: RecordMeta = {},
  declared: ReadonlyMap<ObjectKey, Declaration> = new Map(),
  kept: ReadonlyMap<string, readonly string[]> = new Map(),
  serverIds: ReadonlyMap<ObjectKey, string> = new Map(),
): string => {
  const objects = sortedObjects(keys, kept);
  const block = declaredBlock(objects, declared);
  const ids = serverIdsBlock(keys, serverIds);
  const text = recordTextOf(sourceId, objects, meta, block, ids);
  if (block === undefined || Buffer.byteLength(text, 'utf8') <= DECLARATIONS_BUDGET_BYTES) return text;
  return recordTextOf(sourceId, objects, meta, undefined, ids);
};

/** The `serverIds` block: kind → id → server id, of the keys written (sorted). */
const serverIdsBlock = (
  keys: ReadonlySet<ObjectKey>,
  serverIds: ReadonlyMap<ObjectKey, string>,
): Record<string, Record<string, string>> | undefined => {
  const out: Record<string, Record<string, string>> = {};
  let any = false;
  for (const key of [...serverIds.keys()].sort()) {
    const serverId = serverIds.get(key);
    if (!keys.has(key) || serverId === undefined) continue;
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash);
    out[kind] = { ...out[kind], [key.slice(slash + 1)]: serverId };
    any = true;
  }
  return any ? out : undefined;
};

const recordTextOf = (
  sourceId: string,
  objects: Record<string, string[]>,
  meta: RecordMeta,
  block: Record<string, unknown> | undefined,
  serverIds: Record<string, Record<string, string>> | undefined,
): string =>
  recordText({
    openapi: '3.0.1',
    info: {
      title: `cortex-sync inventory: ${sourceId}`,
      description: `Objects managed by cortex-sync from source \`${sourceId}\`. Written by cortex-sync; do not edit.`,
      'x-cortex-tag': inventoryTag(sourceId),
      'x-cortex-type': INVENTORY_ENTITY_TYPE,
      'x-cortex-definition': {
        source: sourceId,
        ...(meta.origin !== undefined ? { origin: meta.origin } : {}),
        ...(meta.protect !== undefined || meta.maxDeleteCount !== undefined
          ? {
              settings: {
                ...(meta.protect !== undefined ? { protect: meta.protect } : {}),
                ...(meta.maxDeleteCount !== undefined ? { maxDeleteCount: meta.maxDeleteCount } : {}),
              },
            }
          : {}),
        objects,
        ...(serverIds !== undefined ? { serverIds } : {}),
        ...(block !== undefined ? { declared: block } : {}),
      },
    },
  });

/** Creates the entity type that holds ownership records (inventories, leases). */
export const createInventoryType = async (client: ApiClient): Promise<void> => {
  await client.request({
    operation: `create entity type \`${INVENTORY_ENTITY_TYPE}\` for ownership records`,
    method: 'POST',
    path: '/api/v1/catalog/definitions',
    body: {
      type: INVENTORY_ENTITY_TYPE,
      name: 'cortex-sync inventory',
      description: 'Ownership records written by cortex-sync: which objects each repository manages. Do not edit.',
      schema: { type: 'object' },
    },
    idempotent: false,
  });
};

/** Does the entity type that holds ownership records exist? */
export const recordTypeExists = async (client: ApiClient): Promise<boolean> => {
  const res = await client.request({
    operation: `read entity type \`${INVENTORY_ENTITY_TYPE}\``,
    method: 'GET',
    path: `/api/v1/catalog/definitions/${INVENTORY_ENTITY_TYPE}`,
    acceptStatus: [404],
  });
  return res.status !== 404;
};

/**
 * Writes this source's inventory, creating the inventory entity type first when it was missing
 * from what the run read (it may exist by now: the apply lease, or another apply, made it).
 */
export const writeInventory = async (
  client: ApiClient,
  sourceId: string,
  keys: ReadonlySet<ObjectKey>,
  typeExists: boolean,
  meta: RecordMeta = {},
  declared: ReadonlyMap<ObjectKey, Declaration> = new Map(),
  kept: ReadonlyMap<string, readonly string[]> = new Map(),
  serverIds: ReadonlyMap<ObjectKey, string> = new Map(),
): Promise<void> => {
  if (!typeExists && !(await recordTypeExists(client)))
    await createInventoryType(client).catch(async (error: unknown) => {
      if (!(await recordTypeExists(client))) throw error;
    });
  const tag = inventoryTag(sourceId);
  await client.request({
    operation: `write ownership inventory \`${tag}\``,
    method: 'POST',
    path: '/api/v1/open-api',
    body: inventoryDescriptor(sourceId, keys, meta, declared, kept, serverIds),
    contentType: 'application/openapi;charset=UTF-8',
    idempotent: true,
  });
};

/**
 * Another source whose record sits at this source's tag: the tag keeps 8 hex digits of a hash, so
 * a source id can be made to share another's tag (see `sharedRecordWith`).
 */
export const tagSharedWith = (
  index: OwnershipIndex,
  sourceId: string,
  tagOf: (source: string) => string = inventoryTag,
): string | undefined => sharedRecordWith(index, sourceId, tagOf);
