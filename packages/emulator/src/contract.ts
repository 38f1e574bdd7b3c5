/**
 * The emulator's internal contract: a resource module (entities, initiatives, …) is a list of
 * routes over its slice of the state. The server (`server.ts`) does HTTP, auth, permissions, rate
 * limiting, faults and the request log; route handlers are plain functions over parsed requests.
 */

import type { JqOutcome } from '../../../src/jq/jq.js';

/** The vendor's permissions (https://docs.cortex.io/docs/walkthroughs/workspace-settings/permissioning/custom-roles). */
export const PERMISSIONS = [
  'EDIT_API_KEYS',
  'CONFIGURE_SCAFFOLDER',
  'EDIT_ENTITIES',
  'ARCHIVE_ENTITIES',
  'DELETE_ENTITIES',
  'EDIT_INITIATIVES',
  'VIEW_INITIATIVES',
  'EDIT_ENTITY_TYPES',
  'CONFIGURE_CUSTOM_METRICS',
  'VIEW_CATALOGS',
  'EDIT_CATALOGS',
  /** Inferred: the vendor names no permission for scorecard writes. */
  'EDIT_SCORECARDS',
  /** Inferred: the vendor names no permission for SCIM user updates. */
  'CONFIGURE_SCIM',
  /** The vendor OpenAPI's "View GitOps logs" (the vendor's permission list does not name the group). */
  'VIEW_GITOPS_LOGS',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type EmulatorMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface EmulatorRequest {
  method: EmulatorMethod;
  /** Decoded path parameters, by the names used in the route pattern (`:tagOrId`). */
  params: Record<string, string>;
  query: URLSearchParams;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /** The raw request body as text ('' when none). */
  rawBody: string;
  /** Lower-case media type without parameters, e.g. `application/json`, `application/openapi`. */
  contentType: string;
}

export interface EmulatorResponse {
  status: number;
  /** Serialized as JSON unless it is a string (then sent as is with `contentType`). */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * What a descriptor of a custom type without `x-cortex-definition` gets. The live evidence:
 * the live API answers "Standard cortex tags: Definition is required" for entities whose type's
 * schema is `{"type": "object", "properties": {}}` (the vendor CLI's solution bundles), while the
 * vendor CLI's `test_catalog_delete_by_type`, re-enabled against a live tenant, creates one without
 * the key when its type's schema is `{}`. `empty-schema` (the default) fits both: accepted only
 * when the type's schema is exactly `{}`. `refuse`: always "Definition is required". `allow`:
 * accepted whenever the type's schema accepts `{}`.
 */
export const MISSING_DEFINITION_MODES = ['empty-schema', 'refuse', 'allow'] as const;
export type MissingDefinitionMode = (typeof MISSING_DEFINITION_MODES)[number];

export interface EmulatorEnv {
  /** Milliseconds since the epoch (injectable for tests). */
  now(): number;
  /** A vendor-looking id: prefix + 16 lower-case hex characters (`en2da8159dbeefb974`). */
  newId(prefix: string): string;
  /** See `MissingDefinitionMode`; absent = `empty-schema`. */
  readonly missingDefinition?: MissingDefinitionMode;
  /** Evaluates a jq program on a JSON text (the inbound webhook); absent in plain route tests. */
  evaluateJq?(program: string, input: string): Promise<JqOutcome>;
}

export interface RouteDef<S> {
  method: EmulatorMethod;
  /** Express-style pattern: `/api/v1/initiatives/:cid`. A `:param` matches one encoded segment. */
  pattern: string;
  /** Permissions of which the key must hold at least one; `null` = any valid key; `'none'` = no key needed. */
  permission: readonly Permission[] | null | 'none';
  handle(req: EmulatorRequest, state: S, env: EmulatorEnv): EmulatorResponse | Promise<EmulatorResponse>;
}

/** The vendor's standard error body (OpenAPI `ErrorResponse`). */
export const errorResponse = (status: number, type: string, message: string, details?: string): EmulatorResponse => ({
  status,
  body: { type, message, details: details ?? message, httpStatus: status, gatewayHttpStatus: 0, requestId: '' },
});

/**
 * A page of a list in the vendor's envelope `{<listKey>: [...], page, total, totalPages}`.
 * `page` is 0-based, `pageSize` 1–1000 (default 250); an out-of-range value is a 400.
 */
export const pagedResponse = (items: readonly unknown[], query: URLSearchParams, listKey: string): EmulatorResponse => {
  const page = query.has('page') ? Number(query.get('page')) : 0;
  const pageSize = query.has('pageSize') ? Number(query.get('pageSize')) : 250;
  if (!Number.isInteger(page) || page < 0)
    return errorResponse(400, 'BAD_REQUEST', 'page must be a non-negative integer');
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
    return errorResponse(400, 'BAD_REQUEST', 'pageSize must be between 1 and 1000');
  }
  const total = items.length;
  const totalPages = Math.ceil(total / pageSize);
  return {
    status: 200,
    body: { [listKey]: items.slice(page * pageSize, (page + 1) * pageSize), page, total, totalPages },
  };
};
