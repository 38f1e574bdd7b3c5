import { Agent } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { DotSegmentPathError, MAX_REQUEST_BODY_BYTES, RequestTooLargeError } from '../../src/api/errors.js';
import type { RequestEvent } from '../../src/api/types.js';
import { ApiError } from '../../src/core/errors.js';
import { VERSION } from '../../src/version.js';
import { type Handler, sendJson, startServer, type TestServer, virtualClock } from './helpers.js';

const dispatcher = new Agent({ keepAliveTimeout: 1000 });
afterAll(() => dispatcher.close());

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const setup = async (
  handler: Handler,
  options: { timeoutMs?: number; concurrency?: number; maxAttempts?: number; apiKey?: string } = {},
) => {
  const clock = virtualClock();
  server = await startServer(handler, clock);
  const events: RequestEvent[] = [];
  const client = createApiClient({
    baseUrl: `${server.url}/`,
    apiKey: options.apiKey ?? 'test-key',
    dispatcher,
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0.5,
    concurrency: options.concurrency,
    timeoutMs: options.timeoutMs,
    maxAttempts: options.maxAttempts,
    onRequest: (e) => events.push(e),
  });
  return { client, clock, events, received: server.received };
};

const rejection = async (promise: Promise<unknown>): Promise<ApiError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
};

describe('createApiClient: requests and responses', () => {
  it('sends bearer auth, user agent, query arrays and JSON bodies below the base URL path prefix', async () => {
    const clock = virtualClock();
    server = await startServer((_req, res) => sendJson(res, 200, { ok: true }), clock);
    const client = createApiClient({ baseUrl: `${server.url}/prefix/`, apiKey: 'k-1', dispatcher });
    const res = await client.request({
      operation: 'create thing',
      method: 'POST',
      path: '/api/v1/things',
      query: { types: ['a', 'b'], dryRun: true },
      body: { name: 'x' },
    });
    expect(res).toMatchObject({ status: 200, body: { ok: true }, attempts: 1 });
    const [got] = server.received;
    expect(got?.url).toBe('/prefix/api/v1/things?types=a&types=b&dryRun=true');
    expect(got?.headers.authorization).toBe('Bearer k-1');
    expect(got?.headers['user-agent']).toBe(`cortex-sync/${VERSION}`);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.body).toBe('{"name":"x"}');
    expect(client.stats().requestsByMethod.POST).toBe(1);
  });

  it('sends string bodies as is with their content type, and decodes text and empty responses', async () => {
    const { client, received } = await setup((req, res) => {
      if (req.method === 'DELETE') {
        res.writeHead(204).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/yaml' }).end('openapi: 3.0.1\n');
    });
    const yaml = 'openapi: 3.0.1\ninfo:\n  x-cortex-tag: a\n';
    const put = await client.request({
      operation: 'upsert',
      method: 'PUT',
      path: '/api/v1/open-api',
      body: yaml,
      contentType: 'application/openapi;charset=UTF-8',
    });
    expect(put.body).toBe('openapi: 3.0.1\n');
    expect(received[0]?.body).toBe(yaml);
    expect(received[0]?.headers['content-type']).toBe('application/openapi;charset=UTF-8');
    const del = await client.request({ operation: 'delete', method: 'DELETE', path: '/api/v1/x' });
    expect(del).toMatchObject({ status: 204, body: undefined });
  });

  it('returns acceptStatus answers instead of throwing', async () => {
    const { client } = await setup((_req, res) =>
      sendJson(res, 404, { type: 'NOT_FOUND', message: 'Entity not found' }),
    );
    const res = await client.request({
      operation: 'probe',
      method: 'GET',
      path: '/api/v1/catalog/x',
      acceptStatus: [404],
    });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ type: 'NOT_FOUND', message: 'Entity not found' });
  });

  it('refuses a body over 2 MB before sending anything', async () => {
    const { client, received } = await setup((_req, res) => sendJson(res, 200, {}));
    const body = 'x'.repeat(MAX_REQUEST_BODY_BYTES + 1);
    const error = await rejection(
      client.request({ operation: 'upsert entity big', method: 'POST', path: '/api/v1/open-api', body }),
    );
    expect(error).toBeInstanceOf(RequestTooLargeError);
    expect(error.message).toMatch(
      /^upsert entity big failed: POST \/api\/v1\/open-api → request body is 2\.00 MB .*over the API's limit of 2\.00 MB; nothing was sent$/,
    );
    expect(received).toHaveLength(0);
  });

  it('refuses a path with a dot segment (an id of dots only) before sending anything', async () => {
    const { client, received } = await setup((_req, res) => sendJson(res, 200, {}));
    for (const id of ['..', '.', '%2e%2E', '.%2e']) {
      const path = `/api/v1/catalog-pages/${id === '..' || id === '.' ? encodeURIComponent(id) : id}`;
      const error = await rejection(client.request({ operation: `delete catalog page ${id}`, method: 'DELETE', path }));
      expect(error, id).toBeInstanceOf(DotSegmentPathError);
      expect(error.message).toContain(`delete catalog page ${id} failed: DELETE ${path} → the path has a`);
    }
    // Dots inside a segment are an ordinary id.
    await client.request({ operation: 'read page', method: 'GET', path: '/api/v1/catalog-pages/v1..2' });
    expect(received.map((r) => r.url)).toEqual(['/api/v1/catalog-pages/v1..2']);
  });
});

