/**
 * The shared rate budget of a watcher's sources, by counts: a source with hundreds of requests
 * waiting does not delay another source's one request by more than one turn; a write starts only
 * while the fence allows it; events reach the source whose request it was.
 */
import { getEventListeners } from 'node:events';
import { expect, it } from 'vitest';
import { type ApiClient, type ApiRequest, emptyClientStats } from '../../src/api/types.js';
import type { EngineEvent } from '../../src/engine/context.js';
import { FairBudget } from '../../src/watch/fair-budget.js';
import { createApiClient } from '../../src/api/client.js';
import { API_KEY, startTestEmulator } from './harness.js';

/** A shared client whose requests end when the test says; each reports one `request` event. */
const fakeShared = (events: { emit(e: EngineEvent): void }) => {
  const open: (() => void)[] = [];
  const sent: string[] = [];
  const client: ApiClient = {
    request: async <T>(req: ApiRequest) => {
      sent.push(req.operation);
      await new Promise<void>((resolve) => open.push(resolve));
      events.emit({ type: 'request', operation: req.operation, method: req.method, status: 200, durationMs: 1 });
      return { status: 200, headers: {}, body: undefined as T, attempts: 1, durationMs: 1 };
    },
    paginate: () => Promise.resolve([]),
    close: () => Promise.resolve(),
    stats: emptyClientStats,
  };
  /** Ends the oldest request in flight and lets what follows start. */
  const finishOne = async () => {
    open.shift()?.();
    await new Promise((r) => setImmediate(r));
  };
  return { client, sent, finishOne };
};

const get = (operation: string): ApiRequest => ({ operation, method: 'GET', path: '/api/v1/x' });
const noEvents = { emit: () => {} };

it("a busy source's queue delays another source's request by one turn at most", async () => {
  const budget = new FairBudget(4, { recordStarts: true });
  const shared = fakeShared(budget.events);
  const big = budget.clientFor('big', shared.client, noEvents);
  const small = budget.clientFor('small', shared.client, noEvents);
  const bigDone = Promise.all(Array.from({ length: 500 }, (_, i) => big.request(get(`big-${i}`))));
  await new Promise((r) => setImmediate(r));
  expect(shared.sent).toHaveLength(4);
  const smallDone = small.request(get('small-1'));
  // One request of the big source ends: the slot goes to the small source, not to big-4.
  await shared.finishOne();
  expect(shared.sent.slice(4)).toEqual(['small-1']);
  for (let i = 0; i < 600 && shared.sent.length < 504; i += 1) await shared.finishOne();
  for (let i = 0; i < 10; i += 1) await shared.finishOne();
  await smallDone;
  await bigDone;
  // Of 501 requests, the small one was the fifth to start; 496 of the big source started after it.
  expect(budget.started.indexOf('small')).toBe(4);
  expect(budget.started.slice(5).filter((s) => s === 'big')).toHaveLength(496);
});

it('starts no write once the fence is closed, even one queued while it was open', async () => {
  let leading = true;
  const budget = new FairBudget(1, { mayWrite: () => leading });
  const shared = fakeShared(budget.events);
  const client = budget.clientFor('a', shared.client, noEvents);
  const first = client.request(get('read'));
  const write = client.request({ operation: 'update entity', method: 'POST', path: '/api/v1/open-api' }).then(
    () => 'sent',
    (error: Error) => error.message,
  );
  leading = false;
  await shared.finishOne();
  await first;
  expect(await write).toBe('update entity not sent: this replica is not the leader');
  expect(shared.sent).toEqual(['read']);
  // Reads still go.
  const read = client.request(get('read-2'));
  await new Promise((r) => setImmediate(r));
  await shared.finishOne();
  await read;
  expect(shared.sent).toEqual(['read', 'read-2']);
});

it('reports each request to the sink of the source that made it', async () => {
  const budget = new FairBudget(2);
  const shared = fakeShared(budget.events);
  const seen: Record<string, string[]> = { a: [], b: [] };
  const sink = (name: string) => ({ emit: (e: EngineEvent) => e.type === 'request' && seen[name]?.push(e.operation) });
  const a = budget.clientFor('a', shared.client, sink('a'));
  const b = budget.clientFor('b', shared.client, sink('b'));
  const done = Promise.all([a.request(get('a1')), b.request(get('b1')), a.request(get('a2')), b.request(get('b2'))]);
  for (let i = 0; i < 6; i += 1) await shared.finishOne();
  await done;
  expect(seen).toEqual({ a: ['a1', 'a2'], b: ['b1', 'b2'] });
});

