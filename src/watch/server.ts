/**
 * The watcher's one HTTP port (node:http): `/healthz`, `/readyz`, `/metrics`, `/status` and
 * `POST /webhook/github`. Handlers only read state and ask the runner for a run; nothing here
 * waits for a reconcile. Every body it sends goes through the watcher's redaction first, so no
 * secret the watcher knows can leave through this port, whatever a run recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CortexSyncError } from '../core/errors.js';
import { isAddressHost } from '../core/local-host.js';
import { printable } from '../core/printable.js';
import { decideDelivery, MAX_WEBHOOK_BODY_BYTES, type RecentDeliveries, type WebhookDecision } from './webhook.js';
import { type BodyBudget, type BodyRead, readSignedBody, signatureBytes } from './webhook-body.js';

interface Endpoints {
  healthy(): { ok: boolean; reason: string };
  ready(): { ready: boolean; reason: string };
  /** The exposition text, already redacted. */
  metrics(): Promise<{ contentType: string; text: string }>;
  status(): unknown;
  /** A verified push to the followed branch arrived. */
  onPush(revision: string | undefined): void;
  /** What a verified delivery asks for, when it is not one followed branch's (many sources route by repository). */
  decide?: (event: string | undefined, body: Buffer) => WebhookDecision;
  /**
   * Why this process runs nothing now (a standby replica), or undefined: a verified delivery
   * other than a ping is then answered 503 and not remembered, so that its redelivery is taken.
   */
  unavailable?: () => string | undefined;
  webhookSecret: string | undefined;
  /** The followed branch (`undefined`: every push, e.g. a directory fed by a sidecar). */
  branch: string | undefined;
  /** Every answered delivery; `rejected` says why one was refused (never with the body or the signature). */
  onWebhookAnswered(status: number, rejected?: string): void;
  /** Verified deliveries already accepted: a replay runs nothing. */
  deliveries: RecentDeliveries;
  /** Applied to every response body. */
  redact: (text: string) => string;
  /** The bodies being read at once and the bytes they hold. */
  bodies: BodyBudget;
  maxBodyBytes?: number;
  bodyTimeoutMs?: number;
  /** DNS names the read endpoints answer on besides addresses and `localhost`. */
  allowedHosts?: readonly string[];
}

/** The address could not be bound: in use, not this machine's, not allowed, or not resolvable. */
export class ListenError extends CortexSyncError {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super('CONFIG', reason, options);
    this.name = 'ListenError';
  }
}

const LISTEN_PROBLEMS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is already in use (another process listens there)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'no network interface of this machine has that address',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (temporary DNS failure)',
  EAFNOSUPPORT: 'this machine does not support that address family',
};

const send = (
  res: ServerResponse,
  status: number,
  text: string,
  contentType: string,
  redact: (t: string) => string,
): void => {
  const body = redact(text);
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
};

/** How long a refused delivery's connection stays open, dropping what arrives, after the answer. */
const LINGER_MS = 1000;

/** Why a delivery's body was not read, as its answer. */
const UNREAD: Readonly<Record<Exclude<BodyRead['kind'], 'read'>, [number, string]>> = {
  'too-large': [413, 'payload too large'],
  busy: [503, 'too many deliveries are being read; try again'],
  timeout: [408, 'the body did not arrive in time'],
  aborted: [400, 'the connection closed before the body ended'],
};

