/**
 * The control endpoints under `/_emulator/`: what the API has no endpoint for (custom webhook
 * integrations, SCIM users and toggles, custom roles, keys with given roles, GitOps logs, scorecard
 * evaluations in progress) and the
 * emulator's own observability (request log, state, faults, reset). No key is needed, so a browser
 * page on another origin must not reach them: a request whose `Host` is a DNS name other than
 * `localhost` (DNS rebinding), whose `Origin` is not the emulator's own, whose `Sec-Fetch-Site` is
 * not `same-origin`/`none`, or whose body is of a type a cross-origin form or `fetch` may send
 * without a preflight (`text/plain`, `application/x-www-form-urlencoded`, `multipart/form-data`)
 * is refused with 403 or 415, without effect.
 */
import { randomBytes } from 'node:crypto';
import { isAddressHost } from '../../../src/core/local-host.js';
import { z } from 'zod';
import { type EmulatorResponse, errorResponse, PERMISSIONS, type Permission } from './contract.js';
import { type EmulatorFaults, parseFaults } from './faults.js';
import { type JqOutcome, unbalancedJq } from '../../../src/jq/jq.js';
import { addKey, parseRoles, permissionsOfRoles, unknownCustomRole } from './resources/api-keys.js';
import { integrationView } from './resources/custom-integrations.js';
import { addGitopsLog, gitopsLogInput } from './resources/gitops-logs.js';
import type { EmulatorState } from './resources/index.js';
import { putScimUser } from './resources/scim.js';
import { startEvaluation } from './resources/scorecards.js';
import { own, putOwn, uuidFrom } from './util.js';
import { describeIssues } from './resources/initiatives-body.js';

/** What the control endpoints may read and change. */
export interface ControlContext {
  state: EmulatorState;
  /** The emulator's base URL (webhook URLs are built on it). */
  url: string;
  now(): number;
  newId(prefix: string): string;
  requests: readonly unknown[];
  faults(): EmulatorFaults;
  setFaults(f: EmulatorFaults): void;
  reset(): void;
  evaluateJq(program: string, input: string): Promise<JqOutcome>;
}

export interface ControlRequest {
  method: string;
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  body: string;
}

/** Media types a browser sends cross-origin without a preflight. */
const SIMPLE_TYPES = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']);

/** Why a control request must be refused as cross-origin, if it must. */
export const crossOriginRefusal = (req: ControlRequest): EmulatorResponse | undefined => {
  const host = req.headers.host ?? '';
  if (!isAddressHost(host)) {
    return errorResponse(403, 'FORBIDDEN', `Control endpoints answer only on an IP address or localhost, not ${host}`);
  }
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `http://${host.toLowerCase()}`) {
    return errorResponse(403, 'FORBIDDEN', `Control endpoints refuse cross-origin requests (Origin ${origin})`);
  }
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return errorResponse(403, 'FORBIDDEN', `Control endpoints refuse cross-origin requests (Sec-Fetch-Site ${site})`);
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (SIMPLE_TYPES.has(type)) {
    return errorResponse(415, 'BAD_REQUEST', `Control endpoints take application/json, not ${type}`);
  }
  if (req.body.trim() !== '' && type !== 'application/json') {
    return errorResponse(415, 'BAD_REQUEST', `Control endpoints take application/json, not '${type || '(none)'}'`);
  }
  return undefined;
};

const integrationInput = z.strictObject({
  name: z.string().trim().min(1),
  entityTagJq: z.string().trim().min(1),
  key: z.string().trim().min(1),
});
const scimSettingsInput = z.strictObject({ provisioning: z.boolean(), deprovisioning: z.boolean() });
const permission = z.enum(PERMISSIONS);
const roleInput = z.strictObject({
  tag: z.string().trim().min(1),
  permissions: z.array(permission),
});
const keyInput = z.strictObject({
  roles: z.array(z.unknown()).min(1),
  name: z.string().min(1).optional(),
});

const evaluationInput = z.strictObject({
  tag: z.string().trim().min(1),
  /** How many writes of the scorecard the evaluation refuses (0 ends it). */
  failWrites: z.int().min(0).max(1000),
  /** The status those writes answer: a 5xx (default 500, what the vendor's API was seen to answer). */
  status: z.int().min(500).max(599).default(500),
});

const ok = (body: unknown): EmulatorResponse => ({ status: 200, body });

/** Parses a JSON body against a schema: the value, or the 400. */
const parse = <T>(
  text: string,
  schema: z.ZodType<T>,
): { ok: true; value: T } | { ok: false; response: EmulatorResponse } => {
  let raw: unknown;
  try {
    raw = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    return { ok: false, response: errorResponse(400, 'BAD_REQUEST', 'Malformed JSON request body') };
  }
  const parsed = schema.safeParse(raw);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : {
        ok: false,
        response: errorResponse(400, 'BAD_REQUEST', `Invalid request body: ${describeIssues(parsed.error)}`),
      };
};

type Handler = (req: ControlRequest, ctx: ControlContext) => EmulatorResponse | Promise<EmulatorResponse>;

