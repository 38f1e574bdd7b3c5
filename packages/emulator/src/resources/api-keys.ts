/**
 * API keys (`/api/v1/auth/key`) and the key store the server authenticates against. Key values are
 * stored only as SHA-256 hashes, so a saved data file never holds a usable key.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  type EmulatorRequest,
  type EmulatorResponse,
  errorResponse,
  PERMISSIONS,
  type Permission,
  pagedResponse,
  type RouteDef,
} from '../contract.js';
import { hashOrder, isObject, isoSeconds, type JsonObject, own, parseJsonBody } from '../util.js';

export interface ApiKeyRole {
  type: 'DEFAULT' | 'CUSTOM';
  role?: 'READ_ONLY' | 'USER' | 'ADMIN';
  tag?: string;
}

export interface StoredApiKey {
  cid: string;
  name: string;
  description: string | null;
  createdDate: string;
  expirationDate: string | null;
  roles: ApiKeyRole[];
  last4: string;
  valueHash: string;
  /** Granted directly, besides the roles' (keys added with `addApiKey`); [] for keys made through the API. */
  permissions: Permission[];
}

export interface ApiKeysState {
  byCid: Record<string, StoredApiKey>;
}

export const initialApiKeysState = (): ApiKeysState => ({ byCid: {} });

export const hashKeyValue = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Custom roles (configured in the UI on a real tenant; `POST /_emulator/roles` here), by tag. */
export interface CustomRolesState {
  byTag: Record<string, { tag: string; permissions: Permission[] }>;
}

export const initialCustomRolesState = (): CustomRolesState => ({ byTag: {} });

/**
 * What each default role may do, per the vendor's permission table (https://docs.cortex.io/docs/walkthroughs/workspace-settings/permissioning/custom-roles). ADMIN: everything. READ_ONLY:
 * reads only (the view permissions). USER (inferred: the vendor says a user role edits the
 * catalog but does not administer the workspace): the READ_ONLY set plus editing, archiving and
 * deleting entities, Initiatives and catalogs; no API keys, entity types, Scaffolder, scorecards,
 * custom metrics or SCIM.
 */
export const DEFAULT_ROLE_PERMISSIONS: Readonly<Record<'ADMIN' | 'USER' | 'READ_ONLY', readonly Permission[]>> = {
  ADMIN: PERMISSIONS,
  USER: [
    'VIEW_INITIATIVES',
    'VIEW_CATALOGS',
    'VIEW_GITOPS_LOGS',
    'EDIT_ENTITIES',
    'ARCHIVE_ENTITIES',
    'DELETE_ENTITIES',
    'EDIT_INITIATIVES',
    'EDIT_CATALOGS',
  ],
  READ_ONLY: ['VIEW_INITIATIVES', 'VIEW_CATALOGS', 'VIEW_GITOPS_LOGS'],
};

/**
 * Permissions of a set of roles. A CUSTOM role grants what its definition says; a CUSTOM role that
 * is not defined but whose tag is a permission name (`EDIT_ENTITIES`) grants that permission
 * (an emulator shorthand for tests).
 */
export const permissionsOfRoles = (roles: readonly ApiKeyRole[], custom: CustomRolesState): Permission[] => {
  const out = new Set<Permission>();
  for (const r of roles) {
    if (r.type === 'DEFAULT' && r.role !== undefined) for (const p of DEFAULT_ROLE_PERMISSIONS[r.role]) out.add(p);
    if (r.type === 'CUSTOM') {
      const defined = own(custom.byTag, r.tag ?? '');
      if (defined) for (const p of defined.permissions) out.add(p);
      else if ((PERMISSIONS as readonly string[]).includes(r.tag ?? '')) out.add(r.tag as Permission);
    }
  }
  return [...out];
};

/** A CUSTOM role tag that is neither defined nor a permission name, if any. */
export const unknownCustomRole = (roles: readonly ApiKeyRole[], custom: CustomRolesState): string | undefined =>
  roles.find(
    (r) =>
      r.type === 'CUSTOM' &&
      !own(custom.byTag, r.tag ?? '') &&
      !(PERMISSIONS as readonly string[]).includes(r.tag ?? ''),
  )?.tag;

/** What a key may do: the permissions granted to it directly (test keys) and those of its roles. */
export const effectivePermissions = (key: StoredApiKey, custom: CustomRolesState): Permission[] => [
  ...new Set([...key.permissions, ...permissionsOfRoles(key.roles, custom)]),
];

