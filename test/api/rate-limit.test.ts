import { Agent } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type ApiClientOptions, createApiClient } from '../../src/api/client.js';
import type { RequestEvent } from '../../src/api/types.js';
import { ApiError } from '../../src/core/errors.js';
import { type Handler, manualClock, sendJson, settle, startServer, type TestServer, virtualClock } from './helpers.js';

const dispatcher = new Agent({ keepAliveTimeout: 1000 });
afterAll(() => dispatcher.close());

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const tooMany =
  (headers: Record<string, string>, retryAfter?: number): Handler =>
  (_req, res) =>
    sendJson(
      res,
      429,
      { type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'Rate limit exceeded', retryAfter },
      { 'content-type': 'application/problem+json', ...headers },
    );

const setup = async (handler: Handler, options: Partial<ApiClientOptions> = {}) => {
  const clock = virtualClock();
  server = await startServer(handler, clock);
  const events: RequestEvent[] = [];
  const client = createApiClient({
    baseUrl: server.url,
    apiKey: 'k',
    dispatcher,
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0.5,
    onRequest: (e) => events.push(e),
    ...options,
  });
  return { client, clock, events, received: server.received };
};

describe('429 handling', () => {
  it('a 429 with Retry-After: 1 pauses the whole client for 1 s: queued requests wait, then the 429 is retried', async () => {
    const first429 = tooMany({ 'retry-after': '1' });
    const { client, clock, received } = await setup(
      (req, res, i) => (i === 0 ? first429(req, res, i) : sendJson(res, 200, { path: req.url })),
      { concurrency: 1 },
    );
    const t0 = clock.now();
    const results = await Promise.all(
      ['/api/v1/a', '/api/v1/b', '/api/v1/c'].map((path) => client.request({ operation: 'read', method: 'GET', path })),
    );
    expect(results.map((r) => [r.status, r.attempts])).toEqual([
      [200, 2],
      [200, 1],
      [200, 1],
    ]);
    expect(received.map((r) => r.url)).toEqual(['/api/v1/a', '/api/v1/b', '/api/v1/c', '/api/v1/a']);
    expect(received[0]?.at).toBe(t0);
    // Nothing reached the server inside the Retry-After window.
    for (const later of received.slice(1)) expect(later.at).toBeGreaterThanOrEqual(t0 + 1000);
    // The pause, then (one request having gone alone at its end) token waits at the lowered rate:
    // 700/min after one 429, a token every 86 ms.
    expect(clock.sleeps[0]).toBe(1000);
    for (const wait of clock.sleeps.slice(1)) expect(wait).toBeLessThanOrEqual(86);
    expect(client.stats()).toMatchObject({
      rateLimited: 1,
      retries: 1,
      requestsSent: 4,
      pausedMs: 1000,
      requestsStartedDuringPause: 0,
    });
  });

  it('while paused, no queued or new request is sent, even with free concurrency slots', async () => {
    const clock = manualClock();
    const first429 = tooMany({ 'retry-after': '1' });
    server = await startServer((req, res, i) => (i === 0 ? first429(req, res, i) : sendJson(res, 200, {})), clock);
    let onRateLimited!: () => void;
    const rateLimited = new Promise<void>((resolve) => {
      onRateLimited = resolve;
    });
    const client = createApiClient({
      baseUrl: server.url,
      apiKey: 'k',
      dispatcher,
      now: clock.now,
      sleep: clock.sleep,
      concurrency: 8,
      onRequest: (e) => {
        if (e.status === 429) onRateLimited();
      },
    });
    const t0 = clock.now();
    const first = client.request({ operation: 'first', method: 'GET', path: '/api/v1/first' });
    await rateLimited;
    const later = [client.request({ operation: 'new', method: 'POST', path: '/api/v1/new', body: {} })];
    await settle();
    later.push(client.request({ operation: 'newer', method: 'GET', path: '/api/v1/newer' }));
    await settle();
    // The client is waiting out Retry-After: one sleep of 1 s, and nothing sent but the first attempt.
    expect(clock.pending.map((p) => p.ms)).toEqual([1000]);
    expect(client.stats().requestsSent).toBe(1);
    expect(server.received).toHaveLength(1);
    clock.releaseNext();
    // After the pause, the rest follow at the (lowered) rate: wake each token wait in turn.
    let done = false;
    const all = Promise.all([first, ...later]).then(() => {
      done = true;
    });
    while (!done) {
      await settle();
      if (clock.pending.length > 0) clock.releaseNext();
    }
    await all;
    expect(server.received.map((r) => r.url).sort()).toEqual([
      '/api/v1/first',
      '/api/v1/first',
      '/api/v1/new',
      '/api/v1/newer',
    ]);
    expect(server.received[1]?.at).toBe(t0 + 1000);
    for (const r of server.received.slice(1)) expect(r.at).toBeGreaterThanOrEqual(t0 + 1000);
    expect(client.stats().requestsStartedDuringPause).toBe(0);
  });

  it('retries a POST after a 429, waiting for the body retryAfter when there is no header', async () => {
    const { client, clock, received, events } = await setup((req, res, i) =>
      i === 0 ? tooMany({}, 2)(req, res, i) : sendJson(res, 201, { created: true }),
    );
    const res = await client.request({
      operation: 'create initiative',
      method: 'POST',
      path: '/api/v1/initiatives',
      body: { name: 'x' },
    });
    expect(res).toMatchObject({ status: 201, attempts: 2 });
    expect(received.map((r) => r.body)).toEqual(['{"name":"x"}', '{"name":"x"}']);
    expect(received[1]!.at - received[0]!.at).toBe(2000);
    expect(clock.sleeps).toEqual([2000]);
    expect(events[0]).toMatchObject({ status: 429, retryInMs: 2000, error: 'Too Many Requests: Rate limit exceeded' });
  });

  it('gives up after maxAttempts with the API message', async () => {
    const { client, received } = await setup(tooMany({ 'retry-after': '1' }), { maxAttempts: 3 });
    const error = await client
      .request({ operation: 'list', method: 'GET', path: '/api/v1/x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe(
      'list failed: GET /api/v1/x → HTTP 429: Too Many Requests: Rate limit exceeded (after 3 attempts)',
    );
    expect(received).toHaveLength(3);
  });

  it('fails at once when Retry-After is longer than the client is willing to wait', async () => {
    const { client, received, clock } = await setup(tooMany({ 'retry-after': '3600' }));
    const error = (await client
      .request({ operation: 'list', method: 'GET', path: '/api/v1/x' })
      .catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(429);
    expect(error.message).toContain('the API asked to wait 3600 s, longer than the 300 s this client waits');
    expect(received).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('under load with repeated 429s every request succeeds and none starts inside a pause', async () => {
    let sent429 = 0;
    const { client } = await setup(
      (req, res, i) => {
        if (i % 7 === 3) {
          sent429++;
          tooMany({ 'retry-after': '1' })(req, res, i);
        } else sendJson(res, 200, {});
      },
      { concurrency: 8, burst: 5, requestsPerMinute: 600 },
    );
    const all = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        client.request({
          operation: 'read',
          method: i % 2 ? 'GET' : 'POST',
          path: `/api/v1/n/${i}`,
          body: i % 2 ? undefined : {},
        }),
      ),
    );
    expect(all.every((r) => r.status === 200)).toBe(true);
    const stats = client.stats();
    expect(stats.rateLimited).toBe(sent429);
    expect(stats.retries).toBe(sent429);
    expect(stats.requestsSent).toBe(40 + sent429);
    expect(stats.requestsStartedDuringPause).toBe(0);
  });
});

describe('token bucket', () => {
  it('spaces requests to the configured rate after the burst; reads spend the burst at 20× the rate, writes at 10×', async () => {
    // One at a time, so virtual time moves only between requests and the server's stamps are exact.
    const { client, received, clock } = await setup((_req, res) => sendJson(res, 200, {}), {
      requestsPerMinute: 120,
      burst: 2,
      concurrency: 1,
    });
    const at = async (method: 'GET' | 'POST') => {
      const t0 = clock.now();
      const from = received.length;
      await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          client.request({ operation: 'op', method, path: `/api/v1/${i}`, body: {} }),
        ),
      );
      return received
        .slice(from)
        .map((r) => r.at - t0)
        .sort((a, b) => a - b);
    };
    // 120/min: a token every 500 ms. Reads take the burst of 2 at 20× the rate (25 ms apart).
    expect(await at('GET')).toEqual([0, 25, 500, 1000]);
    await clock.sleep(10_000); // the bucket fills again
    // Writes take it at 10× the rate (50 ms apart), so a smaller server bucket running dry refuses one, not all.
    expect(await at('POST')).toEqual([0, 50, 500, 1000]);
  });
});
