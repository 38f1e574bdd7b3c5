/**
 * A hung server: each attempt's waiting lines say which attempt it is and how many there may be,
 * so the retry's "Waiting 5 s" does not read as the first wait starting over.
 */
import { afterEach, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { createReadProgress } from '../../src/cli/progress.js';
import { systemClock } from '../../src/engine/context.js';
import type { EngineEvent } from '../../src/engine/context.js';
import { capture } from '../cli/run.js';
import { sendJson, startServer, type TestServer } from './helpers.js';

let server: TestServer | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  await server?.close();
});

it('a timed-out attempt’s retry is reported as attempt 2 of 5', async () => {
  // The first attempt is never answered; the second is, after a while.
  server = await startServer((_req, res, index) => {
    if (index > 0) setTimeout(() => sendJson(res, 200, { ok: true }), 300);
  });
  const out = capture();
  const progress = createReadProgress({ stream: out.stream, clock: systemClock });
  progress.start(() => ({ requestsSent: 0 }));
  const events: EngineEvent[] = [];
  const client = createApiClient({
    baseUrl: server.url,
    apiKey: 'waiting-test-key-0123456789',
    events: {
      emit: (e) => {
        events.push(e);
        progress.emit(e);
      },
    },
    timeoutMs: 1_000,
    waitingNoticeMs: 100,
    waitingEveryMs: 10_000,
    random: () => 0,
  });
  close = () => client.close();
  await client.request({ operation: 'list entity types', method: 'GET', path: '/api/v1/catalog/definitions' });
  progress.finish();
  const waiting = events.filter((e) => e.type === 'request.waiting');
  expect(waiting.map((e) => [e.attempt, e.maxAttempts])).toEqual([
    [1, 5],
    [2, 5],
  ]);
  const host = new URL(server.url).host;
  expect(out.text()).toContain(`for ${host} to answer GET list entity types (attempt 2 of 5)…`);
});
