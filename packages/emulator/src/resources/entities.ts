/**
 * Catalog entities: descriptor upsert (`POST /open-api`), merge (`PATCH /open-api`), list,
 * descriptors, details, descriptor read, archive/unarchive and delete.
 */
import { stringify as stringifyYaml } from 'yaml';
import {
  type EmulatorRequest,
  type EmulatorResponse,
  errorResponse,
  pagedResponse,
  type RouteDef,
} from '../contract.js';
import { hashOrder, isObject, type JsonObject, own, parseYamlText, queryFlag, queryList } from '../util.js';
import { type CustomDataState, customDataOf } from './custom-data-store.js';
import type { CustomMetricsState } from './custom-metrics.js';
import { type DependenciesState, removeEdgesOf } from './dependency-store.js';
import type { DeploysState } from './deploys.js';
import {
  type EntitiesState,
  entityDetails,
  entitySummary,
  findEntity,
  infoOf,
  putEntity,
  removeEntity,
  type StoredEntity,
  type Violation,
  validateDescriptor,
  violation,
} from './entity-store.js';
import type { EntityTypesState } from './entity-type-store.js';
import { hierarchyDepth, nestedHierarchy } from './hierarchy.js';

/** The slices entity routes read (and clean up when an entity is deleted). */
export interface EntitiesSlices {
  entities: EntitiesState;
  entityTypes: EntityTypesState;
  dependencies: DependenciesState;
  customData: CustomDataState;
  customMetrics: CustomMetricsState;
  deploys: DeploysState;
}

/** Deletes an entity and everything kept about it elsewhere (API dependencies, custom data, metrics, deploys). */
const deleteEntity = (state: EntitiesSlices, entity: StoredEntity): void => {
  removeEntity(state.entities, entity);
  removeEdgesOf(state.dependencies, entity.id);
  delete state.customData.byEntity[entity.id];
  for (const perEntity of Object.values(state.customMetrics.byKey)) delete perEntity[entity.id];
  for (const d of Object.values(state.deploys.byUuid))
    if (d.entityId === entity.id) delete state.deploys.byUuid[d.uuid];
};

const DESCRIPTOR_CONTENT_TYPES = new Set([
  '',
  'application/openapi',
  'application/json',
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'text/x-yaml',
  'text/plain',
]);

const invalid = (violations: Violation[], status = 400): EmulatorResponse => ({
  status,
  body: { ok: false, violations },
});

const ok = (status = 200): EmulatorResponse => ({ status, body: { ok: true, violations: [] } });

const notFound = (tagOrId: string): EmulatorResponse => errorResponse(404, 'NOT_FOUND', `Entity not found: ${tagOrId}`);

/** Parses a descriptor body: the parsed value, or the 400/415 response. */
const readDescriptorBody = (req: EmulatorRequest): { doc: unknown } | { response: EmulatorResponse } => {
  if (!DESCRIPTOR_CONTENT_TYPES.has(req.contentType)) {
    return { response: errorResponse(415, 'BAD_REQUEST', `Unsupported content type ${req.contentType}`) };
  }
  const parsed = parseYamlText(req.rawBody);
  if (!parsed.ok) {
    return {
      response: invalid([
        { ...violation('Invalid YAML', parsed.message, []), startLine: parsed.line, endLine: parsed.line },
      ]),
    };
  }
  return { doc: parsed.value };
};

const tagOfDoc = (doc: JsonObject): string => String(infoOf(doc)['x-cortex-tag']);

/** Deep merge of `patch` into `base` (objects merge; arrays replace, or append when asked). */
const deepMerge = (base: unknown, patch: unknown, appendArrays: boolean): unknown => {
  if (isObject(base) && isObject(patch)) {
    const out: JsonObject = { ...base };
    for (const [key, value] of Object.entries(patch))
      out[key] = key in base ? deepMerge(base[key], value, appendArrays) : value;
    return out;
  }
  if (appendArrays && Array.isArray(base) && Array.isArray(patch)) {
    const out = [...base];
    for (const item of patch) {
      const simple = item === null || typeof item !== 'object';
      if (!(simple && out.includes(item))) out.push(item);
    }
    return out;
  }
  return patch;
};

/** Removes every key whose value equals `marker`, at any depth. */
const dropMarked = (value: unknown, marker: string): unknown => {
  if (Array.isArray(value)) return value.map((v) => dropMarked(v, marker));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) if (v !== marker) out[key] = dropMarked(v, marker);
  return out;
};

