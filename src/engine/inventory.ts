/**
 * Ownership records for the kinds that cannot carry a marker themselves (entity types,
 * dependencies, catalog pages, Initiatives, Scaffolder templates). Each repository (source id)
 * keeps one inventory in the workspace itself — an entity of the custom type
 * `cortex-sync-inventory` whose definition lists the objects it manages — so a stateless CI run
 * knows what it owns (compare Flux's inventory and kubectl's ApplySet parent object).
 * See docs/adr-0002-ownership.md.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { z } from 'zod';
import type { ApiClient } from '../api/types.js';
import { encodePathSegment } from '../api/types.js';
import { type KindName, type ObjectKey, objectKey } from '../core/model.js';
import { RECORD_ENTITY_TYPE } from '../kinds/entity/records/names.js';
import { KIND_NAMES } from '../kinds/registry.js';

export const INVENTORY_ENTITY_TYPE = RECORD_ENTITY_TYPE;

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
    objects: z.record(z.string(), z.array(z.string())).default({}),
  })
  .loose();

/**
 * What a source's record holds besides its objects: the origin its source id is bound to (see
 * `core/source-binding.ts`), and the settings of its last apply that limit removals, so that a
 * later plan can name a protect pattern removed or a count limit raised since.
 */
export interface RecordMeta {
  origin?: string;
  protect?: string[];
  maxDeleteCount?: number;
}

/** An origin that is there but is not a string (edited by hand): never equal to any run's origin. */
export const UNREADABLE_ORIGIN = '(unreadable origin)';

const metaOf = (def: z.infer<typeof inventoryDefinitionSchema>): RecordMeta => {
  const origin = def.origin === undefined ? undefined : typeof def.origin === 'string' ? def.origin : UNREADABLE_ORIGIN;
  return {
    ...(origin !== undefined ? { origin } : {}),
    ...(def.settings?.protect !== undefined ? { protect: def.settings.protect } : {}),
    ...(def.settings?.maxDeleteCount !== undefined ? { maxDeleteCount: def.settings.maxDeleteCount } : {}),
  };
};

const inventoryDescriptorSchema = z
  .object({
    info: z.object({ 'x-cortex-tag': z.string().optional(), 'x-cortex-definition': inventoryDefinitionSchema }).loose(),
  })
  .loose();

/** Every source's inventory, read in one paged request. */
export interface InventoryIndex {
  /** source id → keys it manages. */
  bySource: Map<string, Set<ObjectKey>>;
  /** Object key → owning source id (the first one found; `conflicts` lists the others). */
  ownerOf: Map<ObjectKey, string>;
  conflicts: { key: ObjectKey; sources: string[] }[];
  /** Records claiming to be a source's inventory that are not at that source's tag: not trusted. */
  ignored: { tag: string; source: string }[];
  /** source id → its record's origin and settings (records at the source's own tag only). */
  meta: Map<string, RecordMeta>;
}

export const emptyInventoryIndex = (): InventoryIndex => ({
  bySource: new Map(),
  ownerOf: new Map(),
  conflicts: [],
  ignored: [],
  meta: new Map(),
});

const isKindName = (value: string): value is KindName => (KIND_NAMES as readonly string[]).includes(value);

/**
 * Indexes the inventory records read from the workspace. Only the record at the exact tag of a
 * source id (`inventoryTag(source)`) counts as that source's inventory: anyone who can create an
 * entity can write one claiming any source, but the tag is deterministic and a manifest may not
 * declare it (see the entity kind's `reservedFor`), so a record elsewhere is listed in `ignored`, not trusted.
 */
