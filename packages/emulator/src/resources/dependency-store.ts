/**
 * Dependencies between entities. API-defined edges are stored; descriptor-defined edges
 * (`x-cortex-dependency`) are derived from the caller's descriptor and cannot be changed through
 * the API. An edge is identified by (caller, callee, method, path).
 */
import { isObject, type JsonObject } from '../util.js';
import { type EntitiesState, findEntity, infoOf, type StoredEntity } from './entity-store.js';

export interface ApiEdge {
  callerId: string;
  calleeId: string;
  method: string | null;
  path: string | null;
  description: string | null;
  metadata: unknown;
}

export interface DependenciesState {
  /** API-defined edges by `edgeKey`. */
  edges: Record<string, ApiEdge>;
}

export const initialDependenciesState = (): DependenciesState => ({ edges: {} });

export const HTTP_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

/** The identity of an edge. */
export const edgeKey = (callerId: string, calleeId: string, method: string | null, path: string | null): string =>
  JSON.stringify([callerId, calleeId, method?.toUpperCase() ?? null, path]);

/** An edge declared in a descriptor's `x-cortex-dependency`. */
export interface DescriptorEdge {
  calleeTag: string;
  method: string | null;
  path: string | null;
  description: string | null;
  metadata: unknown;
}

export const descriptorEdges = (entity: StoredEntity): DescriptorEdge[] => {
  const deps = infoOf(entity.descriptor)['x-cortex-dependency'];
  if (!Array.isArray(deps)) return [];
  return deps.filter(isObject).map((d) => ({
    calleeTag: String(d.tag),
    method: typeof d.method === 'string' ? d.method.toUpperCase() : null,
    path: typeof d.path === 'string' ? d.path : null,
    description: typeof d.description === 'string' ? d.description : null,
    metadata: d.metadata ?? null,
  }));
};

/** Is (caller → calleeTag, method, path) declared in the caller's descriptor? */
export const isDescriptorEdge = (
  caller: StoredEntity,
  calleeTag: string,
  method: string | null,
  path: string | null,
): DescriptorEdge | undefined =>
  descriptorEdges(caller).find(
    (d) => d.calleeTag === calleeTag && d.method === (method?.toUpperCase() ?? null) && d.path === path,
  );

/** A `DependencyResponse`. */
export const dependencyView = (
  caller: { tag: string; type: string },
  calleeTag: string,
  calleeType: string | null,
  edge: { method: string | null; path: string | null; description: string | null; metadata: unknown },
): JsonObject => ({
  callerTag: caller.tag,
  callerType: caller.type,
  calleeTag,
  calleeType,
  method: edge.method,
  path: edge.path,
  description: edge.description,
  metadata: edge.metadata ?? null,
});

/** Every edge (API and descriptor) leaving `caller`, as DependencyResponse items. */
export const outgoingEdges = (caller: StoredEntity, entities: EntitiesState, deps: DependenciesState): JsonObject[] => {
  const out: JsonObject[] = [];
  for (const d of descriptorEdges(caller)) {
    out.push(dependencyView(caller, d.calleeTag, findEntity(entities, d.calleeTag)?.type ?? null, d));
  }
  for (const e of Object.values(deps.edges)) {
    if (e.callerId !== caller.id) continue;
    const callee = entities.byId[e.calleeId];
    if (callee) out.push(dependencyView(caller, callee.tag, callee.type, e));
  }
  return out;
};

/** Every edge (API and descriptor) arriving at `callee`. */
export const incomingEdges = (callee: StoredEntity, entities: EntitiesState, deps: DependenciesState): JsonObject[] => {
  const out: JsonObject[] = [];
  for (const caller of Object.values(entities.byId)) {
    for (const d of descriptorEdges(caller)) {
      if (d.calleeTag === callee.tag) out.push(dependencyView(caller, callee.tag, callee.type, d));
    }
  }
  for (const e of Object.values(deps.edges)) {
    if (e.calleeId !== callee.id) continue;
    const caller = entities.byId[e.callerId];
    if (caller) out.push(dependencyView(caller, callee.tag, callee.type, e));
  }
  return out;
};

/** Drops every API edge from or to an entity (when it is deleted). */
export const removeEdgesOf = (deps: DependenciesState, entityId: string): void => {
  for (const [key, e] of Object.entries(deps.edges)) {
    if (e.callerId === entityId || e.calleeId === entityId) delete deps.edges[key];
  }
};