const HANDLERS: Record<string, Handler> = {
  'GET /_emulator/health': () => ok({ ok: true }),
  'GET /_emulator/requests': (_req, ctx) => ok({ requests: ctx.requests }),
  'GET /_emulator/state': (_req, ctx) => ok(ctx.state),
  'GET /_emulator/faults': (_req, ctx) => ok(ctx.faults()),
  'POST /_emulator/faults': (req, ctx) => {
    try {
      ctx.setFaults(parseFaults(req.body.trim() === '' ? {} : JSON.parse(req.body)));
    } catch {
      return errorResponse(400, 'BAD_REQUEST', 'Malformed JSON request body');
    }
    return ok(ctx.faults());
  },
  'POST /_emulator/reset': (_req, ctx) => {
    ctx.reset();
    return ok({ ok: true });
  },
  'GET /_emulator/custom-integrations': (_req, ctx) =>
    ok({ integrations: Object.values(ctx.state.customIntegrations.byId).map((i) => integrationView(i, ctx.url)) }),
  'POST /_emulator/custom-integrations': async (req, ctx) => {
    const input = parse(req.body, integrationInput);
    if (!input.ok) return input.response;
    // Compiled, never run: a program that does not end must not hold the control endpoint. It is
    // wrapped only once its brackets are known to balance, so it cannot close the wrapper and run.
    const unbalanced = unbalancedJq(input.value.entityTagJq);
    if (unbalanced !== undefined)
      return errorResponse(400, 'BAD_REQUEST', `entityTagJq is not a jq program: ${unbalanced}`);
    const check = await ctx.evaluateJq(`if false then (\n${input.value.entityTagJq}\n) else empty end`, 'null');
    if (!check.ok && check.reason === 'compile') {
      return errorResponse(400, 'BAD_REQUEST', `entityTagJq is not a jq program: ${check.message}`);
    }
    let id = uuidFrom((p) => ctx.newId(p));
    while (ctx.state.customIntegrations.byId[id]) id = uuidFrom((p) => ctx.newId(p));
    const stored = { id, ...input.value, dateCreated: ctx.now() };
    ctx.state.customIntegrations.byId[id] = stored;
    return ok(integrationView(stored, ctx.url));
  },
  'GET /_emulator/scim-settings': (_req, ctx) => ok(ctx.state.scim.settings),
  'PUT /_emulator/scim-settings': (req, ctx) => {
    const input = parse(req.body, scimSettingsInput);
    if (!input.ok) return input.response;
    ctx.state.scim.settings = { ...input.value };
    return ok(ctx.state.scim.settings);
  },
  'POST /_emulator/scim/users': (req, ctx) => {
    const input = parse(req.body, z.record(z.string(), z.unknown()));
    if (!input.ok) return input.response;
    const stored = putScimUser(ctx.state.scim, input.value, ctx.now());
    if (typeof stored === 'string') return errorResponse(400, 'BAD_REQUEST', stored);
    return ok({ id: stored.id, ...own(ctx.state.scim.users, stored.id)?.user });
  },
  'GET /_emulator/roles': (_req, ctx) => ok({ roles: Object.values(ctx.state.customRoles.byTag) }),
  'POST /_emulator/roles': (req, ctx) => {
    const input = parse(req.body, roleInput);
    if (!input.ok) return input.response;
    const role = { tag: input.value.tag, permissions: [...new Set<Permission>(input.value.permissions)] };
    putOwn(ctx.state.customRoles.byTag, role.tag, role);
    return ok(role);
  },
  'POST /_emulator/api-keys': (req, ctx) => {
    const input = parse(req.body, keyInput);
    if (!input.ok) return input.response;
    const roles = parseRoles(input.value.roles);
    if (typeof roles === 'string') return errorResponse(400, 'BAD_REQUEST', roles);
    const unknown = unknownCustomRole(roles, ctx.state.customRoles);
    if (unknown !== undefined) return errorResponse(400, 'BAD_REQUEST', `Unknown custom role ${unknown}`);
    const value = randomBytes(24).toString('base64url');
    let cid = ctx.newId('ak');
    while (ctx.state.apiKeys.byCid[cid]) cid = ctx.newId('ak');
    addKey(ctx.state.apiKeys, {
      value,
      permissions: [],
      roles,
      name: input.value.name ?? 'emulator key',
      cid,
      now: ctx.now(),
    });
    return ok({ apiKey: value, cid, roles, permissions: permissionsOfRoles(roles, ctx.state.customRoles) });
  },
  'GET /_emulator/scorecard-evaluations': (_req, ctx) => ok({ evaluations: ctx.state.scorecards.evaluations ?? [] }),
  'POST /_emulator/scorecard-evaluations': (req, ctx) => {
    const input = parse(req.body, evaluationInput);
    if (!input.ok) return input.response;
    startEvaluation(ctx.state, input.value);
    return ok({ evaluations: ctx.state.scorecards.evaluations ?? [] });
  },
  'POST /_emulator/gitops-logs': (req, ctx) => {
    const input = parse(req.body, gitopsLogInput);
    if (!input.ok) return input.response;
    addGitopsLog(ctx.state.gitopsLogs, input.value, ctx.now());
    return ok({ ok: true });
  },
};

/** Answers a control request (after the cross-origin checks). */
export const controlResponse = async (req: ControlRequest, ctx: ControlContext): Promise<EmulatorResponse> => {
  const refused = crossOriginRefusal(req);
  if (refused) return refused;
  const handler = HANDLERS[`${req.method} ${req.path}`];
  if (!handler) return errorResponse(404, 'NOT_FOUND', `No emulator control endpoint ${req.method} ${req.path}`);
  return handler(req, ctx);
};
