/** Test helpers: a real HTTP server on 127.0.0.1 and a virtual clock. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Virtual time at arrival (the clock passed to `startServer`). */
  at: number;
}

export type Handler = (req: ReceivedRequest, res: ServerResponse, index: number) => void;

export interface TestServer {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts a loopback server; `handler` answers each request (index = 0-based arrival order). */
export const startServer = async (handler: Handler, clock?: { now(): number }): Promise<TestServer> => {
  const received: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const at = clock?.now() ?? 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at,
      };
      received.push(entry);
      handler(entry, res, received.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

export const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

/** Virtual time: `sleep` advances the clock at once instead of waiting. */
export const virtualClock = (start = 1_000_000) => {
  let t = start;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
    sleeps,
  };
};

/** Virtual time whose sleeps stay pending until the test calls `releaseNext()`. */
export const manualClock = (start = 1_000_000) => {
  let t = start;
  const pending: { ms: number; resolve: () => void }[] = [];
  return {
    now: () => t,
    sleep: (ms: number) => new Promise<void>((resolve) => pending.push({ ms, resolve })),
    pending,
    /** Advances the clock past the oldest pending sleep and wakes it. */
    releaseNext: () => {
      const next = pending.shift();
      if (!next) throw new Error('no pending sleep');
      t += next.ms;
      next.resolve();
    },
  };
};

/** Lets pending I/O callbacks and promise jobs run. */
export const settle = async (rounds = 5): Promise<void> => {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
};