/** Adds a key with a known value; returns its record. */
export const addKey = (
  state: ApiKeysState,
  init: {
    value: string;
    permissions: readonly Permission[];
    name?: string;
    roles?: ApiKeyRole[];
    cid: string;
    now: number;
  },
): StoredApiKey => {
  const key: StoredApiKey = {
    cid: init.cid,
    name: init.name ?? 'emulator key',
    description: null,
    createdDate: isoSeconds(init.now),
    expirationDate: null,
    roles: init.roles ?? [{ type: 'CUSTOM', tag: 'emulator' }],
    last4: init.value.slice(-4),
    valueHash: hashKeyValue(init.value),
    permissions: [...init.permissions],
  };
  state.byCid[key.cid] = key;
  return key;
};

/** The key presented as `Authorization: Bearer <value>`, if it exists and has not expired. */
export const findKeyByValue = (state: ApiKeysState, value: string, now: number): StoredApiKey | undefined => {
  const hash = hashKeyValue(value);
  const key = Object.values(state.byCid).find((k) => k.valueHash === hash);
  if (!key) return undefined;
  if (key.expirationDate !== null && Date.parse(key.expirationDate) <= now) return undefined;
  return key;
};

/** The bearer token of a request, if any. */
export const bearerToken = (req: { headers: Record<string, string | undefined> }): string | undefined => {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
};

/** The public record (never the hash). */
const publicView = (k: StoredApiKey): JsonObject => ({
  cid: k.cid,
  name: k.name,
  description: k.description,
  createdDate: k.createdDate,
  expirationDate: k.expirationDate,
  last4: k.last4,
  roles: k.roles,
});

const EDIT = ['EDIT_API_KEYS'] as const;

const uniqueCid = (state: ApiKeysState, next: () => string): string => {
  let cid = next();
  while (state.byCid[cid]) cid = next();
  return cid;
};
type Slices = { apiKeys: ApiKeysState; customRoles: CustomRolesState };

/** A cid is a short run of letters, digits, `-` and `_`; anything else is a malformed request (400). */
const CID = /^[A-Za-z0-9_-]{1,64}$/;

/** ISO 8601 date-time with a timezone offset (`Z` or `±hh:mm`), as the create body requires. */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** The caller's key (the route already required a valid one). */
const callerOf = (req: EmulatorRequest, state: Slices, now: number): StoredApiKey | undefined =>
  findKeyByValue(state.apiKeys, bearerToken(req) ?? '', now);

/**
 * The vendor's rule: a caller holding a custom role creates only keys whose roles carry equal or fewer
 * permissions than its own. Applied to every caller (a default role that may edit keys is ADMIN,
 * which holds every permission), and, inferred, to updating and deleting a key as well: otherwise a
 * custom-role key could rename or delete an ADMIN key.
 */
const exceeds = (caller: StoredApiKey | undefined, wanted: readonly Permission[], custom: CustomRolesState) => {
  const held = caller ? effectivePermissions(caller, custom) : [];
  return wanted.filter((p) => !held.includes(p));
};

const forbidden = (missing: readonly Permission[]): EmulatorResponse =>
  errorResponse(
    403,
    'FORBIDDEN',
    `A key cannot carry permissions its creator lacks (${missing.join(', ')}); ask an administrator`,
  );

const withKey =
  (fn: (key: StoredApiKey, req: EmulatorRequest, state: Slices, now: number) => EmulatorResponse) =>
  (req: EmulatorRequest, state: Slices, env: { now(): number }): EmulatorResponse => {
    const cid = req.params.cid ?? '';
    if (!CID.test(cid)) return errorResponse(400, 'BAD_REQUEST', 'Malformed API key id');
    const key = own(state.apiKeys.byCid, cid);
    return key ? fn(key, req, state, env.now()) : errorResponse(404, 'NOT_FOUND', 'API key not found');
  };

/** Parses a roles array; a message when it is not one. */
export const parseRoles = (value: unknown): ApiKeyRole[] | string => {
  if (!Array.isArray(value)) return 'roles must be a list of role objects';
  const roles: ApiKeyRole[] = [];
  for (const [i, r] of value.entries()) {
    if (!isObject(r) || (r.type !== 'DEFAULT' && r.type !== 'CUSTOM'))
      return `roles[${i}].type must be DEFAULT or CUSTOM`;
    if (r.type === 'DEFAULT' && r.role !== 'READ_ONLY' && r.role !== 'USER' && r.role !== 'ADMIN')
      return `roles[${i}].role must be READ_ONLY, USER or ADMIN`;
    if (r.type === 'CUSTOM' && (typeof r.tag !== 'string' || r.tag === ''))
      return `roles[${i}].tag must name a custom role`;
    roles.push(
      r.type === 'DEFAULT'
        ? { type: 'DEFAULT', role: r.role as ApiKeyRole['role'] }
        : { type: 'CUSTOM', tag: String(r.tag) },
    );
  }
  return roles;
};

