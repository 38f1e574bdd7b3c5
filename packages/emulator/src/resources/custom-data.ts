/**
 * Custom data routes: per entity (`/api/v1/catalog/{tagOrId}/custom-data`, by key), by tag in the
 * query (`/api/v1/catalog/custom-data?tag=`), and in bulk (`PUT /api/v1/catalog/custom-data`).
 * Bodies as the vendor CLI sends them (`{key, value, description?}`, bulk `{values: {tag: [...]}}`);
 * the vendor OpenAPI types them only as strings.
 */
import { z } from 'zod';
import { type EmulatorRequest, type EmulatorResponse, errorResponse, type RouteDef } from '../contract.js';
import { hashOrder } from '../util.js';
import {
  type CustomDataState,
  customDataByKey,
  customDataOf,
  customDataView,
  declaredInDescriptor,
  putCustomData,
  removeCustomData,
} from './custom-data-store.js';
import { type EntitiesState, findEntity, type StoredEntity } from './entity-store.js';
import { booleanQuery, readBody } from './initiatives-body.js';

export interface CustomDataSlices {
  entities: EntitiesState;
  customData: CustomDataState;
}

const EDIT = ['EDIT_ENTITIES'] as const;

const entry = z.object({
  key: z.string().min(1),
  value: z.json(),
  description: z.string().nullable().optional(),
});
const bulk = z.object({ values: z.record(z.string(), z.array(entry)) });

type Handler = (entity: StoredEntity, req: EmulatorRequest, state: CustomDataSlices, now: number) => EmulatorResponse;

/** The entity named by the path (`:tagOrId`) or, on the `/catalog/custom-data` routes, by `?tag=`. */
const withEntity =
  (fn: Handler, from: 'path' | 'query') =>
  (req: EmulatorRequest, state: CustomDataSlices, env: { now(): number }): EmulatorResponse => {
    const tagOrId = from === 'path' ? (req.params.tagOrId ?? '') : req.query.get('tag');
    if (tagOrId === null || tagOrId === '') return errorResponse(400, 'BAD_REQUEST', 'Query parameter tag is required');
    const entity = findEntity(state.entities, tagOrId);
    return entity ? fn(entity, req, state, env.now()) : errorResponse(404, 'NOT_FOUND', `Entity not found: ${tagOrId}`);
  };

/** `force` must be a boolean; a key the descriptor declares is only overridden with `force=true`. */
const forced = (req: EmulatorRequest): boolean | EmulatorResponse => {
  const force = booleanQuery(req.query, 'force', false);
  return force ?? errorResponse(400, 'BAD_REQUEST', 'force must be true or false');
};

const add: Handler = (entity, req, state, now) => {
  const force = forced(req);
  if (typeof force !== 'boolean') return force;
  const body = readBody(req, entry);
  if (!body.ok) return body.response;
  if (!force && declaredInDescriptor(entity, body.value.key)) {
    return errorResponse(
      400,
      'BAD_REQUEST',
      `Key ${body.value.key} is defined in the entity descriptor; send force=true to override it`,
    );
  }
  const stored = putCustomData(state.customData, entity, { ...body.value, source: 'API', now });
  return { status: 200, body: customDataView(stored) };
};

/** The bare array of an entity's custom data; `page`/`pageSize` slice it (an empty page is past the end). */
const list: Handler = (entity, req, state) => {
  let items = customDataOf(state.customData, entity);
  const key = req.query.get('key');
  if (key !== null && key !== '') items = items.filter((d) => d.key === key);
  const page = req.query.has('page') ? Number(req.query.get('page')) : 0;
  const pageSize = req.query.has('pageSize') ? Number(req.query.get('pageSize')) : 250;
  if (!Number.isInteger(page) || page < 0)
    return errorResponse(400, 'BAD_REQUEST', 'page must be a non-negative integer');
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
    return errorResponse(400, 'BAD_REQUEST', 'pageSize must be between 1 and 1000');
  return { status: 200, body: items.slice(page * pageSize, (page + 1) * pageSize) };
};

const remove: Handler = (entity, req, state) => {
  const key = req.query.get('key');
  if (key === null || key === '') return errorResponse(400, 'BAD_REQUEST', 'Query parameter key is required');
  if (!removeCustomData(state.customData, entity, key)) {
    // Descriptor-defined values change with the descriptor, not through this endpoint.
    const why = declaredInDescriptor(entity, key) ? ' (it is defined in the entity descriptor)' : '';
    return errorResponse(404, 'NOT_FOUND', `No custom data with key ${key} set through the API${why}`);
  }
  return { status: 200 };
};

/** Custom data routes: reads need any valid key; writes `EDIT_ENTITIES` (inferred: the vendor names none). */
export const customDataRoutes: readonly RouteDef<CustomDataSlices>[] = [
  {
    method: 'GET',
    pattern: '/api/v1/catalog/:tagOrId/custom-data',
    permission: null,
    handle: withEntity(list, 'path'),
  },
  {
    method: 'POST',
    pattern: '/api/v1/catalog/:tagOrId/custom-data',
    permission: EDIT,
    handle: withEntity(add, 'path'),
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/catalog/:tagOrId/custom-data',
    permission: EDIT,
    handle: withEntity(remove, 'path'),
  },
  {
    method: 'GET',
    pattern: '/api/v1/catalog/:tagOrId/custom-data/:key',
    permission: null,
    handle: withEntity((entity, req, state) => {
      const key = req.params.key ?? '';
      const found = customDataByKey(state.customData, entity, key);
      return found
        ? { status: 200, body: found }
        : errorResponse(404, 'NOT_FOUND', `No custom data with key ${key} on ${entity.tag}`);
    }, 'path'),
  },
  { method: 'GET', pattern: '/api/v1/catalog/custom-data', permission: null, handle: withEntity(list, 'query') },
  { method: 'POST', pattern: '/api/v1/catalog/custom-data', permission: EDIT, handle: withEntity(add, 'query') },
  { method: 'DELETE', pattern: '/api/v1/catalog/custom-data', permission: EDIT, handle: withEntity(remove, 'query') },
  {
    method: 'PUT',
    pattern: '/api/v1/catalog/custom-data',
    permission: EDIT,
    handle(req, state, env) {
      const force = forced(req);
      if (typeof force !== 'boolean') return force;
      const body = readBody(req, bulk);
      if (!body.ok) return body.response;
      const errors: Record<string, string> = {};
      const targets: [StoredEntity, z.infer<typeof entry>][] = [];
      for (const [tag, entries] of Object.entries(body.value.values)) {
        const entity = findEntity(state.entities, tag);
        if (!entity) {
          errors[tag] = 'NOT_FOUND';
          continue;
        }
        for (const e of entries) {
          if (!force && declaredInDescriptor(entity, e.key)) {
            return errorResponse(
              400,
              'BAD_REQUEST',
              `Key ${e.key} of ${tag} is defined in the entity descriptor; send force=true to override it`,
            );
          }
          targets.push([entity, e]);
        }
      }
      // Checked first, written after: a refused bulk request changes nothing.
      const values = targets.map(([entity, e]) =>
        customDataView(putCustomData(state.customData, entity, { ...e, source: 'API', now: env.now() })),
      );
      return { status: 200, body: { values: hashOrder(values, (v) => `${String(v.id)}`), errors } };
    },
  },
];
