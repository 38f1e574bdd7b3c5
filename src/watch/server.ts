/**
 * The watcher's one HTTP port (node:http): `/healthz`, `/readyz`, `/metrics`, `/status` and
 * `POST /webhook/github`. Handlers only read state and ask the runner for a run; nothing here
 * waits for a reconcile.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decideDelivery, MAX_WEBHOOK_BODY_BYTES, verifySignature } from './webhook.js';

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
  /** Logged (never with the body or the signature). */
  onWebhookRejected(status: number, reason: string): void;
  maxBodyBytes?: number;
}

const sendJson = (res: ServerResponse, status: number, body: unknown): void => {
  const text = `${JSON.stringify(body, null, 2)}\n`;
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
};

const sendText = (res: ServerResponse, status: number, text: string, contentType = 'text/plain; charset=utf-8') => {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
};

/** The body, or `undefined` once it exceeds `limit` (the rest is not read into memory). */
const readCapped = (req: IncomingMessage, limit: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });

const webhook = async (req: IncomingMessage, res: ServerResponse, e: Endpoints): Promise<void> => {
  const reject = (status: number, reason: string) => {
    e.onWebhookRejected(status, reason);
    res.setHeader('Connection', 'close');
    sendJson(res, status, { error: reason });
  };
  const body = await readCapped(req, e.maxBodyBytes ?? MAX_WEBHOOK_BODY_BYTES);
  if (body === undefined) return reject(413, 'payload too large');
  if (!e.webhookSecret) return reject(401, 'webhooks are not accepted: CORTEX_SYNC_WEBHOOK_SECRET is not set');
  const signature = req.headers['x-hub-signature-256'];
  if (!verifySignature(body, typeof signature === 'string' ? signature : undefined, e.webhookSecret)) {
    return reject(401, signature ? 'signature does not match' : 'missing X-Hub-Signature-256');
  }
  const event = req.headers['x-github-event'];
  const decision = decideDelivery(typeof event === 'string' ? event : undefined, body, e.branch);
  if (!decision.trigger) return sendJson(res, decision.status, { triggered: false, reason: decision.reason });
  e.onPush(decision.revision);
  sendJson(res, 202, { triggered: true });
};

const route = async (req: IncomingMessage, res: ServerResponse, e: Endpoints): Promise<void> => {
  const path = (req.url ?? '/').split('?')[0];
  const method = req.method ?? 'GET';
  if (path === '/webhook/github') {
    if (method !== 'POST') return sendText(res, 405, 'use POST\n');
    return webhook(req, res, e);
  }
  if (method !== 'GET' && method !== 'HEAD') return sendText(res, 405, 'use GET\n');
  switch (path) {
    case '/healthz': {
      const h = e.healthy();
      return sendText(res, h.ok ? 200 : 503, `${h.reason}\n`);
    }
    case '/readyz': {
      const r = e.ready();
      return sendText(res, r.ready ? 200 : 503, `${r.reason}\n`);
    }
    case '/metrics': {
      const m = await e.metrics();
      return sendText(res, 200, m.text, m.contentType);
    }
    case '/status':
      return sendJson(res, 200, e.status());
    default:
      return sendText(res, 404, 'not found: try /healthz, /readyz, /metrics, /status\n');
  }
};

export interface RunningServer {
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

export const startServer = async (host: string, port: number, endpoints: Endpoints): Promise<RunningServer> => {
  const server: Server = createServer((req, res) => {
    route(req, res, endpoints).catch((error: unknown) => {
      if (!res.headersSent)
        sendText(res, 500, `internal error: ${error instanceof Error ? error.message : 'unknown'}\n`);
      else res.destroy();
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
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
