import { Agent } from 'undici';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { RequestEvent } from '../../src/api/types.js';
import { ApiError, CortexSyncError } from '../../src/core/errors.js';
import { startServer, type TestServer, virtualClock } from './helpers.js';

const KEY = 'ck_live_Zq81xPw0rT9vSecretKey';
const dispatcher = new Agent({ keepAliveTimeout: 1000 });
afterAll(() => dispatcher.close());

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  vi.restoreAllMocks();
});

const everything = (error: ApiError, events: RequestEvent[]): string =>
  [
    error.message,
    String(error),
    error.stack,
    error.path,
    error.apiMessage,
    JSON.stringify(error.body),
    error.requestId,
    JSON.stringify(events),
  ].join('\n');

describe('the API key never leaks', () => {
  it('not through a 401 (even one that echoes the key), retries, events, paths or output', async () => {
    const writes: string[] = [];
    for (const stream of [process.stdout, process.stderr]) {
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        writes.push(String(chunk));
        return true;
      });
    }
    const clock = virtualClock();
    // A misbehaving proxy and server that echo the Authorization header back in every error.
    server = await startServer((req, res, i) => {
      const auth = String(req.headers.authorization);
      if (i < 2) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end(`upstream rejected ${auth}`);
        return;
      }
      res.writeHead(401, { 'content-type': 'application/json', 'x-request-id': auth });
      res.end(
        JSON.stringify({
          type: 'UNAUTHORIZED',
          message: `Invalid key ${auth}`,
          details: { [auth]: [auth] },
          requestId: auth,
        }),
      );
    }, clock);
    const events: RequestEvent[] = [];
    const client = createApiClient({
      baseUrl: server.url,
      apiKey: KEY,
      dispatcher,
      ...clock,
      onRequest: (e) => events.push(e),
    });
    const error = (await client
      .request({ operation: 'list entities', method: 'GET', path: '/api/v1/catalog' })
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(server.received).toHaveLength(3);
    expect(server.received[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(error.status).toBe(401);
    expect(error.message).toBe(
      'list entities failed: GET /api/v1/catalog → HTTP 401: Invalid key Bearer [REDACTED] (after 3 attempts)',
    );
    expect(events.map((e) => e.status)).toEqual([503, 503, 401]);
    expect(events[0]?.error).toBe('upstream rejected Bearer [REDACTED]');
    const seen = everything(error, events) + writes.join('');
    expect(seen).not.toContain(KEY);
    expect(seen).not.toContain(KEY.slice(0, 12));
  });

  it('not through a network error or a configuration error', async () => {
    const closed = await startServer(() => {});
    await closed.close();
    const events: RequestEvent[] = [];
    const client = createApiClient({
      baseUrl: closed.url,
      apiKey: KEY,
      dispatcher,
      ...virtualClock(),
      maxAttempts: 2,
      onRequest: (e) => events.push(e),
    });
    const error = (await client
      .request({ operation: 'list', method: 'PUT', path: '/api/v1/x', body: {} })
      .catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe('NETWORK');
    expect(events).toHaveLength(2);
    expect(everything(error, events)).not.toContain(KEY);

    const badKey = `${KEY}\r\nX-Injected: 1`;
    let configError: unknown;
    try {
      createApiClient({ apiKey: badKey, dispatcher });
    } catch (e) {
      configError = e;
    }
    expect(configError).toBeInstanceOf(CortexSyncError);
    expect((configError as CortexSyncError).code).toBe('CONFIG');
    expect(String(configError)).not.toContain(KEY);
  });
});
