/**
 * Dependency edge identity and canonical form, shared by parse, fetchLive and apply. An edge is
 * identified by caller, callee, and (together) method and path: `payments→ledger POST /v1/entries`.
 */
import { sortKeys } from '../../core/diff.js';
import type { JsonObject, JsonValue } from '../../core/model.js';

/** The fields that identify one edge. */
export interface EdgeKey {
  callerTag: string;
  calleeTag: string;
  method?: string;
  path?: string;
}

/** The plan id of an edge: `caller→callee`, plus ` METHOD path` when the edge names an endpoint. */
export const dependencyId = (edge: EdgeKey): string => {
  const base = `${edge.callerTag}→${edge.calleeTag}`;
  if (edge.method === undefined && edge.path === undefined) return base;
  return `${base} ${edge.method ?? ''} ${edge.path ?? ''}`;
};

/** The inverse of `dependencyId`, or undefined for an id that is not an edge id. */
export const parseDependencyId = (id: string): EdgeKey | undefined => {
  const arrow = id.indexOf('→');
  if (arrow <= 0) return undefined;
  const callerTag = id.slice(0, arrow);
  const rest = id.slice(arrow + 1);
  const space = rest.indexOf(' ');
  if (space < 0) return rest === '' ? undefined : { callerTag, calleeTag: rest };
  const calleeTag = rest.slice(0, space);
  const endpoint = rest.slice(space + 1);
  const gap = endpoint.indexOf(' ');
  if (calleeTag === '' || gap < 0) return undefined;
  const method = endpoint.slice(0, gap);
  const path = endpoint.slice(gap + 1);
  return { callerTag, calleeTag, ...(method ? { method } : {}), ...(path ? { path } : {}) };
};

const isEmptyObject = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;

/** The comparable form of an edge: no description and empty metadata read the same as absent ones. */
export const canonicalEdge = (edge: EdgeKey & { description?: string | null; metadata?: unknown }): JsonValue => {
  const out: JsonObject = { callerTag: edge.callerTag, calleeTag: edge.calleeTag };
  if (edge.method) out.method = edge.method.toUpperCase();
  if (edge.path) out.path = edge.path;
  if (edge.description) out.description = edge.description;
  if (edge.metadata !== undefined && edge.metadata !== null && !isEmptyObject(edge.metadata)) {
    out.metadata = sortKeys(edge.metadata);
  }
  return out;
};
