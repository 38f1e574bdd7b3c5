/**
 * A client owns its resources: after `close()` nothing of it is left in the process (sockets,
 * timers), and closing cancels what was waiting. The server is a real one on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { EngineEvent } from '../../../src/engine/context.js';
import { CancelledError } from '../../../src/core/errors.js';
import { sendJson, startServer, type TestServer } from '../../api/helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Active handles of the kinds a client could leak, by kind. */
const handles = (): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) {
    if (/TCP|Timeout|Immediate|Pipe/i.test(kind)) counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
};

/** Handles of each kind beyond those of `baseline`. */
const beyond = (now: Record<string, number>, baseline: Record<string, number>): Record<string, number> =>
  Object.fromEntries(
    Object.entries(now)
      .map(([kind, n]): [string, number] => [kind, n - (baseline[kind] ?? 0)])
      .filter(([, extra]) => extra > 0),
  );

/** Handles left beyond `baseline` once sockets had time to close (they close asynchronously), at most ~2 s. */
const leftBeyond = async (baseline: Record<string, number>): Promise<Record<string, number>> => {
  let extra = beyond(handles(), baseline);
  for (let i = 0; i < 100 && Object.keys(extra).length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    extra = beyond(handles(), baseline);
  }
  return extra;
};

describe('client resources', () => {
  it('200 clients that each made requests and were closed leave no socket or timer behind', async () => {
    server = await startServer((req, res) => sendJson(res, 200, { path: req.url }));
    // The server's own listening handle is part of the baseline.
    const baseline = handles();
    for (let i = 0; i < 200; i++) {
      const client = createApiClient({ baseUrl: server.url, apiKey: 'leak-check-key-0123456789' });
      await Promise.all([
        client.request({ operation: 'read a', method: 'GET', path: `/api/v1/a/${i}` }),
        client.request({ operation: 'read b', method: 'PUT', path: `/api/v1/b/${i}`, body: { i } }),
      ]);
      await client.close();
    }
    expect(server.received).toHaveLength(400);
    expect(await leftBeyond(baseline)).toEqual({});
  }, 60_000);

  it('close() cancels requests waiting out a Retry-After pause at once, with a CancelledError', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, 429, { title: 'Too Many Requests' }, { 'retry-after': '120' }),
    );
    const baseline = handles();
    const events: EngineEvent[] = [];
    const client = createApiClient({
      baseUrl: server.url,
      apiKey: 'close-check-key-0123456789',
      events: { emit: (e) => events.push(e) },
    });
    const waiting = client.request({ operation: 'list things', method: 'GET', path: '/api/v1/things' });
    const outcome = waiting.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    while (!events.some((e) => e.type === 'ratelimit.paused')) await new Promise((r) => setTimeout(r, 5));
    const started = performance.now();
    await client.close();
    const error = await outcome;
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(CancelledError);
    expect(error).toMatchObject({ code: 'CANCELLED', operation: 'list things' });
    expect(events).toContainEqual({ type: 'ratelimit.paused', ms: 120_000 });
    expect(await leftBeyond(baseline)).toEqual({});
  });
});
