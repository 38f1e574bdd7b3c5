/**
 * Reads live entities with bulk, paged reads:
 *
 * 1. every descriptor of every entity type (`GET /catalog/descriptors`, 1000 a page, `types` listing
 *    built-in and custom types: without it the API leaves teams out);
 * 2. desired entities missing from those descriptors may exist archived (the descriptor list leaves
 *    archived entities out). They are looked up with whichever costs fewer requests: one
 *    `GET /catalog/{tag}` per missing entity, or the paged full listing with `includeArchived`.
 *
 * With every desired entity live and active, that is `ceil(n / 1000)` requests.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { type ApiClient, encodePathSegment } from '../../api/types.js';
import type { JsonObject, LiveObject } from '../../core/model.js';
import type { FetchContext } from '../types.js';
import type { EntityLive, EntitySummary } from './live-state.js';
import { entityTypeOfDescriptor, tagOfDescriptor, toJsonValue } from './normalize.js';
import { OWNERSHIP_METADATA_KEY, type OwnershipMarker, readOwnershipMarker } from './ownership.js';
import { BUILT_IN_ENTITY_TYPES, type EntityDescriptor } from './schema.js';

/** Page size of every entity list read (the API's maximum). */
const ENTITY_PAGE_SIZE = 1000;

export type { EntityLive, EntitySummary } from './live-state.js';

/** Tolerant reading of a catalog summary / details: only the fields we use, everything else passes. */
const summarySchema = z.looseObject({
  id: z.string().optional().catch(undefined),
  tag: z.string().min(1),
  name: z.string().nullish().catch(undefined),
  type: z.string().nullish().catch(undefined),
  description: z.string().nullish().catch(undefined),
  isArchived: z.boolean().optional().catch(undefined),
  metadata: z
    .array(z.looseObject({ key: z.string(), value: z.unknown() }))
    .optional()
    .catch(undefined),
});
type SummaryBody = z.infer<typeof summarySchema>;

const toSummary = (body: SummaryBody): EntitySummary => ({
  tag: body.tag,
  ...(body.id ? { id: body.id } : {}),
  ...(body.name ? { name: body.name } : {}),
  ...(body.type ? { type: body.type } : {}),
  ...(body.description ? { description: body.description } : {}),
  ...(body.isArchived !== undefined ? { isArchived: body.isArchived } : {}),
});

/** The ownership marker as the catalog's `metadata: [{key, value}]` shows it. */
const markerFromMetadata = (metadata: SummaryBody['metadata']): OwnershipMarker | undefined => {
  const entry = metadata?.find((m) => m.key === OWNERSHIP_METADATA_KEY);
  if (!entry) return undefined;
  const value = typeof entry.value === 'string' ? safeParseYaml(entry.value) : entry.value;
  return readOwnershipMarker({ info: { 'x-cortex-custom-metadata': { [OWNERSHIP_METADATA_KEY]: value } } });
};

const safeParseYaml = (text: string): unknown => {
  try {
    return parseYaml(text);
  } catch {
    return undefined;
  }
};

/**
 * One item of the descriptor list: an object (`yaml=false`) or one YAML document as text
 * (`yaml=true`, or a server that answers so anyway). `undefined` when it is neither.
 */
export const descriptorFromItem = (item: unknown): JsonObject | undefined => {
  const value = typeof item === 'string' ? safeParseYaml(item) : item;
  const json = toJsonValue(value);
  return json !== null && typeof json === 'object' && !Array.isArray(json) ? json : undefined;
};

const liveFromDescriptor = (tag: string, descriptor: JsonObject, summary?: EntitySummary): LiveObject<EntityLive> => {
  const marker = readOwnershipMarker(descriptor);
  return {
    kind: 'entity',
    id: tag,
    ...(summary?.id ? { serverId: summary.id } : {}),
    ...(marker ? { owner: marker.source } : {}),
    ...(marker?.protected ? { protected: true } : {}),
    state: { descriptor, ...(summary ? { summary } : {}) },
  };
};

