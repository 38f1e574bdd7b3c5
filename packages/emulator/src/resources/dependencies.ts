/** Dependencies: bulk PUT/DELETE, per-caller list/delete, and single-edge GET/POST/PUT/DELETE. */
import {
  type EmulatorRequest,
  type EmulatorResponse,
  errorResponse,
  pagedResponse,
  type RouteDef,
} from '../contract.js';
import { hashOrder, isObject, type JsonObject, parseJsonBody, queryFlag } from '../util.js';
import {
  type DependenciesState,
  dependencyView,
  edgeKey,
  HTTP_METHODS,
  incomingEdges,
  isDescriptorEdge,
  outgoingEdges,
} from './dependency-store.js';
import { type EntitiesState, findEntity, type StoredEntity } from './entity-store.js';

/** The slices dependency routes read. */
export interface DependenciesSlices {
  entities: EntitiesState;
  dependencies: DependenciesState;
}

const EDIT = ['EDIT_ENTITIES'] as const;
const YAML_DEFINED = 'Cannot modify dependency that is defined in cortex.yaml';

const notFound = (what: string): EmulatorResponse => errorResponse(404, 'NOT_FOUND', what);

interface EdgeRef {
  caller: StoredEntity;
  callee: StoredEntity;
  method: string | null;
  path: string | null;
}

const checkMethod = (method: unknown): string | null | EmulatorResponse => {
  if (method === undefined || method === null || method === '') return null;
  if (typeof method !== 'string' || !HTTP_METHODS.includes(method.toUpperCase())) {
    return errorResponse(400, 'BAD_REQUEST', `Invalid method ${String(method)}`);
  }
  return method.toUpperCase();
};

/** Resolves (caller, callee, method, path) from a single-edge URL, or the 400/404 response. */
const resolveEdge = (req: EmulatorRequest, state: DependenciesSlices): EdgeRef | EmulatorResponse => {
  const callerTag = req.params.callerTag ?? '';
  const calleeTag = req.params.calleeTag ?? '';
  const caller = findEntity(state.entities, callerTag);
  if (!caller) return notFound(`Entity not found: ${callerTag}`);
  const callee = findEntity(state.entities, calleeTag);
  if (!callee) return notFound(`Entity not found: ${calleeTag}`);
  const method = checkMethod(req.query.get('method'));
  if (method !== null && typeof method === 'object') return method;
  const path = req.query.get('path') || null;
  if ((method === null) !== (path === null)) return errorResponse(400, 'BAD_REQUEST', 'method and path go together');
  return { caller, callee, method, path };
};

const isResponse = (x: EdgeRef | EmulatorResponse): x is EmulatorResponse => 'status' in x;

const optionalBody = (
  req: EmulatorRequest,
): { ok: true; body: JsonObject } | { ok: false; response: EmulatorResponse } => {
  if (req.rawBody.trim() === '') return { ok: true, body: {} };
  const parsed = parseJsonBody(req, { object: true });
  return parsed.ok ? { ok: true, body: parsed.value as JsonObject } : parsed;
};

const single = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  act: (ref: EdgeRef, key: string, req: EmulatorRequest, state: DependenciesSlices) => EmulatorResponse,
): RouteDef<DependenciesSlices> => ({
  method,
  pattern: '/api/v1/catalog/:callerTag/dependencies/:calleeTag',
  permission: method === 'GET' ? null : EDIT,
  handle(req, state) {
    const ref = resolveEdge(req, state);
    if (isResponse(ref)) return ref;
    const yamlEdge = isDescriptorEdge(ref.caller, ref.callee.tag, ref.method, ref.path);
    if (yamlEdge && method === 'GET')
      return { status: 200, body: dependencyView(ref.caller, ref.callee.tag, ref.callee.type, yamlEdge) };
    if (yamlEdge) return errorResponse(400, 'BAD_REQUEST', YAML_DEFINED);
    return act(ref, edgeKey(ref.caller.id, ref.callee.id, ref.method, ref.path), req, state);
  },
});

const view = (ref: EdgeRef, state: DependenciesSlices, key: string): JsonObject | undefined => {
  const edge = state.dependencies.edges[key];
  return edge ? dependencyView(ref.caller, ref.callee.tag, ref.callee.type, edge) : undefined;
};

const getOne = single('GET', (ref, key, _req, state) => {
  const body = view(ref, state, key);
  return body ? { status: 200, body } : notFound('Dependency not found');
});

const createOne = single('POST', (ref, key, req, state) => {
  const parsed = optionalBody(req);
  if (!parsed.ok) return parsed.response;
  // An existing API edge: the vendor's status is not documented; 409 is inferred.
  if (state.dependencies.edges[key]) return errorResponse(409, 'CONFLICT', 'Dependency already exists');
  const b = parsed.body;
  state.dependencies.edges[key] = {
    callerId: ref.caller.id,
    calleeId: ref.callee.id,
    method: ref.method,
    path: ref.path,
    description: typeof b.description === 'string' ? b.description : null,
    metadata: b.metadata ?? null,
  };
  return { status: 201, body: view(ref, state, key) };
});

