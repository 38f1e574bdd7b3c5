/**
 * SCIM 2.0 users (`/scim/v2/Users`): read, list and replace (`PUT`). Users and the workspace's two
 * SCIM toggles come from the control endpoints (`POST /_emulator/scim/users`,
 * `PUT /_emulator/scim-settings`) or the `--data` file: a real tenant gets them from its IdP and
 * its settings page. The vendor's rules: a PUT that would reactivate a user while provisioning is off,
 * or deactivate one while deprovisioning is off, is a 400 and changes nothing.
 *
 * SCIM's own conventions (RFC 7643/7644) are kept where the vendor is silent: attribute names are
 * case-insensitive, `attributes` / `excludedAttributes` pick what is returned (`id` and `schemas`
 * always), errors use the SCIM error body. Inferred: a PUT without `active` keeps the current
 * value; `"True"`/`"False"` strings (as some IdPs send) are read as booleans; answers use
 * `application/scim+json` when the request body or `Accept` did, `application/json` otherwise.
 */
import type { EmulatorRequest, EmulatorResponse, RouteDef } from '../contract.js';
import { cloneJson, isObject, isoSeconds, type JsonObject, own, putOwn } from '../util.js';

export interface ScimState {
  settings: { provisioning: boolean; deprovisioning: boolean };
  /** By id: the user in its canonical SCIM form (without `meta`, which is derived). */
  users: Record<string, { user: JsonObject; created: number; lastModified: number }>;
}

export const initialScimState = (): ScimState => ({
  settings: { provisioning: true, deprovisioning: true },
  users: {},
});

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const SCIM_JSON = 'application/scim+json';

/** The core User attributes (RFC 7643 §4.1) and `name`'s sub-attributes, in their canonical case. */
const CORE_ATTRIBUTES = [
  'schemas',
  'id',
  'externalId',
  'userName',
  'name',
  'displayName',
  'nickName',
  'profileUrl',
  'title',
  'userType',
  'preferredLanguage',
  'locale',
  'timezone',
  'active',
  'password',
  'emails',
  'phoneNumbers',
  'ims',
  'photos',
  'addresses',
  'groups',
  'entitlements',
  'roles',
  'x509Certificates',
  'meta',
];
const NAME_ATTRIBUTES = ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'];

const canonical = (name: string, known: readonly string[]): string =>
  known.find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;

/** Rewrites attribute names to their canonical case (top level and `name.*`); drops `meta` and `password`. */
const canonicalUser = (body: JsonObject): JsonObject => {
  const out: JsonObject = {};
  for (const [rawKey, value] of Object.entries(body)) {
    const key = canonical(rawKey, CORE_ATTRIBUTES);
    if (key === 'meta' || key === 'password') continue;
    if (key === 'name' && isObject(value)) {
      const name: JsonObject = {};
      for (const [k, v] of Object.entries(value)) putOwn(name, canonical(k, NAME_ATTRIBUTES), v);
      out.name = name;
    } else putOwn(out, key, value);
  }
  return out;
};

/** `true`/`false`, or the strings `"true"`/`"false"` in any case; undefined for anything else. */
const booleanOf = (value: unknown): boolean | undefined => {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  return undefined;
};

/** Whether the answer should be `application/scim+json`. */
const wantsScim = (req: EmulatorRequest): boolean =>
  req.contentType === SCIM_JSON || (req.headers.accept ?? '').toLowerCase().includes(SCIM_JSON);

const scimError = (req: EmulatorRequest, status: number, detail: string, scimType?: string): EmulatorResponse => ({
  status,
  contentType: wantsScim(req) ? SCIM_JSON : 'application/json',
  body: { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail },
});

type Stored = ScimState['users'][string];

const resourceOf = (id: string, stored: Stored): JsonObject => ({
  ...stored.user,
  schemas: Array.isArray(stored.user.schemas) ? stored.user.schemas : [USER_SCHEMA],
  id,
  meta: {
    resourceType: 'User',
    created: isoSeconds(stored.created),
    lastModified: isoSeconds(stored.lastModified),
    location: `/scim/v2/Users/${encodeURIComponent(id)}`,
  },
});

/** Attribute paths of a query parameter (`userName,name.familyName`), lower-cased; [] when absent. */
const pathsOf = (query: URLSearchParams, name: string): string[][] =>
  (query.get(name) ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) =>
      p
        .replace(new RegExp(`^${USER_SCHEMA}:`, 'i'), '')
        .toLowerCase()
        .split('.'),
    );

const findKey = (obj: JsonObject, lower: string): string | undefined =>
  Object.keys(obj).find((k) => k.toLowerCase() === lower);

/** RFC 7644 §3.9: `attributes` returns only those (plus `id`, `schemas`); `excludedAttributes` removes. */
export const projectAttributes = (resource: JsonObject, query: URLSearchParams): JsonObject => {
  const include = pathsOf(query, 'attributes');
  const exclude = pathsOf(query, 'excludedAttributes');
  let out: JsonObject = resource;
  if (include.length > 0) {
    out = { schemas: resource.schemas, id: resource.id };
    for (const [top, sub] of include) {
      const key = findKey(resource, top ?? '');
      if (key === undefined) continue;
      const value = resource[key];
      if (sub === undefined || !isObject(value)) out[key] = cloneJson(value);
      else {
        const subKey = findKey(value, sub);
        if (subKey === undefined) continue;
        const existing = out[key];
        const target: JsonObject = isObject(existing) ? existing : {};
        target[subKey] = cloneJson(value[subKey]);
        out[key] = target;
      }
    }
  }
  if (exclude.length > 0) {
    out = cloneJson(out);
    for (const [top, sub] of exclude) {
      const key = findKey(out, top ?? '');
      if (key === undefined || key === 'id' || key === 'schemas') continue;
      const value = out[key];
      if (sub === undefined) delete out[key];
      else if (isObject(value)) {
        const subKey = findKey(value, sub);
        if (subKey !== undefined) delete value[subKey];
      }
    }
  }
  return out;
};