const upsert: RouteDef<EntitiesSlices> = {
  method: 'POST',
  pattern: '/api/v1/open-api',
  permission: ['EDIT_ENTITIES'],
  handle(req, state, env) {
    const body = readDescriptorBody(req);
    if ('response' in body) return body.response;
    const violations = validateDescriptor(body.doc, state.entityTypes, req.rawBody, env.missingDefinition);
    if (violations.length > 0 || !isObject(body.doc)) return invalid(violations);
    const mode = (req.query.get('mode') ?? 'UPSERT').toUpperCase();
    if (mode !== 'UPSERT' && mode !== 'CREATE') return errorResponse(400, 'BAD_REQUEST', `Unknown mode ${mode}`);
    const tag = tagOfDoc(body.doc);
    // mode=CREATE on an existing tag: the vendor's status is unknown; 409 is inferred.
    if (mode === 'CREATE' && own(state.entities.idByTag, tag) !== undefined) {
      return errorResponse(409, 'CONFLICT', `Entity with tag ${tag} already exists`);
    }
    if (queryFlag(req.query, 'dryRun', false)) return ok();
    putEntity(state.entities, body.doc, env);
    return ok();
  },
};

const patch: RouteDef<EntitiesSlices> = {
  method: 'PATCH',
  pattern: '/api/v1/open-api',
  permission: ['EDIT_ENTITIES'],
  handle(req, state, env) {
    const body = readDescriptorBody(req);
    if ('response' in body) return body.response;
    const doc = body.doc;
    if (!isObject(doc) || !isObject(doc.info) || typeof doc.info['x-cortex-tag'] !== 'string') {
      return invalid([
        violation('Missing x-cortex-tag', 'info.x-cortex-tag is required', ['info', 'x-cortex-tag'], req.rawBody),
      ]);
    }
    const tag = tagOfDoc(doc);
    const existingId = own(state.entities.idByTag, tag);
    const existing = existingId === undefined ? undefined : own(state.entities.byId, existingId);
    if (!existing && queryFlag(req.query, 'failIfEntityDoesNotExist', false)) return notFound(tag);
    let merged = existing ? deepMerge(existing.descriptor, doc, queryFlag(req.query, 'appendArrays', false)) : doc;
    const marker = req.query.get('deleteMarkerValue');
    if (marker !== null && marker !== '') merged = dropMarked(merged, marker);
    const violations = validateDescriptor(
      merged,
      state.entityTypes,
      existing ? undefined : req.rawBody,
      env.missingDefinition,
    );
    if (violations.length > 0 || !isObject(merged)) return invalid(violations);
    const status = existing ? 200 : 201;
    if (queryFlag(req.query, 'dryRun', false)) return ok(status);
    putEntity(state.entities, merged, env);
    return ok(status);
  },
};

/** Entities whose type is in `types` (all when empty), archived ones only when asked. */
export const selectEntities = (state: EntitiesSlices, types: string[], includeArchived: boolean): StoredEntity[] =>
  hashOrder(
    Object.values(state.entities.byId).filter(
      (e) => (includeArchived || !e.isArchived) && (types.length === 0 || types.includes(e.type)),
    ),
    (e) => e.id,
  );

const list: RouteDef<EntitiesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog',
  permission: null,
  handle(req, state) {
    const q = req.query;
    const groups = queryList(q, 'groups');
    const owners = queryList(q, 'owners');
    const repos = queryList(q, 'gitRepositories');
    const search = (q.get('query') ?? '').toLowerCase();
    const opts = {
      owners: queryFlag(q, 'includeOwners', false),
      metadata: queryFlag(q, 'includeMetadata', false),
      links: queryFlag(q, 'includeLinks', false),
    };
    const teamMembers = queryList(q, 'includeNestedFields').includes('team:members');
    const items = selectEntities(state, queryList(q, 'types'), queryFlag(q, 'includeArchived', false))
      .map((e) => ({ e, s: entitySummary(e, state.entities, { owners: true, metadata: false, links: false }) }))
      .filter(({ e, s }) => {
        const summaryGroups = s.groups as string[];
        if (groups.length > 0 && !groups.some((g) => summaryGroups.includes(g))) return false;
        if (search !== '' && !e.tag.toLowerCase().includes(search) && !String(s.name).toLowerCase().includes(search)) {
          return false;
        }
        if (repos.length > 0) {
          const git = s.git as { repository?: string } | null;
          if (!git?.repository || !repos.includes(git.repository)) return false;
        }
        if (owners.length > 0) {
          const o = s.owners as { teams: { tag: string }[]; individuals: { email: string }[] };
          const names = [...o.teams.map((t) => t.tag), ...o.individuals.map((i) => i.email)];
          if (!owners.some((x) => names.includes(x))) return false;
        }
        return true;
      })
      .map(({ e }) => {
        const summary = entitySummary(e, state.entities, opts);
        if (opts.metadata) summary.metadata = metadataOf(state, e);
        if (teamMembers && e.type === 'team') summary.members = membersOf(e);
        return summary;
      });
    return pagedResponse(items, q, 'entities');
  },
};

