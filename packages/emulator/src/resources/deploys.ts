/**
 * Deploy records (the vendor's nine operations): per entity (list, add, update and delete by uuid,
 * delete by filter), across the tenant (delete all, delete by filter, distinct environments,
 * search). Bodies are the vendor's `SaveDeployRequest`; records answer in both the list's shape
 * (`deployer: {email, name}`) and the single record's (`deployerEmail`, `deployerName`).
 * Inferred (not in the vendor OpenAPI): `GET /deploys/environments` answers `{environments: [...]}`
 * sorted; `GET /deploys/search` filters by `environment`, `sha`, `type`, `tag` and a
 * `startTime`/`endTime` range, and pages `{deployments, page, total, totalPages}`, newest first.
 */
import { z } from 'zod';
import {
  type EmulatorRequest,
  type EmulatorResponse,
  errorResponse,
  pagedResponse,
  type RouteDef,
} from '../contract.js';
import { fnv1a, type JsonObject, own, uuidFrom } from '../util.js';
import { type EntitiesState, findEntity, type StoredEntity } from './entity-store.js';
import { readBody } from './initiatives-body.js';

export const DEPLOY_TYPES = ['DEPLOY', 'SCALE', 'ROLLBACK', 'RESTART'] as const;

export interface StoredDeploy {
  uuid: string;
  /** A stable number per deploy (the vendor's `id`). */
  id: number;
  entityId: string;
  title: string;
  type: (typeof DEPLOY_TYPES)[number];
  timestamp: string;
  sha: string | null;
  environment: string | null;
  url: string | null;
  deployer: { email: string | null; name: string | null };
  customData: Record<string, unknown>;
}

export interface DeploysState {
  byUuid: Record<string, StoredDeploy>;
  nextId: number;
}

export const initialDeploysState = (): DeploysState => ({ byUuid: {}, nextId: 1 });

export interface DeploysSlices {
  entities: EntitiesState;
  deploys: DeploysState;
}

const isoDateTime = z.string().refine((s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)), {
  message: 'expected an ISO 8601 date-time',
});

const saveDeploy = z.object({
  title: z.string().min(1),
  type: z.enum(DEPLOY_TYPES),
  timestamp: isoDateTime,
  sha: z.string().nullable().optional(),
  environment: z.string().nullable().optional(),
  url: z.string().nullable().optional(),
  deployer: z
    .object({ email: z.string().nullable().optional(), name: z.string().nullable().optional() })
    .nullable()
    .optional(),
  customData: z.record(z.string(), z.json()).nullable().optional(),
});
type SaveDeploy = z.infer<typeof saveDeploy>;

const EDIT = ['EDIT_ENTITIES'] as const;

export const deployView = (d: StoredDeploy, entities: EntitiesState): JsonObject => {
  const entity = entities.byId[d.entityId];
  return {
    uuid: d.uuid,
    id: d.id,
    // The vendor's numeric id of the entity; a stable number derived from the emulator's entity id.
    serviceId: fnv1a(d.entityId),
    title: d.title,
    type: d.type,
    timestamp: d.timestamp,
    sha: d.sha,
    environment: d.environment,
    url: d.url,
    deployer: d.deployer,
    deployerEmail: d.deployer.email,
    deployerName: d.deployer.name,
    customData: d.customData,
    ...(entity ? { entityTag: entity.tag } : {}),
  };
};

const fields = (body: SaveDeploy) => ({
  title: body.title,
  type: body.type,
  timestamp: body.timestamp,
  sha: body.sha ?? null,
  environment: body.environment ?? null,
  url: body.url ?? null,
  deployer: { email: body.deployer?.email ?? null, name: body.deployer?.name ?? null },
  customData: body.customData ?? {},
});

const newestFirst = (a: StoredDeploy, b: StoredDeploy): number =>
  Date.parse(b.timestamp) - Date.parse(a.timestamp) || a.id - b.id;

/** The filters `environment`, `sha` and `type` of a delete or search; a 400 for an unknown type. */
const filterOf = (req: EmulatorRequest): ((d: StoredDeploy) => boolean) | EmulatorResponse => {
  const environment = req.query.get('environment');
  const sha = req.query.get('sha');
  const type = req.query.get('type');
  if (type !== null && type !== '' && !(DEPLOY_TYPES as readonly string[]).includes(type)) {
    return errorResponse(400, 'BAD_REQUEST', `type must be one of ${DEPLOY_TYPES.join(', ')}`);
  }
  return (d) =>
    (environment === null || environment === '' || d.environment === environment) &&
    (sha === null || sha === '' || d.sha === sha) &&
    (type === null || type === '' || d.type === type);
};

const hasFilter = (req: EmulatorRequest): boolean =>
  ['environment', 'sha', 'type'].some((k) => (req.query.get(k) ?? '') !== '');

const removeWhere = (state: DeploysSlices, keep: (d: StoredDeploy) => boolean): StoredDeploy[] => {
  const removed = Object.values(state.deploys.byUuid).filter((d) => !keep(d));
  for (const d of removed) delete state.deploys.byUuid[d.uuid];
  return removed.sort(newestFirst);
};

type EntityHandler = (
  entity: StoredEntity,
  req: EmulatorRequest,
  state: DeploysSlices,
  env: { now(): number; newId(prefix: string): string },
) => EmulatorResponse;

const withEntity =
  (fn: EntityHandler) =>
  (req: EmulatorRequest, state: DeploysSlices, env: { now(): number; newId(prefix: string): string }) => {
    const tagOrId = req.params.tagOrId ?? '';
    const entity = findEntity(state.entities, tagOrId);
    return entity ? fn(entity, req, state, env) : errorResponse(404, 'NOT_FOUND', `Entity not found: ${tagOrId}`);
  };

