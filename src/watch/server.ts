/**
 * The watcher's one HTTP port (node:http): `/healthz`, `/readyz`, `/metrics`, `/status` and
 * `POST /webhook/github`. Handlers only read state and ask the runner for a run; nothing here
 * waits for a reconcile. Every body it sends goes through the watcher's redaction first, so no
 * secret the watcher knows can leave through this port, whatever a run recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CortexSyncError } from '../core/errors.js';
import { decideDelivery, MAX_WEBHOOK_BODY_BYTES, type RecentDeliveries, verifySignature } from './webhook.js';

export interface Endpoints {
  healthy(): { ok: boolean; reason: string };
  ready(): { ready: boolean; reason: string };
  metrics(): Promise<{ contentType: string; text: string }>;
  status(): unknown;
  /** A verified push to the followed branch arrived. */
  onPush(revision: string | undefined): void;
  webhookSecret: string | undefined;
  /** The followed branch (`undefined`: every push, e.g. a directory fed by a sidecar). */
  branch: string | undefined;
  /** Every answered delivery; `rejected` says why one was refused (never with the body or the signature). */
  onWebhookAnswered(status: number, rejected?: string): void;
  /** Verified deliveries already accepted: a replay runs nothing. */
  deliveries: RecentDeliveries;
  /** Applied to every response body. */
  redact: (text: string) => string;
  maxBodyBytes?: number;
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

/** The body, or `undefined` as soon as it exceeds `limit` (the rest is never read). */
const readCapped = (req: IncomingMessage, limit: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.pause();
      resolve(undefined);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

const webhook = async (req: IncomingMessage, res: ServerResponse, e: Endpoints): Promise<void> => {
  const json = (status: number, body: unknown) => {
    send(res, status, `${JSON.stringify(body, null, 2)}\n`, 'application/json', e.redact);
    if (status < 400) e.onWebhookAnswered(status);
  };
  const reject = (status: number, reason: string) => {
    e.onWebhookAnswered(status, reason);
    // The connection is closed after the answer: an unread body is dropped with it.
    res.setHeader('Connection', 'close');
    json(status, { error: reason });
    res.once('finish', () => req.destroy());
  };
  const body = await readCapped(req, e.maxBodyBytes ?? MAX_WEBHOOK_BODY_BYTES);
  if (body === undefined) return reject(413, 'payload too large');
  if (!e.webhookSecret) return reject(401, 'webhooks are not accepted: CORTEX_SYNC_WEBHOOK_SECRET is not set');
  const signature = req.headers['x-hub-signature-256'];
  if (!verifySignature(body, typeof signature === 'string' ? signature : undefined, e.webhookSecret)) {
    return reject(401, signature ? 'signature does not match' : 'missing X-Hub-Signature-256');
  }
  const delivery = req.headers['x-github-delivery'];
  if (e.deliveries.replayed(typeof delivery === 'string' ? delivery : undefined, body)) {
    return json(200, { triggered: false, reason: 'this delivery was received before; ignored' });
  }
  const event = req.headers['x-github-event'];
  const decision = decideDelivery(typeof event === 'string' ? event : undefined, body, e.branch);
  if (!decision.trigger) return json(decision.status, { triggered: false, reason: decision.reason });
  e.onPush(decision.revision);
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
      const m = await e.metrics();
      return text(200, m.text, m.contentType);
    }
    case '/status':
      return text(200, `${JSON.stringify(e.status(), null, 2)}\n`, 'application/json');
    default:
      return text(404, 'not found: try /healthz, /readyz, /metrics, /status\n');
  }
};

export interface RunningServer {
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

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
