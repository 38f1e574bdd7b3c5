/**
 * How `export` reads entities: as a plan does (the descriptor list), plus, when asked
 * (`--include-archived`), the archived ones the descriptor list leaves out: the catalog list with
 * `includeArchived`, then one descriptor read each (its ownership marker says whose it is). Only
 * GET requests.
 */
import { encodePathSegment } from '../../api/types.js';
import type { JsonObject, LiveObject } from '../../core/model.js';
import { BUILT_IN_ENTITY_TYPES } from '../shared/built-in-entity-types.js';
import type { ExportFetchContext } from '../types.js';
import { fetchEntityLive } from './live.js';
import type { EntityLive } from './live-state.js';
import { readOwnershipMarker } from './ownership.js';
import { RECORD_ENTITY_TYPE } from './records/names.js';
import type { EntityDescriptor } from './schema.js';

/** The entity-type kind, whose live objects name the types to list. */
const ENTITY_TYPE = 'entity-type';

interface CatalogSummary {
  tag?: unknown;
  isArchived?: unknown;
}

/** Archived entities of `types` with their descriptors, leaving out those in `known`. */
const readArchivedEntities = async (
  ctx: ExportFetchContext<EntityDescriptor>,
  types: readonly string[],
  known: ReadonlySet<string>,
): Promise<LiveObject<EntityLive>[]> => {
  const items = await ctx.client.paginate<CatalogSummary>(
    {
      operation: 'list entities including archived',
      method: 'GET',
      path: '/api/v1/catalog',
      query: { types, includeArchived: true, pageSize: 1000 },
    },
    'entities',
  );
  const tags = items
    .filter((s) => s.isArchived === true && typeof s.tag === 'string' && !known.has(s.tag))
    .map((s) => s.tag as string);
  const out: LiveObject<EntityLive>[] = [];
  for (const tag of tags) {
    const res = await ctx.client.request<unknown>({
      operation: `read entity descriptor ${tag}`,
      method: 'GET',
      path: `/api/v1/catalog/${encodePathSegment(tag)}/openapi`,
      query: { yaml: false },
      acceptStatus: [404],
    });
    const descriptor = res.body;
    if (res.status === 404 || descriptor === null || typeof descriptor !== 'object' || Array.isArray(descriptor)) {
      continue;
    }
    const marker = readOwnershipMarker(descriptor);
    out.push({
      kind: 'entity',
      id: tag,
      archived: true,
      ...(marker ? { owner: marker.source } : {}),
      state: { descriptor: descriptor as JsonObject },
    });
  }
  return out;
};

/** The export read of the entity kind (see the module comment). */
export const exportEntities = async (ctx: ExportFetchContext<EntityDescriptor>): Promise<LiveObject<EntityLive>[]> => {
  const live = await fetchEntityLive(ctx);
  if (!ctx.includeArchived) return live;
  const types = [
    ...new Set([...BUILT_IN_ENTITY_TYPES, ...ctx.readBefore.filter((o) => o.kind === ENTITY_TYPE).map((o) => o.id)]),
  ].filter((t) => t !== RECORD_ENTITY_TYPE);
  return [...live, ...(await readArchivedEntities(ctx, types, new Set(live.map((o) => o.id))))];
};