/** Validates a create body: its fields, or the 400 message. */
const createBody = (
  req: EmulatorRequest,
  custom: CustomRolesState,
  now: number,
): { name: string; description: string | null; expirationDate: string | null; roles: ApiKeyRole[] } | string => {
  const parsed = parseJsonBody(req, { object: true });
  if (!parsed.ok) return 'The body must be a JSON object';
  const body = parsed.value as JsonObject;
  if (typeof body.name !== 'string' || body.name.trim() === '') return 'name is required';
  if (body.description !== undefined && body.description !== null && typeof body.description !== 'string')
    return 'description must be a string';
  const roles = parseRoles(body.roles);
  if (typeof roles === 'string') return roles;
  if (roles.length === 0) return 'roles must hold at least one role';
  const unknown = unknownCustomRole(roles, custom);
  if (unknown !== undefined) return `Unknown custom role ${unknown}`;
  let expirationDate: string | null = null;
  if (body.expirationDate !== undefined && body.expirationDate !== null) {
    if (typeof body.expirationDate !== 'string' || !ISO_WITH_OFFSET.test(body.expirationDate))
      return 'expirationDate must be an ISO 8601 date-time with a timezone offset';
    if (Number.isNaN(Date.parse(body.expirationDate))) return 'expirationDate is not a date';
    if (Date.parse(body.expirationDate) <= now) return 'expirationDate must lie in the future';
    expirationDate = body.expirationDate;
  }
  return {
    name: body.name,
    description: typeof body.description === 'string' ? body.description : null,
    expirationDate,
    roles,
  };
};

/** API-key routes (permission `EDIT_API_KEYS`). */
export const apiKeyRoutes: readonly RouteDef<Slices>[] = [
  {
    method: 'GET',
    pattern: '/api/v1/auth/key',
    permission: EDIT,
    handle: (req, state) =>
      pagedResponse(hashOrder(Object.values(state.apiKeys.byCid), (k) => k.cid).map(publicView), req.query, 'apiKeys'),
  },
  {
    method: 'GET',
    pattern: '/api/v1/auth/key/:cid',
    permission: EDIT,
    handle: withKey((key) => ({ status: 200, body: publicView(key) })),
  },
  {
    method: 'POST',
    pattern: '/api/v1/auth/key',
    permission: EDIT,
    handle(req, state, env) {
      const body = createBody(req, state.customRoles, env.now());
      if (typeof body === 'string') return errorResponse(400, 'BAD_REQUEST', body);
      const missing = exceeds(
        callerOf(req, state, env.now()),
        permissionsOfRoles(body.roles, state.customRoles),
        state.customRoles,
      );
      if (missing.length > 0) return forbidden(missing);
      const value = randomBytes(24).toString('base64url');
      const key = addKey(state.apiKeys, {
        value,
        permissions: [],
        name: body.name,
        roles: body.roles,
        cid: uniqueCid(state.apiKeys, () => env.newId('ak')),
        now: env.now(),
      });
      key.description = body.description;
      key.expirationDate = body.expirationDate;
      return {
        status: 200,
        body: {
          apiKey: value,
          name: key.name,
          description: key.description,
          expirationDate: key.expirationDate,
          roles: key.roles,
        },
      };
    },
  },
  {
    method: 'PUT',
    pattern: '/api/v1/auth/key/:cid',
    permission: EDIT,
    handle: withKey((key, req, state, now) => {
      const parsed = parseJsonBody(req, { object: true });
      if (!parsed.ok) return parsed.response;
      const body = parsed.value as JsonObject;
      // The vendor's UpdateApiRequest requires name.
      if (typeof body.name !== 'string' || body.name.trim() === '')
        return errorResponse(400, 'BAD_REQUEST', 'name is required');
      if (body.description !== undefined && body.description !== null && typeof body.description !== 'string')
        return errorResponse(400, 'BAD_REQUEST', 'description must be a string');
      const missing = exceeds(
        callerOf(req, state, now),
        effectivePermissions(key, state.customRoles),
        state.customRoles,
      );
      if (missing.length > 0) return forbidden(missing);
      key.name = body.name;
      if (typeof body.description === 'string') key.description = body.description;
      return { status: 200, body: publicView(key) };
    }),
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/auth/key/:cid',
    permission: EDIT,
    handle: withKey((key, req, state, now) => {
      const missing = exceeds(
        callerOf(req, state, now),
        effectivePermissions(key, state.customRoles),
        state.customRoles,
      );
      if (missing.length > 0) return forbidden(missing);
      delete state.apiKeys.byCid[key.cid];
      return { status: 204 };
    }),
  },
];