it('a request aborted while it waits is dropped from the queue and never sent', async () => {
  const budget = new FairBudget(1);
  const shared = fakeShared(budget.events);
  const client = budget.clientFor('a', shared.client, noEvents);
  const first = client.request(get('first'));
  const controller = new AbortController();
  const second = client.request({ ...get('second'), signal: controller.signal });
  controller.abort();
  await expect(second).rejects.toThrow('cancelled before it was sent');
  await shared.finishOne();
  await first;
  expect(shared.sent).toEqual(['first']);
});

it("through the real client and its limiter, each source's request events reach its own sink", async () => {
  const emulator = await startTestEmulator();
  try {
    const budget = new FairBudget(2);
    // Concurrency 1: a request starts when another's ends, from that other's async context.
    const shared = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, concurrency: 1, events: budget.events });
    const seen: Record<string, string[]> = { a: [], b: [] };
    const sink = (name: string) => ({
      emit: (e: EngineEvent) => {
        if (e.type === 'request') seen[name]?.push(e.operation);
      },
    });
    const a = budget.clientFor('a', shared, sink('a'));
    const b = budget.clientFor('b', shared, sink('b'));
    const read = (client: ApiClient, operation: string) =>
      client.request({ operation, method: 'GET', path: '/api/v1/catalog', query: { pageSize: 1 } });
    await Promise.all([read(a, 'a1'), read(b, 'b1'), read(a, 'a2'), read(b, 'b2'), read(a, 'a3')]);
    await shared.close();
    expect(seen).toEqual({ a: ['a1', 'a2', 'a3'], b: ['b1', 'b2'] });
  } finally {
    await emulator.stop();
  }
});

it("through the real client at its rate, a busy source's requests never wait ahead of another source's in the client's limiter", async () => {
  const emulator = await startTestEmulator();
  const shared = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, requestsPerMinute: 120, concurrency: 8 });
  try {
    const budget = new FairBudget(8);
    const big = budget.clientFor('big', shared, noEvents);
    const small = budget.clientFor('small', shared, noEvents);
    const stop = new AbortController();
    const list = (client: ApiClient, pageSize: number) =>
      client.request({
        operation: 'list',
        method: 'GET',
        path: '/api/v1/catalog',
        query: { pageSize },
        signal: stop.signal,
      });
    const bigDone = Promise.allSettled(Array.from({ length: 60 }, () => list(big, 1)));
    // The client's burst (a quarter of a minute's rate: 30) is spent; requests now go at 2 a second.
    while (emulator.requests.length < 32) await new Promise((r) => setTimeout(r, 20));
    const queuedAt = emulator.requests.length;
    await list(small, 2);
    stop.abort();
    await bigDone;
    const arrived = emulator.requests.slice(queuedAt);
    const smallAt = arrived.findIndex((r) => r.query === 'pageSize=2');
    // At most the one request the limiter was already spacing out went first (8 would, queued in the limiter).
    expect(smallAt).toBeGreaterThanOrEqual(0);
    expect(smallAt).toBeLessThanOrEqual(1);
  } finally {
    await shared.close();
    await emulator.stop();
  }
}, 30_000);

it("each source's stats count its own requests, not the other sources' of the shared client", async () => {
  const budget = new FairBudget(2);
  const shared = fakeShared(budget.events);
  const a = budget.clientFor('a', shared.client, noEvents);
  const b = budget.clientFor('b', shared.client, noEvents);
  const write = { operation: 'w', method: 'POST' as const, path: '/api/v1/open-api' };
  const done = Promise.all([a.request(get('a1')), a.request(write), b.request(get('b1')), a.request(get('a2'))]);
  for (let i = 0; i < 6; i += 1) await shared.finishOne();
  await done;
  expect(a.stats().requestsSent).toBe(3);
  expect(a.stats().requestsByMethod).toMatchObject({ GET: 2, POST: 1 });
  expect(b.stats().requestsSent).toBe(1);
  expect(b.stats().requestsByMethod).toMatchObject({ GET: 1, POST: 0 });
});

it('listens once to a signal that hundreds of waiting requests share, and cancels them all when it aborts', async () => {
  const budget = new FairBudget(1);
  const shared = fakeShared(budget.events);
  const client = budget.clientFor('a', shared.client, noEvents);
  const run = new AbortController();
  const all = Array.from({ length: 200 }, (_, i) =>
    client.request({ ...get(`r${i}`), signal: run.signal }).then(
      () => 'sent',
      (error: Error) => error.message,
    ),
  );
  await new Promise((r) => setImmediate(r));
  expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
  run.abort();
  await shared.finishOne();
  const said = await Promise.all(all);
  expect(said[0]).toBe('sent');
  expect(said.slice(1).every((m) => m === `r${said.indexOf(m)} cancelled before it was sent`)).toBe(true);
  expect(shared.sent).toEqual(['r0']);
  expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
});
