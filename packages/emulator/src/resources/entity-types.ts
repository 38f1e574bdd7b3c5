/** Entity types: `/api/v1/catalog/definitions` (list, get, create, update, delete). */
import { type EmulatorResponse, errorResponse, pagedResponse, type RouteDef } from '../contract.js';
import { hashOrder, isObject, type JsonObject, parseJsonBody, queryFlag } from '../util.js';
import { type EntitiesState, infoOf } from './entity-store.js';
import {
  customDefinition,
  BUILT_IN_DEFINITIONS,
  CORE_TYPES,
  type EntityTypesState,
  findDefinition,
  normalizeIconTag,
  type StoredDefinition,
  validateAgainstSchema,
} from './entity-type-store.js';

/** The slices entity-type routes read. */
export interface EntityTypesSlices {
  entityTypes: EntityTypesState;
  entities: EntitiesState;
}

const PERMISSION = ['EDIT_ENTITY_TYPES'] as const;
const TYPE_KEY = /^[a-z0-9][a-z0-9._-]*$/;

const notFound = (type: string): EmulatorResponse => errorResponse(404, 'NOT_FOUND', `Entity type not found: ${type}`);

const optionalString = (value: unknown): string | null => (typeof value === 'string' ? value : null);

const list: RouteDef<EntityTypesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog/definitions',
  permission: PERMISSION,
  handle(req, state) {
    const all: StoredDefinition[] = [
      ...Object.values(state.entityTypes.byType),
      ...(queryFlag(req.query, 'includeBuiltIn', false) ? BUILT_IN_DEFINITIONS : []),
    ];
    return pagedResponse(
      hashOrder(all, (d) => d.type),
      req.query,
      'definitions',
    );
  },
};

const get: RouteDef<EntityTypesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog/definitions/:type',
  permission: PERMISSION,
  handle(req, state) {
    const type = req.params.type ?? '';
    const def = findDefinition(state.entityTypes, type);
    return def ? { status: 200, body: def } : notFound(type);
  },
};

const create: RouteDef<EntityTypesSlices> = {
  method: 'POST',
  pattern: '/api/v1/catalog/definitions',
  permission: PERMISSION,
  handle(req, state) {
    const parsed = parseJsonBody(req, { object: true });
    if (!parsed.ok) return parsed.response;
    const body = parsed.value as JsonObject;
    const type = body.type;
    if (typeof type !== 'string' || !TYPE_KEY.test(type)) {
      return errorResponse(400, 'BAD_REQUEST', 'Failed to create entity type: type must be a lower-case key');
    }
    if (!isObject(body.schema))
      return errorResponse(400, 'BAD_REQUEST', 'Failed to create entity type: schema is required');
    if (CORE_TYPES.includes(type) || findDefinition(state.entityTypes, type)) {
      return errorResponse(400, 'BAD_REQUEST', `Failed to create entity type: ${type} already exists`);
    }
    const def: StoredDefinition = {
      type,
      name: optionalString(body.name) ?? type,
      description: optionalString(body.description),
      iconTag: normalizeIconTag(body.iconTag),
      schema: body.schema,
      source: 'CUSTOM',
    };
    state.entityTypes.byType[type] = def;
    return { status: 200, body: def };
  },
};

const update: RouteDef<EntityTypesSlices> = {
  method: 'PUT',
  pattern: '/api/v1/catalog/definitions/:type',
  permission: PERMISSION,
  handle(req, state) {
    const type = req.params.type ?? '';
    const def = customDefinition(state.entityTypes, type);
    if (!def) {
      return findDefinition(state.entityTypes, type)
        ? errorResponse(400, 'BAD_REQUEST', `Built-in entity type ${type} cannot be changed`)
        : notFound(type);
    }
    const parsed = parseJsonBody(req, { object: true });
    if (!parsed.ok) return parsed.response;
    const body = parsed.value as JsonObject;
    if (!isObject(body.schema)) return errorResponse(400, 'BAD_REQUEST', 'schema is required');
    if (!queryFlag(req.query, 'force', false)) {
      for (const entity of Object.values(state.entities.byId)) {
        if (entity.type !== type) continue;
        const problems = validateAgainstSchema(body.schema, infoOf(entity.descriptor)['x-cortex-definition'] ?? {});
        if (problems.length > 0) {
          return errorResponse(
            400,
            'BAD_REQUEST',
            `Schema change would invalidate entity ${entity.tag}: ${problems[0]}; use force=true to update anyway`,
          );
        }
      }
    }
    def.schema = body.schema;
    def.name = optionalString(body.name) ?? def.name;
    def.description = optionalString(body.description);
    def.iconTag = normalizeIconTag(body.iconTag);
    return { status: 200, body: def };
  },
};

const remove: RouteDef<EntityTypesSlices> = {
  method: 'DELETE',
  pattern: '/api/v1/catalog/definitions/:type',
  permission: PERMISSION,
  handle(req, state) {
    const type = req.params.type ?? '';
    if (!customDefinition(state.entityTypes, type)) {
      return findDefinition(state.entityTypes, type)
        ? errorResponse(400, 'BAD_REQUEST', `Built-in entity type ${type} cannot be deleted`)
        : notFound(type);
    }
    // Deleting a type that still has entities is refused (inferred; the vendor documents no rule).
    const used = Object.values(state.entities.byId).find((e) => e.type === type);
    if (used) return errorResponse(400, 'BAD_REQUEST', `Entity type ${type} is used by entity ${used.tag}`);
    delete state.entityTypes.byType[type];
    return { status: 200 };
  },
};

/** Entity-type routes. */
export const entityTypeRoutes: readonly RouteDef<EntityTypesSlices>[] = [list, get, create, update, remove];