export const indexInventories = (descriptors: readonly unknown[], ownSource: string | undefined): InventoryIndex => {
  const index = emptyInventoryIndex();
  const claims = new Map<ObjectKey, string[]>();
  for (const raw of descriptors) {
    const parsed = inventoryDescriptorSchema.safeParse(raw);
    if (!parsed.success) continue;
    const def = parsed.data.info['x-cortex-definition'];
    const tag = parsed.data.info['x-cortex-tag'] ?? '';
    if (tag !== inventoryTag(def.source)) {
      index.ignored.push({ tag, source: def.source });
      continue;
    }
    const keys = new Set<ObjectKey>();
    for (const [kind, ids] of Object.entries(def.objects)) {
      if (!isKindName(kind)) continue;
      for (const id of ids) keys.add(objectKey(kind, id));
    }
    index.bySource.set(def.source, keys);
    index.meta.set(def.source, metaOf(def));
    for (const key of keys) claims.set(key, [...(claims.get(key) ?? []), def.source]);
  }
  for (const [key, sources] of claims) {
    index.ownerOf.set(key, ownSource !== undefined && sources.includes(ownSource) ? ownSource : (sources[0] as string));
    if (sources.length > 1) index.conflicts.push({ key, sources });
  }
  return index;
};

/** Reads every inventory (one paged descriptor list filtered to the inventory type). */
export const readInventories = async (client: ApiClient, ownSource: string | undefined): Promise<InventoryIndex> => {
  const descriptors = await client.paginate<unknown>(
    {
      operation: 'read ownership inventories',
      method: 'GET',
      path: '/api/v1/catalog/descriptors',
      query: { types: [INVENTORY_ENTITY_TYPE], yaml: false, pageSize: 1000 },
    },
    'descriptors',
  );
  return indexInventories(descriptors, ownSource);
};

const sortedObjects = (keys: ReadonlySet<ObjectKey>): Record<string, string[]> => {
  const objects: Record<string, string[]> = {};
  for (const key of [...keys].sort()) {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash);
    const ids = objects[kind] ?? [];
    ids.push(key.slice(slash + 1));
    objects[kind] = ids;
  }
  return objects;
};

export const sameKeys = (a: ReadonlySet<ObjectKey>, b: ReadonlySet<ObjectKey>): boolean =>
  a.size === b.size && [...a].every((k) => b.has(k));

/**
 * The inventory record as written: the ids of each kind in one sorted list (10,000 entities of
 * 40-character tags take about 0.5 MB, well inside the API's 2 MB body limit; a test measures it).
 */
export const inventoryDescriptor = (sourceId: string, keys: ReadonlySet<ObjectKey>, meta: RecordMeta = {}): string =>
  stringify({
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
        objects: sortedObjects(keys),
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

/** Writes this source's inventory, creating the inventory entity type first when it is missing. */
export const writeInventory = async (
  client: ApiClient,
  sourceId: string,
  keys: ReadonlySet<ObjectKey>,
  typeExists: boolean,
  meta: RecordMeta = {},
): Promise<void> => {
  if (!typeExists) await createInventoryType(client);
  const tag = inventoryTag(sourceId);
  await client.request({
    operation: `write ownership inventory \`${tag}\``,
    method: 'POST',
    path: '/api/v1/open-api',
    body: inventoryDescriptor(sourceId, keys, meta),
    contentType: 'application/openapi;charset=UTF-8',
    idempotent: true,
  });
};

/** For messages: where the inventory of a source lives. */
export const inventoryPath = (sourceId: string): string =>
  `/api/v1/catalog/${encodePathSegment(inventoryTag(sourceId))}`;

/**
 * The kinds whose objects a source's inventory lists: all of them. Entities carry a marker too,
 * but a marker can be copied by hand onto a foreign entity; prune needs both (see `ownInventoryOf`).
 */
export const trackedKinds = (handlers: readonly { kind: KindName }[]): Set<KindName> =>
  new Set(handlers.map((h) => h.kind));

/** What this source's own inventory lists (empty when it has none): prune removes nothing else. */
export const ownInventoryOf = (index: InventoryIndex, sourceId: string): ReadonlySet<ObjectKey> =>
  index.bySource.get(sourceId) ?? new Set<ObjectKey>();

/**
 * Another source whose record sits at this source's tag: the tag keeps 8 hex digits of a hash, so
 * a source id can be made to share another's tag. Writing this source's record there would
 * replace the other's (its objects would look unowned, then adoptable). A plan error instead.
 */
export const tagSharedWith = (
  index: InventoryIndex,
  sourceId: string,
  tagOf: (source: string) => string = inventoryTag,
): string | undefined => {
  const tag = tagOf(sourceId);
  return [...index.bySource.keys()].find((other) => other !== sourceId && tagOf(other) === tag);
};