describe('createApiClient: errors', () => {
  it('a 4xx names the operation, status and the API message, keeps the body and is not retried', async () => {
    const body = {
      type: 'NOT_FOUND',
      message: 'Entity not found',
      details: 'payments-api',
      httpStatus: 404,
      requestId: 'req-9',
    };
    const { client, received } = await setup((_req, res) => sendJson(res, 404, body));
    const error = await rejection(
      client.request({ operation: 'get entity payments-api', method: 'GET', path: '/api/v1/catalog/payments-api' }),
    );
    expect(error.message).toBe(
      'get entity payments-api failed: GET /api/v1/catalog/payments-api → HTTP 404: Entity not found — payments-api',
    );
    expect(error).toMatchObject({ code: 'API', status: 404, requestId: 'req-9', attempts: 1, body });
    expect(received).toHaveLength(1);
  });

  it('a descriptor rejection lists its violations', async () => {
    const { client } = await setup((_req, res) =>
      sendJson(res, 400, {
        ok: false,
        violations: [{ title: 'Invalid YAML', description: 'bad indent', violationType: 'MUST', startLine: 4 }],
      }),
    );
    const error = await rejection(
      client.request({
        operation: 'upsert entity a',
        method: 'POST',
        path: '/api/v1/open-api',
        body: 'x: [',
        contentType: 'application/openapi',
      }),
    );
    expect(error.apiMessage).toBe('1 violation: [MUST] Invalid YAML: bad indent (at line 4)');
    expect(error.message).toContain('HTTP 400: 1 violation');
  });
});

describe('createApiClient: retries', () => {
  const failOnceThen200 =
    (status: number): Handler =>
    (_req, res, i) =>
      i === 0
        ? sendJson(res, status, { title: 'Service Unavailable' }, { 'content-type': 'application/problem+json' })
        : sendJson(res, 200, { done: true });

  it('retries GET after a 503 but not POST', async () => {
    const get = await setup(failOnceThen200(503));
    const res = await get.client.request({ operation: 'list', method: 'GET', path: '/api/v1/x' });
    expect(res).toMatchObject({ status: 200, attempts: 2, body: { done: true } });
    expect(get.received).toHaveLength(2);
    expect(get.events.map((e) => [e.status, e.retryInMs])).toEqual([
      [503, 125],
      [200, undefined],
    ]);
    expect(get.client.stats().retries).toBe(1);
    await server?.close();

    const post = await setup(failOnceThen200(503));
    const error = await rejection(
      post.client.request({ operation: 'create initiative', method: 'POST', path: '/api/v1/initiatives', body: {} }),
    );
    expect(error).toMatchObject({ status: 503, attempts: 1, apiMessage: 'Service Unavailable' });
    expect(post.received).toHaveLength(1);
  });

  it('retries a POST marked idempotent, and gives up after maxAttempts', async () => {
    const ok = await setup(failOnceThen200(502));
    await expect(
      ok.client.request({ operation: 'upsert', method: 'POST', path: '/api/v1/y', body: {}, idempotent: true }),
    ).resolves.toMatchObject({ attempts: 2 });
    await server?.close();

    const failing = await setup((_req, res) => sendJson(res, 500, { message: 'boom' }), { maxAttempts: 3 });
    const error = await rejection(failing.client.request({ operation: 'list', method: 'GET', path: '/api/v1/z' }));
    expect(error.message).toBe('list failed: GET /api/v1/z → HTTP 500: boom (after 3 attempts)');
    expect(failing.received).toHaveLength(3);
    expect(failing.clock.sleeps).toEqual([125, 250]);
  });

  it('a timed-out attempt is retried for GET and ends in a TIMEOUT error', async () => {
    // Long enough for each attempt to reach the server on a loaded machine before it times out.
    const { client, received } = await setup(() => {}, { timeoutMs: 500, maxAttempts: 2 });
    const error = await rejection(client.request({ operation: 'list slow', method: 'GET', path: '/api/v1/slow' }));
    expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 2, status: undefined });
    expect(error.message).toBe(
      'list slow failed: GET /api/v1/slow → timed out: no response within 500 ms (after 2 attempts)',
    );
    expect(received).toHaveLength(2);
    expect(client.stats().timeouts).toBe(2);
  });

  it('a POST that times out is not retried', async () => {
    // Long enough for the request to reach the server on a loaded machine before it times out.
    const { client, received } = await setup(() => {}, { timeoutMs: 1000, maxAttempts: 3 });
    const error = await rejection(
      client.request({ operation: 'create', method: 'POST', path: '/api/v1/slow', body: {} }),
    );
    expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 1 });
    expect(received).toHaveLength(1);
  });

  it('a network error is a NETWORK ApiError after retries', async () => {
    const closed = await startServer(() => {});
    const url = closed.url;
    await closed.close();
    const clock = virtualClock();
    const client = createApiClient({ baseUrl: url, apiKey: 'k', dispatcher, ...clock, maxAttempts: 2 });
    const error = await rejection(client.request({ operation: 'list', method: 'GET', path: '/api/v1/x' }));
    expect(error).toMatchObject({ code: 'NETWORK', attempts: 2 });
    expect(error.message).toMatch(/^list failed: GET \/api\/v1\/x → network error: .*ECONNREFUSED/);
  });
});