const liveFromArchivedSummary = (body: SummaryBody): LiveObject<EntityLive> => {
  const marker = markerFromMetadata(body.metadata);
  const summary = toSummary(body);
  return {
    kind: 'entity',
    id: summary.tag,
    ...(summary.id ? { serverId: summary.id } : {}),
    archived: true,
    ...(marker ? { owner: marker.source } : {}),
    ...(marker?.protected ? { protected: true } : {}),
    state: { descriptor: null, summary },
  };
};

/** Every entity type to list: the context's (custom ones included) plus the built-ins, once each. */
const entityTypesToList = (entityTypes: readonly string[]): string[] => [
  ...new Set([...BUILT_IN_ENTITY_TYPES, ...entityTypes]),
];

/** Every descriptor of the given types, by tag. */
const listDescriptors = async (client: ApiClient, types: string[]): Promise<Map<string, JsonObject>> => {
  const items = await client.paginate<unknown>(
    {
      operation: 'list entity descriptors',
      method: 'GET',
      path: '/api/v1/catalog/descriptors',
      query: { types, yaml: false, pageSize: ENTITY_PAGE_SIZE },
    },
    'descriptors',
  );
  const byTag = new Map<string, JsonObject>();
  for (const item of items) {
    const descriptor = descriptorFromItem(item);
    const tag = tagOfDescriptor(descriptor);
    if (descriptor && tag !== undefined && !byTag.has(tag)) byTag.set(tag, descriptor);
  }
  return byTag;
};

/** One entity's descriptor (for an active entity the descriptor list did not show); `undefined` on 404. */
export const readDescriptor = async (client: ApiClient, tag: string): Promise<JsonObject | undefined> => {
  const res = await client.request<unknown>({
    operation: `read entity descriptor ${tag}`,
    method: 'GET',
    path: `/api/v1/catalog/${encodePathSegment(tag)}/openapi`,
    query: { yaml: false },
    acceptStatus: [404],
  });
  return res.status === 404 ? undefined : descriptorFromItem(res.body);
};

/** Catalog summaries of the candidates that exist, by probing each (`GET /catalog/{tag}`). */
const probeEach = async (client: ApiClient, tags: readonly string[]): Promise<SummaryBody[]> => {
  const found = await Promise.all(
    tags.map(async (tag) => {
      const res = await client.request<unknown>({
        operation: `read entity ${tag}`,
        method: 'GET',
        path: `/api/v1/catalog/${encodePathSegment(tag)}`,
        acceptStatus: [404],
      });
      if (res.status === 404) return undefined;
      const parsed = summarySchema.safeParse(res.body);
      return parsed.success ? parsed.data : undefined;
    }),
  );
  return found.filter((s): s is SummaryBody => s !== undefined);
};

/** Catalog summaries of the candidates that exist, from the full listing (archived included). */
const listIncludingArchived = async (
  client: ApiClient,
  types: string[],
  tags: ReadonlySet<string>,
): Promise<SummaryBody[]> => {
  const items = await client.paginate<unknown>(
    {
      operation: 'list entities including archived',
      method: 'GET',
      path: '/api/v1/catalog',
      query: { types, includeArchived: true, includeMetadata: true, pageSize: ENTITY_PAGE_SIZE },
    },
    'entities',
  );
  const out: SummaryBody[] = [];
  for (const item of items) {
    const parsed = summarySchema.safeParse(item);
    if (parsed.success && tags.has(parsed.data.tag)) out.push(parsed.data);
  }
  return out;
};

/**
 * Looking up `missing` entities costs one request each when probed, and the number of pages of the
 * full listing otherwise (at least the active entities plus the missing ones, if they exist).
 */
