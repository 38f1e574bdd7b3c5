/**
 * `ApiRequest.signal` cancels waiting — in the rate limiter's queue, a Retry-After pause, a
 * backoff — at once with a `CancelledError`, and no new attempt starts. An attempt already sent is
 * not aborted. And a server that keeps the client waiting is reported while it does.
 *
 * "At once" without a stopwatch: the waits run on a clock whose sleeps end only when cancelled, and
 * the request held in the queue is cancelled while what holds it is still held, so a wait that
 * cancellation did not end never ends and the test cannot pass.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { CancelledError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/clock.js';
import type { EngineEvent } from '../../src/engine/context.js';
import { sendJson, startServer, type TestServer } from './helpers.js';

const KEY = 'cancel-test-key-0123456789';

let server: TestServer | undefined;
let closeClient: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeClient?.();
  await server?.close();
  server = undefined;
  closeClient = undefined;
});

const clientFor = (url: string, events: EngineEvent[] = [], extra: { concurrency?: number; clock?: Clock } = {}) => {
  const client = createApiClient({ baseUrl: url, apiKey: KEY, events: { emit: (e) => events.push(e) }, ...extra });
  closeClient = () => client.close();
  return client;
};

const until = async (condition: () => boolean): Promise<void> => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

/** How a promise settles. */
const settled = async (promise: Promise<unknown>) =>
  promise.then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e }),
  );

/**
 * A stopped clock: its time does not move and its sleeps never end on their own, only when their
 * signal aborts; `waits` are the lengths asked.
 */
const stoppedClock = (): Clock & { waits: number[] } => {
  const waits: number[] = [];
  return {
    waits,
    now: () => 1_750_000_000_000,
    sleep: (ms, signal) => {
      waits.push(ms);
      return new Promise((_resolve, reject) => {
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    },
  };
};

describe('cancellation', () => {
  it('a request waiting in the limiter queue is cancelled at once and never sent', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    server = await startServer((_req, res) => void held.then(() => sendJson(res, 200, {})));
    const client = clientFor(server.url, [], { concurrency: 1 });
    const first = client.request({ operation: 'first', method: 'GET', path: '/api/v1/first' });
    const controller = new AbortController();
    const queued = client.request({
      operation: 'second',
      method: 'GET',
      path: '/api/v1/second',
      signal: controller.signal,
    });
    await until(() => server?.received.length === 1);
    controller.abort();
    // Settled while the first request still holds the only slot: it never waited for the slot.
    const outcome = await settled(queued);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.e).toBeInstanceOf(CancelledError);
    release();
    await first;
    expect(server.received.map((r) => r.url)).toEqual(['/api/v1/first']);
  });

  it('a request waiting out a long Retry-After is cancelled at once and not sent again', async () => {
    server = await startServer((_req, res) => sendJson(res, 429, { title: 'slow down' }, { 'retry-after': '120' }));
    const events: EngineEvent[] = [];
    const clock = stoppedClock();
    const client = clientFor(server.url, events, { clock });
    const controller = new AbortController();
    const waiting = client.request({ operation: 'list', method: 'GET', path: '/api/v1/x', signal: controller.signal });
    await until(() => events.some((e) => e.type === 'ratelimit.paused') && clock.waits.length > 0);
    controller.abort();
    const outcome = await settled(waiting);
    expect(!outcome.ok && outcome.e).toBeInstanceOf(CancelledError);
    expect(clock.waits).toEqual([120_000]);
    expect(server.received).toHaveLength(1);
    expect(events.filter((e) => e.type === 'request')).toEqual([
      {
        type: 'request',
        operation: 'list',
        method: 'GET',
        status: 429,
        durationMs: expect.any(Number) as number,
        retryInMs: 120_000,
      },
    ]);
  });

  it('a request in a backoff sleep (503, Retry-After 20 s) is cancelled at once', async () => {
    server = await startServer((_req, res) => sendJson(res, 503, { message: 'down' }, { 'retry-after': '20' }));
    const clock = stoppedClock();
    const client = clientFor(server.url, [], { clock });
    const controller = new AbortController();
    const waiting = client.request({ operation: 'list', method: 'GET', path: '/api/v1/x', signal: controller.signal });
    await until(() => server?.received.length === 1 && clock.waits.length > 0);
    controller.abort();
    const outcome = await settled(waiting);
    expect(!outcome.ok && outcome.e).toMatchObject({ code: 'CANCELLED', operation: 'list' });
    expect(clock.waits).toEqual([20_000]);
    expect(server.received).toHaveLength(1);
  });

  it('an attempt in flight is not aborted: it finishes and its answer is returned', async () => {
    server = await startServer((_req, res) => void setTimeout(() => sendJson(res, 200, { done: true }), 300));
    const client = clientFor(server.url);
    const controller = new AbortController();
    const pending = client.request({
      operation: 'write',
      method: 'PUT',
      path: '/api/v1/x',
      body: {},
      signal: controller.signal,
    });
    await until(() => server?.received.length === 1);
    controller.abort();
    await expect(pending).resolves.toMatchObject({ status: 200, body: { done: true } });
  });

  it('an already aborted signal sends nothing', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}));
    const client = clientFor(server.url);
    await expect(
      client.request({ operation: 'read', method: 'GET', path: '/api/v1/x', signal: AbortSignal.abort() }),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(server.received).toHaveLength(0);
  });
});

describe('a server that keeps the client waiting', () => {
  it('is reported with request.waiting events: what, where, and for how long', async () => {
    server = await startServer((_req, res) => void setTimeout(() => sendJson(res, 200, {}), 400));
    const events: EngineEvent[] = [];
    const client = createApiClient({
      baseUrl: server.url,
      apiKey: KEY,
      events: { emit: (e) => events.push(e) },
      waitingNoticeMs: 100,
      waitingEveryMs: 100,
    });
    closeClient = () => client.close();
    await client.request({ operation: 'list entity types', method: 'GET', path: '/api/v1/catalog/definitions' });
    const waiting = events.filter((e) => e.type === 'request.waiting');
    expect(waiting.length).toBeGreaterThanOrEqual(2);
    expect(waiting[0]).toMatchObject({
      operation: 'list entity types',
      method: 'GET',
      host: new URL(server.url).host,
    });
    const waited = waiting.map((e) => (e.type === 'request.waiting' ? e.waitedMs : 0));
    expect(waited[0]).toBeGreaterThanOrEqual(99);
    expect(waited[1]).toBeGreaterThan(waited[0] as number);
    // Nothing is reported once the answer came.
    const count = waiting.length;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(events.filter((e) => e.type === 'request.waiting')).toHaveLength(count);
  });
});
