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
import { hashOrder, isObject, isoSeconds, type JsonObject, parseJsonBody } from '../util.js';

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
  permissions: Permission[];
}

export interface ApiKeysState {
  byCid: Record<string, StoredApiKey>;
}

export const initialApiKeysState = (): ApiKeysState => ({ byCid: {} });

export const hashKeyValue = (value: string): string => createHash('sha256').update(value).digest('hex');

/**
 * Permissions of a role. ADMIN holds all; USER and READ_ONLY sets are inferred. A CUSTOM role
 * whose tag is a permission name (`EDIT_ENTITIES`) grants that permission (an emulator convention).
 */
export const permissionsOfRoles = (roles: readonly ApiKeyRole[]): Permission[] => {
  const out = new Set<Permission>();
  for (const r of roles) {
    if (r.type === 'DEFAULT' && r.role === 'ADMIN') for (const p of PERMISSIONS) out.add(p);
    if (r.type === 'DEFAULT' && r.role === 'USER') {
      for (const p of ['EDIT_ENTITIES', 'ARCHIVE_ENTITIES', 'VIEW_INITIATIVES', 'VIEW_CATALOGS'] as const) out.add(p);
    }
    if (r.type === 'DEFAULT' && r.role === 'READ_ONLY') {
      for (const p of ['VIEW_INITIATIVES', 'VIEW_CATALOGS'] as const) out.add(p);
    }
    if (r.type === 'CUSTOM' && (PERMISSIONS as readonly string[]).includes(r.tag ?? '')) out.add(r.tag as Permission);
  }
  return [...out];
};

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
type Slices = { apiKeys: ApiKeysState };

const withKey =
  (fn: (key: StoredApiKey, req: EmulatorRequest, state: Slices) => EmulatorResponse) =>
  (req: EmulatorRequest, state: Slices): EmulatorResponse => {
    const key = state.apiKeys.byCid[req.params.cid ?? ''];
    return key ? fn(key, req, state) : errorResponse(404, 'NOT_FOUND', 'API key not found');
  };

const parseRoles = (value: unknown): ApiKeyRole[] | undefined => {
  if (!Array.isArray(value)) return undefined;
  const roles: ApiKeyRole[] = [];
  for (const r of value) {
    if (!isObject(r) || (r.type !== 'DEFAULT' && r.type !== 'CUSTOM')) return undefined;
    if (r.type === 'DEFAULT' && r.role !== 'READ_ONLY' && r.role !== 'USER' && r.role !== 'ADMIN') return undefined;
    if (r.type === 'CUSTOM' && typeof r.tag !== 'string') return undefined;
    roles.push(
      r.type === 'DEFAULT'
        ? { type: 'DEFAULT', role: r.role as ApiKeyRole['role'] }
        : { type: 'CUSTOM', tag: String(r.tag) },
    );
  }
  return roles;
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
      const parsed = parseJsonBody(req, { object: true });
      if (!parsed.ok) return parsed.response;
      const body = parsed.value as JsonObject;
      const roles = parseRoles(body.roles ?? []);
      if (!roles || typeof body.name !== 'string')
        return errorResponse(400, 'BAD_REQUEST', 'name and valid roles are required');
      const expiration = typeof body.expirationDate === 'string' ? body.expirationDate : null;
      if (expiration !== null && Number.isNaN(Date.parse(expiration))) {
        return errorResponse(400, 'BAD_REQUEST', 'expirationDate must be ISO 8601');
      }
      const caller = findKeyByValue(state.apiKeys, bearerToken(req) ?? '', env.now());
      const wanted = permissionsOfRoles(roles);
      if (!caller || wanted.some((p) => !caller.permissions.includes(p))) {
        return errorResponse(403, 'FORBIDDEN', 'A key cannot carry more permissions than its creator');
      }
      const value = randomBytes(24).toString('base64url');
      const key = addKey(state.apiKeys, {
        value,
        permissions: wanted,
        name: body.name,
        roles,
        cid: uniqueCid(state.apiKeys, () => env.newId('ak')),
        now: env.now(),
      });
      key.description = typeof body.description === 'string' ? body.description : null;
      key.expirationDate = expiration;
      return {
        status: 200,
        body: { apiKey: value, name: key.name, description: key.description, expirationDate: expiration, roles },
      };
    },
  },
  {
    method: 'PUT',
    pattern: '/api/v1/auth/key/:cid',
    permission: EDIT,
    handle: withKey((key, req) => {
      const parsed = parseJsonBody(req, { object: true });
      if (!parsed.ok) return parsed.response;
      const body = parsed.value as JsonObject;
      // The vendor's UpdateApiRequest requires name.
      if (typeof body.name !== 'string' || body.name === '')
        return errorResponse(400, 'BAD_REQUEST', 'name is required');
      key.name = body.name;
      if (typeof body.description === 'string') key.description = body.description;
      return { status: 200, body: publicView(key) };
    }),
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/auth/key/:cid',
    permission: EDIT,
    handle: withKey((key, _req, state) => {
      delete state.apiKeys.byCid[key.cid];
      return { status: 204 };
    }),
  },
];
