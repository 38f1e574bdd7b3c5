/**
 * The built-in Cortex API emulator: an in-memory implementation of the API on a real HTTP server
 * (node:http only). It does auth, permissions, rate limiting, fault injection and the request
 * log; resource modules (`resources/`) do the rest. Control endpoints live under `/_emulator/`.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  type EmulatorEnv,
  type EmulatorMethod,
  type EmulatorRequest,
  type EmulatorResponse,
  errorResponse,
  type MissingDefinitionMode,
  PERMISSIONS,
  type Permission,
} from './contract.js';
import { type ControlContext, controlResponse } from './control.js';
import { decideFaults, dropFromListAnswer, type EmulatorFaults, matchReject, ownFaults } from './faults.js';
import { createJqEvaluator } from '../../../src/jq/jq.js';
import { loadState, saveState } from './persistence.js';
import { RetryAfterWindow, TokenBucket, tooManyRequests } from './rate-limit.js';
import { addKey, bearerToken, effectivePermissions, findKeyByValue, hashKeyValue } from './resources/api-keys.js';
import { type EmulatorState, INITIAL_STATE, KEPT_ON_RESET, ROUTES } from './resources/index.js';
import { compileRoutes, matchRoute } from './router.js';
import { createPrng, fnv1a, randomHexId } from './util.js';

export type { EmulatorFaults } from './faults.js';
export type { EmulatorState } from './resources/index.js';

export interface EmulatorOptions {
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 0 = ephemeral). */
  port?: number;
  /** Accepted as an admin key (all permissions). Generated when absent. */
  apiKey?: string;
  /** Token-bucket rate (default 1000/min); 0 or Infinity disables rate limiting. */
  rateLimitPerMinute?: number;
  /** Bucket size (default: one minute's worth, `rateLimitPerMinute`). */
  rateLimitBurst?: number;
  /** Faults injected from the start (see `setFaults`). */
  faults?: EmulatorFaults;
  /** State is loaded from this JSON file at start (if it exists) and saved to it on stop. */
  dataFile?: string;
  /** Clock in ms since the epoch (default `Date.now`); drives the rate limiter and timestamps. */
  now?: () => number;
  /** Seed of the PRNGs behind fault decisions and generated ids (default 1). */
  seed?: number;
  /** Largest accepted request body in bytes (default 2 MB, the vendor's limit). */
  maxBodyBytes?: number;
  /**
   * A custom-type entity without `x-cortex-definition`: `empty-schema` (default: accepted only when
   * its type's schema is `{}`), `refuse` or `allow` (see `MissingDefinitionMode`).
   */
  missingDefinition?: MissingDefinitionMode;
  /** Time a webhook's Entity tag JQ may run (default 2000 ms); the program is stopped after it. */
  jqTimeoutMs?: number;
}

/** One API request, as served (control requests under `/_emulator/` are not logged). */
export interface RequestLogEntry {
  method: string;
  /** The raw, still-encoded path. */
  path: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  /** 0 when no response was sent (dropped connection or lost response). */
  status: number;
  durationMs: number;
  /** Clock time (ms since the epoch) when the request arrived. */
  ts: number;
  /** The client's `User-Agent` (which process of several sent it). */
  agent?: string;
  /** Set when a fault hit the request. */
  fault?: 'dropped' | 'failed' | 'forced-429' | 'window-429' | 'lost-response' | 'rejected' | 'list-dropped';
  /** The request's `x-request-id` header, when it had one: ties a log entry to a client's record of it. */
  requestId?: string;
}

export interface RunningEmulator {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string;
  /** The admin key (given or generated). */
  apiKey: string;
  /** Stops the server, closing open connections, and saves `dataFile` if set. */
  stop(): Promise<void>;
  /** The live in-memory state (mutations are visible to the server). */
  readonly state: EmulatorState;
  /** The live request log. */
  readonly requests: RequestLogEntry[];
  /** Replaces the fault configuration. */
  setFaults(faults: EmulatorFaults): void;
  /** Accepts another key with exactly these permissions. */
  addApiKey(key: { value: string; permissions: readonly Permission[] }): void;
  /** Clears every resource and the request log; API keys are kept. */
  reset(): void;
}

const MAX_LOGGED_REQUESTS = 50_000;

const METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

const readBody = (req: IncomingMessage, limit: number): Promise<{ text: string; tooLarge: boolean }> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), tooLarge: size > limit }));
    req.on('error', reject);
  });