const webhook = async (req: IncomingMessage, res: ServerResponse, e: Endpoints): Promise<void> => {
  const json = (status: number, body: unknown) =>
    send(res, status, `${JSON.stringify(body, null, 2)}\n`, 'application/json', e.redact);
  const reject = (status: number, reason: string) => {
    e.onWebhookAnswered(status, reason);
    if (status === 503) res.setHeader('Retry-After', '5');
    json(status, { error: reason });
    // What is left of the body is read and dropped for a moment, so that the sender sees the
    // answer (closing with unread bytes resets the connection, and the answer may be lost with
    // it), then the connection is closed.
    res.once('finish', () => {
      req.resume();
      setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
    });
  };
  // Everything that needs no body is checked before a byte of it is read.
  if (!e.webhookSecret) return reject(401, 'webhooks are not accepted: CORTEX_SYNC_WEBHOOK_SECRET is not set');
  const header = req.headers['x-hub-signature-256'];
  if (header === undefined) return reject(401, 'missing X-Hub-Signature-256');
  const signature = signatureBytes(typeof header === 'string' ? header : undefined);
  if (signature === undefined) return reject(401, 'X-Hub-Signature-256 is not sha256=<64 hex digits>');
  const read = await readSignedBody(req, {
    limit: e.maxBodyBytes ?? MAX_WEBHOOK_BODY_BYTES,
    budget: e.bodies,
    secret: e.webhookSecret,
    signature,
    ...(e.bodyTimeoutMs !== undefined ? { timeoutMs: e.bodyTimeoutMs } : {}),
  });
  if (read.kind !== 'read') return reject(...UNREAD[read.kind]);
  if (!read.signed) return reject(401, 'signature does not match');
  const event = req.headers['x-github-event'];
  const eventName = typeof event === 'string' ? event : undefined;
  const unavailable = eventName === 'ping' ? undefined : e.unavailable?.();
  if (unavailable !== undefined) return reject(503, unavailable);
  const delivery = req.headers['x-github-delivery'];
  if (e.deliveries.replayed(typeof delivery === 'string' ? delivery : undefined, read.body)) {
    e.onWebhookAnswered(200);
    return json(200, { triggered: false, reason: 'this delivery was received before; ignored' });
  }
  const decision = e.decide ? e.decide(eventName, read.body) : decideDelivery(eventName, read.body, e.branch);
  if (!decision.trigger) {
    // A signed delivery the watcher cannot use (not JSON, no ref) is counted and logged as refused.
    e.onWebhookAnswered(decision.status, decision.status >= 400 ? decision.reason : undefined);
    return json(decision.status, { triggered: false, reason: decision.reason });
  }
  e.onPush(decision.revision);
  e.onWebhookAnswered(202);
  json(202, { triggered: true });
};

const route = async (req: IncomingMessage, res: ServerResponse, e: Endpoints): Promise<void> => {
  const raw = (req.url ?? '/').split('?')[0] ?? '/';
  // `/webhook/github/` is the same route as `/webhook/github` (a common way to paste the URL).
  const path = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw;
  const method = req.method ?? 'GET';
  const text = (status: number, body: string, contentType = 'text/plain; charset=utf-8') =>
    send(res, status, body, contentType, e.redact);
  if (path === '/webhook/github') {
    if (method !== 'POST') return text(405, 'use POST\n');
    return webhook(req, res, e);
  }
  if (method !== 'GET' && method !== 'HEAD') return text(405, 'use GET\n');
  // What these answer is readable by a page that rebound its own DNS name to this address: they
  // answer only on an address, `localhost` or a name the operator listed (the webhook is signed).
  if (!isAddressHost(req.headers.host, e.allowedHosts)) {
    return text(
      403,
      `this port answers only on an IP address or localhost, not ${printable(req.headers.host ?? '(no Host)')}: list other names with --allowed-hosts\n`,
    );
  }
  switch (path) {
    case '/healthz': {
      const h = e.healthy();
      return text(h.ok ? 200 : 503, `${h.reason}\n`);
    }
    case '/readyz': {
      const r = e.ready();
      return text(r.ready ? 200 : 503, `${r.reason}\n`);
    }
    case '/metrics': {
      // Already redacted, and kept between scrapes while nothing changed (`metrics-cache.ts`).
      const m = await e.metrics();
      return send(res, 200, m.text, m.contentType, (t) => t);
    }
    case '/status':
      return text(200, `${JSON.stringify(e.status(), null, 2)}\n`, 'application/json');
    default:
      return text(404, 'not found: try /healthz, /readyz, /metrics, /status\n');
  }
};

interface RunningServer {
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Connections open at once (a probe, a scrape and GitHub need few). */
const MAX_CONNECTIONS = 512;

/** Listens on `host:port`; an address that cannot be bound throws `ListenError` saying why. */
export const startServer = async (host: string, port: number, endpoints: Endpoints): Promise<RunningServer> => {
  // Timeouts are enforced when connections are checked: every 5 s instead of Node's 30 s, so a
  // slow sender is cut off about when the timeouts below say.
  const server: Server = createServer({ connectionsCheckingInterval: 5000 }, (req, res) => {
    route(req, res, endpoints).catch((error: unknown) => {
      if (!res.headersSent)
        send(
          res,
          500,
          `internal error: ${error instanceof Error ? error.message : 'unknown'}\n`,
          'text/plain; charset=utf-8',
          endpoints.redact,
        );
      else res.destroy();
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  // A connection quiet this long is closed: one that never sends a byte is not seen by the two
  // above. (Below `headersTimeout`: on Node 20, a longer one was seen never to fire.)
  server.timeout = 8_000;
  // Connections beyond this are closed as they arrive; each holds little (headers are capped at
  // 16 KB, bodies by `webhook-body.ts`), and the timeouts above close the idle ones.
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      const problem = LISTEN_PROBLEMS[error.code ?? ''] ?? `${error.code ?? 'error'}: ${error.message}`;
      reject(new ListenError(problem, { cause: error }));
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    host: address.address,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