const descriptors: RouteDef<EntitiesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog/descriptors',
  permission: null,
  handle(req, state) {
    const asked = queryList(req.query, 'types');
    // Without `types` the vendor lists "services, resources, and domains": every type but `team`.
    // Archived entities are not listed (inferred: the vendor's text does not say; they are hidden elsewhere).
    const items = selectEntities(state, asked, false).filter((e) => asked.length > 0 || e.type !== 'team');
    // `yaml=true` is accepted, but the items stay objects: the vendor's CLI test against a live
    // tenant (`catalog list-descriptors -y`) reads `descriptors[i].info` (its swagger says strings).
    return pagedResponse(
      items.map((e) => e.descriptor),
      req.query,
      'descriptors',
    );
  },
};

/** An entity's custom data as its `metadata` (descriptor values, then those set through the API or a webhook). */
const metadataOf = (state: EntitiesSlices, entity: StoredEntity) =>
  customDataOf(state.customData, entity).map((d) => ({ key: d.key, value: d.value, source: d.source }));

/** Details, with every custom data value in `metadata`. */
const detailsOf = (entity: StoredEntity, state: EntitiesSlices) => ({
  ...entityDetails(entity, state.entities),
  metadata: metadataOf(state, entity),
});

/** A team's members (`includeNestedFields=team:members`), from its `x-cortex-team.members`. */
const membersOf = (entity: StoredEntity) => {
  const team = infoOf(entity.descriptor)['x-cortex-team'];
  const members = isObject(team) && Array.isArray(team.members) ? team.members.filter(isObject) : [];
  return members.map((m) => ({
    name: typeof m.name === 'string' ? m.name : null,
    email: typeof m.email === 'string' ? m.email : null,
    role: typeof m.role === 'string' ? m.role : null,
    notificationsEnabled: m.notificationsEnabled === true,
  }));
};

export const withEntity =
  (fn: (entity: StoredEntity, req: EmulatorRequest, state: EntitiesSlices) => EmulatorResponse) =>
  (req: EmulatorRequest, state: EntitiesSlices): EmulatorResponse => {
    const tagOrId = req.params.tagOrId ?? '';
    const entity = findEntity(state.entities, tagOrId);
    return entity ? fn(entity, req, state) : notFound(tagOrId);
  };

const details: RouteDef<EntitiesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog/:tagOrId',
  permission: null,
  handle: withEntity((entity, req, state) => {
    const depth = hierarchyDepth(req.query.get('hierarchyDepth'));
    if (depth === undefined) {
      return errorResponse(400, 'BAD_REQUEST', "hierarchyDepth must be 'full' or a positive integer");
    }
    const groups = queryList(req.query, 'includeHierarchyFields').includes('groups');
    const hierarchy = nestedHierarchy(entity, state.entities, { depth, groups });
    return { status: 200, body: { ...detailsOf(entity, state), hierarchy } };
  }),
};

const descriptor: RouteDef<EntitiesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog/:tagOrId/openapi',
  permission: null,
  handle: withEntity((entity, req) =>
    queryFlag(req.query, 'yaml', false)
      ? // The vendor returns raw YAML text; its content type is not documented (application/yaml inferred).
        { status: 200, body: stringifyYaml(entity.descriptor), contentType: 'application/yaml' }
      : { status: 200, body: entity.descriptor },
  ),
};

const setArchived = (isArchived: boolean, action: string): RouteDef<EntitiesSlices> => ({
  method: 'PUT',
  pattern: `/api/v1/catalog/:tagOrId/${action}`,
  permission: ['ARCHIVE_ENTITIES'],
  handle: withEntity((entity, _req, state) => {
    entity.isArchived = isArchived;
    return { status: 200, body: detailsOf(entity, state) };
  }),
});

const remove: RouteDef<EntitiesSlices> = {
  method: 'DELETE',
  pattern: '/api/v1/catalog/:tagOrId',
  permission: ['DELETE_ENTITIES'],
  handle: withEntity((entity, _req, state) => {
    deleteEntity(state, entity);
    return { status: 200 };
  }),
};

const removeByType: RouteDef<EntitiesSlices> = {
  method: 'DELETE',
  pattern: '/api/v1/catalog',
  permission: ['DELETE_ENTITIES'],
  handle(req, state) {
    const types = queryList(req.query, 'types');
    const ids = queryList(req.query, 'ids');
    if (types.length === 0 && ids.length === 0) return errorResponse(400, 'BAD_REQUEST', 'types or ids is required');
    for (const entity of Object.values(state.entities.byId)) {
      if (types.includes(entity.type) || ids.includes(entity.id)) deleteEntity(state, entity);
    }
    return { status: 200 };
  },
};

/** Entity routes. */
export const entityRoutes: readonly RouteDef<EntitiesSlices>[] = [
  upsert,
  patch,
  list,
  descriptors,
  details,
  descriptor,
  setArchived(true, 'archive'),
  setArchived(false, 'unarchive'),
  remove,
  removeByType,
];