const send = (res: ServerResponse, r: EmulatorResponse): void => {
  const headers: Record<string, string> = { ...r.headers };
  let payload = '';
  if (r.body !== undefined && r.status !== 204) {
    if (typeof r.body === 'string') {
      payload = r.body;
      headers['Content-Type'] = r.contentType ?? 'text/plain; charset=utf-8';
    } else {
      payload = JSON.stringify(r.body);
      headers['Content-Type'] = r.contentType ?? 'application/json';
    }
  }
  headers['Content-Length'] = String(Buffer.byteLength(payload));
  res.writeHead(r.status, headers);
  res.end(payload);
};

/** Request headers as single strings (lower-case names). */
const headersOf = (req: IncomingMessage): Record<string, string | undefined> => {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  return headers;
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts an emulator; resolves once it listens. */
export const startEmulator = async (options: EmulatorOptions = {}): Promise<RunningEmulator> => {
  const now = options.now ?? Date.now;
  const seed = options.seed ?? 1;
  const faultRandom = createPrng(seed);
  const state = await loadState(options.dataFile, now);
  // Ids after a reload must not repeat the ids of the saved run: the loaded state salts the seed.
  const idRandom = createPrng(seed ^ 0x9e3779b9 ^ fnv1a(JSON.stringify(state)));
  const jq = createJqEvaluator(options.jqTimeoutMs !== undefined ? { timeoutMs: options.jqTimeoutMs } : {});
  const env: EmulatorEnv = {
    now,
    newId: (prefix) => randomHexId(prefix, idRandom),
    missingDefinition: options.missingDefinition ?? 'empty-schema',
    evaluateJq: (program, input) => jq.evaluate(program, input),
  };
  const requests: RequestLogEntry[] = [];
  const routes = compileRoutes(ROUTES);
  const perMinute = options.rateLimitPerMinute ?? 1000;
  const bucket = new TokenBucket(perMinute, options.rateLimitBurst ?? perMinute, now());
  const maxBody = options.maxBodyBytes ?? 2 * 1024 * 1024;
  let faults: EmulatorFaults = ownFaults(options.faults ?? {});
  let apiRequestCount = 0;
  const retryWindow = new RetryAfterWindow();

  const apiKey = options.apiKey ?? randomBytes(24).toString('base64url');
  const addApiKey = (key: { value: string; permissions: readonly Permission[] }): void => {
    const hash = hashKeyValue(key.value);
    const existing = Object.values(state.apiKeys.byCid).find((k) => k.valueHash === hash);
    if (existing) existing.permissions = [...key.permissions];
    else {
      let cid = env.newId('ak');
      while (state.apiKeys.byCid[cid]) cid = env.newId('ak');
      addKey(state.apiKeys, { ...key, cid, now: now() });
    }
  };
  addApiKey({ value: apiKey, permissions: PERMISSIONS });

  const reset = (): void => {
    const target = state as unknown as Record<string, unknown>;
    for (const key of Object.keys(INITIAL_STATE) as (keyof EmulatorState)[]) {
      if (!KEPT_ON_RESET.includes(key)) target[key] = INITIAL_STATE[key]();
    }
    requests.length = 0;
    apiRequestCount = 0;
    retryWindow.reset();
  };

  /** Auth, routing and the handler: the response of an API request that is processed. */
  const serve = async (
    method: string,
    rawPath: string,
    query: URLSearchParams,
    req: IncomingMessage,
    body: { text: string; tooLarge: boolean },
  ): Promise<EmulatorResponse> => {
    if (!METHODS.includes(method)) return errorResponse(405, 'BAD_REQUEST', `Method ${method} not allowed`);
    const match = matchRoute(routes, method, rawPath);
    if (match.kind === 'not-found') return errorResponse(404, 'NOT_FOUND', `No route for ${method} ${rawPath}`);
    if (match.kind === 'bad-encoding') return errorResponse(400, 'BAD_REQUEST', 'Malformed percent-encoding in path');
    if (match.kind === 'method-not-allowed') {
      return {
        ...errorResponse(405, 'BAD_REQUEST', `Method ${method} not allowed`),
        headers: { Allow: match.allowed.join(', ') },
      };
    }
    const headers = headersOf(req);
    const { route } = match;
    if (route.permission !== 'none') {
      const token = bearerToken({ headers });
      const key = token === undefined ? undefined : findKeyByValue(state.apiKeys, token, now());
      if (!key) return errorResponse(401, 'UNAUTHORIZED', 'Missing or invalid API key');
      const held = effectivePermissions(key, state.customRoles);
      if (route.permission !== null && !route.permission.some((p) => held.includes(p))) {
        return errorResponse(403, 'FORBIDDEN', `API key lacks permission ${route.permission.join(' or ')}`);
      }
    }
    if (body.tooLarge) return errorResponse(413, 'BAD_REQUEST', `Request body exceeds ${maxBody} bytes`);
    const request: EmulatorRequest = {
      method: method as EmulatorMethod,
      params: match.params,
      query,
      headers,
      rawBody: body.text,
      contentType: (headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '',
    };
    try {
      return await route.handle(request, state, env);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return errorResponse(500, 'UNHANDLED_EXCEPTION', `Emulator error: ${message}`);
    }
  };

  const controlContext: ControlContext = {
    state,
    url: '',
    now,
    newId: (prefix) => env.newId(prefix),
    requests,
    faults: () => faults,
    setFaults: (f) => {
      faults = ownFaults(f);
    },
    reset,
    evaluateJq: (program, input) => jq.evaluate(program, input),
  };

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void (async () => {
      const started = performance.now();
      const ts = now();
      // The server's clock, as HTTP servers send it: the emulator's own (a test may set it).
      res.setHeader('Date', new Date(ts).toUTCString());
      const rawUrl = req.url ?? '/';
      const q = rawUrl.indexOf('?');
      const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
      const rawQuery = q < 0 ? '' : rawUrl.slice(q + 1);
      const method = (req.method ?? 'GET').toUpperCase();
      const body = await readBody(req, maxBody);

      if (rawPath === '/_emulator' || rawPath.startsWith('/_emulator/')) {
        send(
          res,
          await controlResponse({ method, path: rawPath, headers: headersOf(req), body: body.text }, controlContext),
        );
        return;
      }

      apiRequestCount += 1;
      const entry: RequestLogEntry = { method, path: rawPath, query: rawQuery, status: 0, durationMs: 0, ts };
      const requestId = req.headers['x-request-id'];
      if (typeof requestId === 'string') entry.requestId = requestId;
      const agent = req.headers['user-agent'];
      if (typeof agent === 'string') entry.agent = agent.slice(0, 200);
      const finish = (status: number, fault?: RequestLogEntry['fault']): void => {
        entry.status = status;
        entry.durationMs = performance.now() - started;
        if (fault) entry.fault = fault;
        requests.push(entry);
        // A long-running emulator keeps the newest entries only.
        if (requests.length > MAX_LOGGED_REQUESTS * 1.1) requests.splice(0, requests.length - MAX_LOGGED_REQUESTS);
      };
      const decision = decideFaults(faults, apiRequestCount, faultRandom, { window: retryWindow, now: now() });
      if ((faults.latencyMs ?? 0) > 0) await sleep(faults.latencyMs ?? 0);
      if (decision.drop) {
        finish(0, 'dropped');
        req.socket.destroy();
        return;
      }
      let response: EmulatorResponse;
      let fault: RequestLogEntry['fault'];
      const rejected = matchReject(faults, method, rawPath, body.text);
      if (rejected) {
        response = errorResponse(rejected.status, 'BAD_REQUEST', rejected.message);
        fault = 'rejected';
      } else if (decision.fail) {
        response = errorResponse(503, 'UNCATEGORIZED', 'Service unavailable (injected fault)');
        fault = 'failed';
      } else if (decision.force429) {
        response = tooManyRequests(decision.retryAfterSeconds ?? faults.retryAfterSeconds ?? 0);
        fault = decision.insideWindow ? 'window-429' : 'forced-429';
      } else {
        const waitMs = bucket.take(now());
        response =
          waitMs > 0
            ? tooManyRequests(waitMs / 1000)
            : await serve(method, rawPath, new URLSearchParams(rawQuery), req, body);
        if (method === 'GET' && response.status === 200) {
          const short = dropFromListAnswer(faults, rawPath, response.body);
          if (short !== undefined) {
            response = { ...response, body: short };
            fault = 'list-dropped';
          }
        }
        if (decision.loseResponse) {
          finish(0, 'lost-response');
          req.socket.destroy();
          return;
        }
      }
      finish(response.status, fault);
      send(res, response);
    })().catch((err: unknown) => {
      if (!res.headersSent) send(res, errorResponse(500, 'UNHANDLED_EXCEPTION', String(err)));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  controlContext.url = url;

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
      await jq.close();
      if (options.dataFile !== undefined) await saveState(options.dataFile, state);
    })();
    return stopped;
  };

  return {
    url,
    apiKey,
    stop,
    state,
    requests,
    setFaults: (f) => {
      faults = ownFaults(f);
    },
    addApiKey,
    reset,
  };
};