export const shouldProbeEach = (missing: number, activeCount: number): boolean =>
  missing <= Math.max(1, Math.ceil((activeCount + missing) / ENTITY_PAGE_SIZE));

/**
 * Archived entities of the entity types in `targets` (the descriptor list leaves archived entities
 * out, yet Cortex counts them as users of their type): one paged listing of those types with
 * `includeArchived`, for a prune about to remove the types.
 */
export const fetchArchivedHolders = async (
  targets: readonly LiveObject[],
  ctx: { client: ApiClient },
): Promise<LiveObject<EntityLive>[]> => {
  const types = [...new Set(targets.filter((t) => t.kind === 'entity-type').map((t) => t.id))].sort();
  if (types.length === 0) return [];
  const items = await ctx.client.paginate<unknown>(
    {
      operation: 'list archived entities of the entity types to remove',
      method: 'GET',
      path: '/api/v1/catalog',
      query: { types, includeArchived: true, includeMetadata: true, pageSize: ENTITY_PAGE_SIZE },
    },
    'entities',
  );
  const archived: LiveObject<EntityLive>[] = [];
  for (const item of items) {
    const parsed = summarySchema.safeParse(item);
    if (parsed.success && parsed.data.isArchived === true) archived.push(liveFromArchivedSummary(parsed.data));
  }
  return archived;
};

/**
 * The live entities with these tags, one by one: the details (`GET /catalog/{tag}`: whether it
 * exists, and whether it is archived, which its descriptor does not say), then the descriptor of
 * an active one. Each is what `fetchEntityLive` reads for it; a tag with no entity (404) is left
 * out. Two GETs per active entity, one per archived or missing one.
 */
export const fetchEntitiesByTag = async (
  tags: readonly string[],
  ctx: Pick<FetchContext<EntityDescriptor>, 'client'>,
): Promise<LiveObject<EntityLive>[]> => {
  const found = await Promise.all(
    [...new Set(tags)]
      .filter((tag) => tag !== '')
      .map(async (tag): Promise<LiveObject<EntityLive> | undefined> => {
        const [details] = await probeEach(ctx.client, [tag]);
        if (details === undefined || details.tag !== tag) return undefined;
        if (details.isArchived === true) return liveFromArchivedSummary(details);
        const descriptor = await readDescriptor(ctx.client, tag);
        return descriptor ? liveFromDescriptor(tag, descriptor) : undefined;
      }),
  );
  return found.filter((o): o is LiveObject<EntityLive> => o !== undefined);
};

/** Reads every live entity (see the module comment). */
export const fetchEntityLive = async (ctx: FetchContext<EntityDescriptor>): Promise<LiveObject<EntityLive>[]> => {
  // Every entity type read before (built-in, custom), and the desired entities' own types too.
  const types = entityTypesToList([
    ...ctx.readBefore.filter((o) => o.kind === 'entity-type').map((o) => o.id),
    ...ctx.desired.map((d) => entityTypeOfDescriptor(d.spec).trim()),
  ]);
  const descriptors = await listDescriptors(ctx.client, types);
  const live = [...descriptors].map(([tag, descriptor]) => liveFromDescriptor(tag, descriptor));

  const missing = [...new Set(ctx.desired.map((d) => d.id))].filter((id) => id !== '' && !descriptors.has(id));
  if (missing.length === 0) return live;
  const summaries = shouldProbeEach(missing.length, descriptors.size)
    ? await probeEach(ctx.client, missing)
    : await listIncludingArchived(ctx.client, types, new Set(missing));

  for (const summary of summaries) {
    if (summary.isArchived === true) {
      live.push(liveFromArchivedSummary(summary));
      continue;
    }
    // Active but not in the descriptor list (its type was not listed, or it appeared meanwhile).
    const descriptor = await readDescriptor(ctx.client, summary.tag);
    if (descriptor) live.push(liveFromDescriptor(summary.tag, descriptor, toSummary(summary)));
  }
  return live;
};