const deployOf = (
  entity: StoredEntity,
  req: EmulatorRequest,
  state: DeploysSlices,
): StoredDeploy | EmulatorResponse => {
  const uuid = req.params.uuid ?? '';
  const deploy = own(state.deploys.byUuid, uuid);
  return deploy && deploy.entityId === entity.id
    ? deploy
    : errorResponse(404, 'NOT_FOUND', `No deploy ${uuid} on entity ${entity.tag}`);
};

export const deployRoutes: readonly RouteDef<DeploysSlices>[] = [
  {
    method: 'GET',
    pattern: '/api/v1/catalog/:tagOrId/deploys',
    permission: null,
    handle: withEntity((entity, req, state) => {
      const items = Object.values(state.deploys.byUuid)
        .filter((d) => d.entityId === entity.id)
        .sort(newestFirst)
        .map((d) => deployView(d, state.entities));
      return pagedResponse(items, req.query, 'deployments');
    }),
  },
  {
    method: 'POST',
    pattern: '/api/v1/catalog/:tagOrId/deploys',
    permission: EDIT,
    handle: withEntity((entity, req, state, env) => {
      const body = readBody(req, saveDeploy);
      if (!body.ok) return body.response;
      let uuid = uuidFrom((p) => env.newId(p));
      while (state.deploys.byUuid[uuid]) uuid = uuidFrom((p) => env.newId(p));
      const deploy: StoredDeploy = { uuid, id: state.deploys.nextId++, entityId: entity.id, ...fields(body.value) };
      state.deploys.byUuid[uuid] = deploy;
      return { status: 200, body: deployView(deploy, state.entities) };
    }),
  },
  {
    method: 'PUT',
    pattern: '/api/v1/catalog/:tagOrId/deploys/:uuid',
    permission: EDIT,
    handle: withEntity((entity, req, state) => {
      const deploy = deployOf(entity, req, state);
      if ('status' in deploy) return deploy;
      const body = readBody(req, saveDeploy);
      if (!body.ok) return body.response;
      Object.assign(deploy, fields(body.value));
      return { status: 200, body: deployView(deploy, state.entities) };
    }),
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/catalog/:tagOrId/deploys/:uuid',
    permission: EDIT,
    handle: withEntity((entity, req, state) => {
      const deploy = deployOf(entity, req, state);
      if ('status' in deploy) return deploy;
      delete state.deploys.byUuid[deploy.uuid];
      return { status: 200, body: deployView(deploy, state.entities) };
    }),
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/catalog/:tagOrId/deploys',
    permission: EDIT,
    handle: withEntity((entity, req, state) => {
      const filter = filterOf(req);
      if (typeof filter !== 'function') return filter;
      const removed = removeWhere(state, (d) => !(d.entityId === entity.id && filter(d)));
      return { status: 200, body: { deploys: removed.map((d) => deployView(d, state.entities)) } };
    }),
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/catalog/deploys/all',
    permission: EDIT,
    handle(_req, state) {
      const removed = removeWhere(state, () => false);
      return { status: 200, body: { deploys: removed.map((d) => deployView(d, state.entities)) } };
    },
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/catalog/deploys',
    permission: EDIT,
    handle(req, state) {
      // Without a filter this would be "delete all", which has its own, explicit endpoint.
      if (!hasFilter(req))
        return errorResponse(400, 'BAD_REQUEST', 'At least one of sha, environment or type is required');
      const filter = filterOf(req);
      if (typeof filter !== 'function') return filter;
      const removed = removeWhere(state, (d) => !filter(d));
      return { status: 200, body: { deploys: removed.map((d) => deployView(d, state.entities)) } };
    },
  },
  {
    method: 'GET',
    pattern: '/api/v1/deploys/environments',
    permission: null,
    handle(_req, state) {
      const environments = new Set<string>();
      for (const d of Object.values(state.deploys.byUuid)) if (d.environment) environments.add(d.environment);
      return { status: 200, body: { environments: [...environments].sort() } };
    },
  },
  {
    method: 'GET',
    pattern: '/api/v1/deploys/search',
    permission: null,
    handle(req, state) {
      const filter = filterOf(req);
      if (typeof filter !== 'function') return filter;
      const tag = req.query.get('tag');
      const entity = tag === null || tag === '' ? undefined : findEntity(state.entities, tag);
      if (tag !== null && tag !== '' && !entity) return errorResponse(404, 'NOT_FOUND', `Entity not found: ${tag}`);
      const bound = (name: string): number | null | EmulatorResponse => {
        const raw = req.query.get(name);
        if (raw === null || raw === '') return null;
        const ms = Date.parse(raw);
        return Number.isNaN(ms) ? errorResponse(400, 'BAD_REQUEST', `${name} must be an ISO 8601 date-time`) : ms;
      };
      const from = bound('startTime');
      const to = bound('endTime');
      if (typeof from === 'object' && from !== null) return from;
      if (typeof to === 'object' && to !== null) return to;
      const items = Object.values(state.deploys.byUuid)
        .filter((d) => filter(d) && (!entity || d.entityId === entity.id))
        .filter((d) => {
          const at = Date.parse(d.timestamp);
          return (from === null || at >= from) && (to === null || at <= to);
        })
        .sort(newestFirst)
        .map((d) => deployView(d, state.entities));
      return pagedResponse(items, req.query, 'deployments');
    },
  },
];