// The vendor's DependencyUpdateRequest requires both fields; metadata is replaced wholesale.
const updateOne = single('PUT', (ref, key, req, state) => {
  const parsed = parseJsonBody(req, { object: true });
  if (!parsed.ok) return parsed.response;
  const b = parsed.value as JsonObject;
  if (typeof b.description !== 'string' || !('metadata' in b)) {
    return errorResponse(400, 'BAD_REQUEST', 'description and metadata are required');
  }
  const edge = state.dependencies.edges[key];
  if (!edge) return notFound('Dependency not found');
  edge.description = b.description;
  edge.metadata = b.metadata ?? null;
  return { status: 200, body: view(ref, state, key) };
});

const deleteOne = single('DELETE', (_ref, key, _req, state) => {
  if (!state.dependencies.edges[key]) return notFound('Dependency not found');
  delete state.dependencies.edges[key];
  return { status: 204 };
});

const listOfCaller: RouteDef<DependenciesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog/:callerTag/dependencies',
  permission: null,
  handle(req, state) {
    const tag = req.params.callerTag ?? '';
    const entity = findEntity(state.entities, tag);
    if (!entity) return notFound(`Entity not found: ${tag}`);
    const items = [
      ...(queryFlag(req.query, 'includeOutgoing', true)
        ? outgoingEdges(entity, state.entities, state.dependencies)
        : []),
      ...(queryFlag(req.query, 'includeIncoming', false)
        ? incomingEdges(entity, state.entities, state.dependencies)
        : []),
    ];
    return pagedResponse(
      hashOrder(items, (d) => JSON.stringify([d.callerTag, d.calleeTag, d.method, d.path])),
      req.query,
      'dependencies',
    );
  },
};

const deleteOfCaller: RouteDef<DependenciesSlices> = {
  method: 'DELETE',
  pattern: '/api/v1/catalog/:callerTag/dependencies',
  permission: EDIT,
  handle(req, state) {
    const tag = req.params.callerTag ?? '';
    const entity = findEntity(state.entities, tag);
    if (!entity) return notFound(`Entity not found: ${tag}`);
    for (const [key, edge] of Object.entries(state.dependencies.edges)) {
      if (edge.callerId === entity.id) delete state.dependencies.edges[key];
    }
    return { status: 204 };
  },
};

interface BulkItem {
  ref: EdgeRef;
  key: string;
  description: string | null;
  metadata: unknown;
}

/** Validates a bulk body `{values: {caller: [{tag, method?, path?, description?, metadata?}]}}`. */
const readBulk = (req: EmulatorRequest, state: DependenciesSlices): BulkItem[] | EmulatorResponse => {
  const parsed = parseJsonBody(req, { object: true });
  if (!parsed.ok) return parsed.response;
  const values = (parsed.value as JsonObject).values;
  if (!isObject(values)) return errorResponse(400, 'BAD_REQUEST', 'values is required');
  const items: BulkItem[] = [];
  for (const [callerTag, edges] of Object.entries(values)) {
    const caller = findEntity(state.entities, callerTag);
    if (!caller) return notFound(`Entity not found: ${callerTag}`);
    if (!Array.isArray(edges)) return errorResponse(400, 'BAD_REQUEST', `values.${callerTag} must be a list`);
    for (const e of edges) {
      if (!isObject(e) || typeof e.tag !== 'string')
        return errorResponse(400, 'BAD_REQUEST', 'Each dependency needs a tag');
      const callee = findEntity(state.entities, e.tag);
      if (!callee) return notFound(`Entity not found: ${e.tag}`);
      const method = checkMethod(e.method);
      if (method !== null && typeof method === 'object') return method;
      const path = typeof e.path === 'string' && e.path !== '' ? e.path : null;
      if (isDescriptorEdge(caller, callee.tag, method, path)) return errorResponse(400, 'BAD_REQUEST', YAML_DEFINED);
      items.push({
        ref: { caller, callee, method, path },
        key: edgeKey(caller.id, callee.id, method, path),
        description: typeof e.description === 'string' ? e.description : null,
        metadata: e.metadata ?? null,
      });
    }
  }
  return items;
};

const bulkPut: RouteDef<DependenciesSlices> = {
  method: 'PUT',
  pattern: '/api/v1/catalog/dependencies',
  permission: EDIT,
  handle(req, state) {
    const items = readBulk(req, state);
    if (!Array.isArray(items)) return items;
    const values: Record<string, JsonObject[]> = {};
    for (const { ref, key, description, metadata } of items) {
      state.dependencies.edges[key] = {
        callerId: ref.caller.id,
        calleeId: ref.callee.id,
        method: ref.method,
        path: ref.path,
        description,
        metadata,
      };
      const callerList = values[ref.caller.tag] ?? [];
      callerList.push({ tag: ref.callee.tag, method: ref.method, path: ref.path, description, metadata });
      values[ref.caller.tag] = callerList;
    }
    return { status: 200, body: { values } };
  },
};

const bulkDelete: RouteDef<DependenciesSlices> = {
  method: 'DELETE',
  pattern: '/api/v1/catalog/dependencies',
  permission: EDIT,
  handle(req, state) {
    const items = readBulk(req, state);
    if (!Array.isArray(items)) return items;
    for (const { key } of items) delete state.dependencies.edges[key];
    return { status: 204 };
  },
};

/** Dependency routes. */
export const dependencyRoutes: readonly RouteDef<DependenciesSlices>[] = [
  bulkPut,
  bulkDelete,
  listOfCaller,
  deleteOfCaller,
  getOne,
  createOne,
  updateOne,
  deleteOne,
];