const answer = (req: EmulatorRequest, body: JsonObject): EmulatorResponse => ({
  status: 200,
  contentType: wantsScim(req) ? SCIM_JSON : 'application/json',
  body,
});

/** Reads a SCIM request body: a JSON object sent as `application/json` or `application/scim+json`. */
const readScimBody = (
  req: EmulatorRequest,
): { ok: true; body: JsonObject } | { ok: false; response: EmulatorResponse } => {
  if (req.contentType !== 'application/json' && req.contentType !== SCIM_JSON) {
    return { ok: false, response: scimError(req, 415, `Unsupported content type '${req.contentType || '(none)'}'`) };
  }
  try {
    const value: unknown = JSON.parse(req.rawBody);
    if (isObject(value)) return { ok: true, body: value };
  } catch {
    // answered below
  }
  return { ok: false, response: scimError(req, 400, 'The body must be a SCIM User JSON object', 'invalidSyntax') };
};

/** Stores a user as given (control endpoint and data file): canonical names, `active` as a boolean. */
export const putScimUser = (state: ScimState, body: JsonObject, now: number): { id: string } | string => {
  const user = canonicalUser(body);
  if (typeof user.id !== 'string' || user.id === '') return 'id is required';
  if (typeof user.userName !== 'string' || user.userName === '') return 'userName is required';
  const active = user.active === undefined ? true : booleanOf(user.active);
  if (active === undefined) return 'active must be true or false';
  const { id } = user;
  delete user.id;
  user.active = active;
  const existing = own(state.users, id);
  putOwn(state.users, id, { user, created: existing?.created ?? now, lastModified: now });
  return { id };
};

const SCIM = ['CONFIGURE_SCIM'] as const;

/** SCIM routes: every one needs `CONFIGURE_SCIM` (inferred: the vendor names no permission). */
export const scimRoutes: readonly RouteDef<{ scim: ScimState }>[] = [
  {
    method: 'GET',
    pattern: '/scim/v2/Users',
    permission: SCIM,
    handle(req, state) {
      // Only `attr eq "value"` filters (what the vendor CLI's test sends).
      const filter = req.query.get('filter');
      let match: ((u: JsonObject) => boolean) | undefined;
      if (filter !== null && filter.trim() !== '') {
        const m = /^\s*([\w.:]+)\s+eq\s+"?([^"]*)"?\s*$/i.exec(filter);
        if (!m) return scimError(req, 400, `Unsupported filter ${filter}`, 'invalidFilter');
        const [, attr = '', wanted = ''] = m;
        match = (u) => {
          const key = findKey(u, attr.toLowerCase());
          return key !== undefined && String(u[key]).toLowerCase() === wanted.toLowerCase();
        };
      }
      const all = Object.entries(state.scim.users)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([id, stored]) => resourceOf(id, stored))
        .filter((u) => !match || match(u));
      const startIndex = Math.max(1, Number(req.query.get('startIndex') ?? '1') || 1);
      const count = Math.max(0, Number(req.query.get('count') ?? '100') || 0);
      const page = all.slice(startIndex - 1, startIndex - 1 + count);
      return answer(req, {
        schemas: [LIST_SCHEMA],
        totalResults: all.length,
        startIndex,
        itemsPerPage: page.length,
        Resources: page.map((u) => projectAttributes(u, req.query)),
      });
    },
  },
  {
    method: 'GET',
    pattern: '/scim/v2/Users/:id',
    permission: SCIM,
    handle(req, state) {
      const id = req.params.id ?? '';
      const stored = own(state.scim.users, id);
      if (!stored) return scimError(req, 404, `User ${id} not found`);
      return answer(req, projectAttributes(resourceOf(id, stored), req.query));
    },
  },
  {
    method: 'PUT',
    pattern: '/scim/v2/Users/:id',
    permission: SCIM,
    handle(req, state, env) {
      const id = req.params.id ?? '';
      const stored = own(state.scim.users, id);
      if (!stored) return scimError(req, 404, `User ${id} not found`);
      const read = readScimBody(req);
      if (!read.ok) return read.response;
      const user = canonicalUser(read.body);
      if (user.id !== undefined && user.id !== id)
        return scimError(req, 400, `The body's id ${String(user.id)} is not ${id}`, 'mutability');
      if (typeof user.userName !== 'string' || user.userName === '')
        return scimError(req, 400, 'userName is required', 'invalidValue');
      const wasActive = stored.user.active === true;
      const active = user.active === undefined ? wasActive : booleanOf(user.active);
      if (active === undefined) return scimError(req, 400, 'active must be true or false', 'invalidValue');
      if (!wasActive && active && !state.scim.settings.provisioning) {
        return scimError(req, 400, `Reactivating user ${id} needs SCIM provisioning, which is disabled`);
      }
      if (wasActive && !active && !state.scim.settings.deprovisioning) {
        return scimError(req, 400, `Deactivating user ${id} needs SCIM deprovisioning, which is disabled`);
      }
      delete user.id;
      user.active = active;
      const replaced = putOwn(state.scim.users, id, { user, created: stored.created, lastModified: env.now() });
      return answer(req, projectAttributes(resourceOf(id, replaced), req.query));
    },
  },
];
