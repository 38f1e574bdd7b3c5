/**
 * Requests a client starts inside an open `Retry-After` window, counted over a whole `apply`
 * against a fixed-window limiter (the emulator's `windowed429`: every 5th request is refused with
 * `Retry-After: 1`, and so is every request that arrives while that window is open). The emulator
 * runs in a process of its own, so a busy client cannot delay the clock that stamps arrivals.
 *
 * The emulator's log says which requests arrived inside a window (it refused them as `window-429`)
 * and, through an `x-request-id` header the test's dispatcher adds, which request of the client each
 * one was. The dispatcher also records the order in which the client sent each request and received
 * each answer's headers. A request that arrived more than 50 ms after the 429 that opened its window
 * was answered is counted only if the client sent it after it had received that 429: one sent before
 * was already in flight, however late a loaded machine delivered it. Both orders are the client
 * process's own, so the count does not depend on load; the plain server-side count (every arrival
 * more than 50 ms into a window, in flight or not) is printed beside it. The apply is of part of the
 * examples (about 30 requests, 5 or 6 windows: reads, the lease and writes each meet one) as the
 * client slows down after each 429 and the whole repository takes two minutes. A naive client that
 * ignores `Retry-After`, and a log made up for the purpose, show the count finds what it should.
 */
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, type Dispatcher, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../../src/core/outcome.js';
import type { RequestLogEntry } from '../../../packages/emulator/src/server.js';
import { apiClientFor } from '../../../src/engine/api-client.js';
import { resolveConfig } from '../../../src/engine/config.js';
import { NO_EVENTS, systemClock } from '../../../src/engine/context.js';
import { reconcile } from '../../../src/engine/reconcile.js';
import { API_KEY, removeDir, tempDir } from '../../cli/run.js';
import { type EmulatorProcess, startEmulatorProcess } from '../../api/emulator-process.js';

const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'examples');
/** An entity type, a team, an entity of that type the team owns and a catalog page of the type. */
const MANIFESTS = [
  'cortex-sync.yaml',
  '.cortex/entity-types/database.yaml',
  '.cortex/teams/payments-team.yaml',
  '.cortex/catalog/ledger-db.yaml',
  '.cortex/catalog-pages/databases.yaml',
];
/** Time a request sent before the 429 reached the client may take to arrive after it was answered. */
const IN_FLIGHT_ALLOWANCE_MS = 50;

/** A moment in the client's process: its clock time and its place in one sequence of events. */
interface ClientMoment {
  at: number;
  seq: number;
}
/** When the client sent a request, and when the headers of its answer reached it. */
interface ClientRecord {
  sent: ClientMoment;
  received?: ClientMoment;
}

/**
 * A keep-alive pool like the client's own that gives each request an `x-request-id` and records,
 * by that id, when the request was sent and when its answer's headers arrived.
 */
const wireRecorder = (): { dispatcher: Dispatcher; records: Map<string, ClientRecord>; close: () => Promise<void> } => {
  const agent = new Agent({ connections: 16, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
  const records = new Map<string, ClientRecord>();
  let seq = 0;
  const moment = (): ClientMoment => ({ at: Date.now(), seq: ++seq });
  const record: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
    const headers = opts.headers;
    if (headers != null && (Array.isArray(headers) || Symbol.iterator in headers)) {
      throw new Error('the recorder takes headers as an object');
    }
    const id = `r${records.size + 1}`;
    const entry: ClientRecord = { sent: moment() };
    records.set(id, entry);
    return dispatch(
      { ...opts, headers: { ...headers, 'x-request-id': id } },
      {
        onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
        onRequestUpgrade: (controller, status, resHeaders, socket) =>
          handler.onRequestUpgrade?.(controller, status, resHeaders, socket),
        onResponseStart: (controller, status, resHeaders, message) => {
          entry.received ??= moment();
          handler.onResponseStart?.(controller, status, resHeaders, message);
        },
        onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
        onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
        onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
      },
    );
  };
  return { dispatcher: agent.compose(record), records, close: () => agent.close() };
};

interface WindowCount {
  /** Windows opened (requests refused as `forced-429`). */
  opened: number;
  /** Requests that arrived inside a window more than the allowance after its 429 was answered. */
  serverSide: number;
  /** Those of them the client sent after it had received that 429. */
  startedInside: string[];
}

/**
 * The emulator's log read against the client's records. The log lists a 429 as soon as it is
 * decided, so a `window-429` belongs to the last `forced-429` before it. A request the client has
 * no record of cannot be excused.
 */
const countInsideWindows = (
  log: readonly RequestLogEntry[],
  records: ReadonlyMap<string, ClientRecord>,
  allowanceMs: number,
): WindowCount => {
  const recordOf = (r: RequestLogEntry): ClientRecord | undefined =>
    r.requestId === undefined ? undefined : records.get(r.requestId);
  let opener: RequestLogEntry | undefined;
  let opened = 0;
  let serverSide = 0;
  const startedInside: string[] = [];
  for (const r of log) {
    if (r.fault === 'forced-429') {
      opener = r;
      opened++;
      continue;
    }
    if (r.fault !== 'window-429' || opener === undefined) continue;
    const arrivedAfter = r.ts - (opener.ts + opener.durationMs);
    if (arrivedAfter <= allowanceMs) continue;
    serverSide++;
    const sent = recordOf(r)?.sent;
    const received = recordOf(opener)?.received;
    if (sent !== undefined && received !== undefined && sent.seq < received.seq) continue;
    const when =
      sent !== undefined && received !== undefined
        ? `sent ${sent.at - received.at} ms after the client received the 429`
        : 'not recorded by the client';
    startedInside.push(
      `${r.method} ${r.path}: arrived ${Math.round(arrivedAfter)} ms after the 429 was answered, ${when}`,
    );
  }
  return { opened, serverSide, startedInside };
};

describe('requests started inside an open Retry-After window', () => {
  let emulator: EmulatorProcess;
  let work: string;
  let wire: ReturnType<typeof wireRecorder>;
  beforeEach(async () => {
    work = await tempDir();
    emulator = await startEmulatorProcess({ apiKey: API_KEY, faults: { windowed429: 5 }, outDir: work });
    wire = wireRecorder();
  });
  afterEach(async () => {
    await wire.close();
    await emulator.stop();
    await removeDir(work);
  });

  it('an apply starts none', async () => {
    const dir = join(work, 'examples');
    for (const file of MANIFESTS) await cp(join(EXAMPLES, file), join(dir, file));
    const { config, diagnostics } = await resolveConfig(
      { dir },
      { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: API_KEY },
      dir,
    );
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    // The client the CLI builds from this configuration, its requests through the recorder.
    const client = apiClientFor(config, API_KEY, { dispatcher: wire.dispatcher });
    const started = Date.now();
    const settled = await reconcile(
      { config, mode: 'apply' },
      { client, clock: systemClock, signal: new AbortController().signal, events: NO_EVENTS },
    )
      .then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      )
      .finally(() => client.close());
    const took = Date.now() - started;

    const log = await emulator.requests();
    const count = countInsideWindows(log, wire.records, IN_FLIGHT_ALLOWANCE_MS);
    console.log(
      `apply: ${log.length} requests in ${took} ms, ${count.opened} windows; ${count.serverSide} arrived ` +
        `more than ${IN_FLIGHT_ALLOWANCE_MS} ms into a window, ${count.startedInside.length} of them sent after ` +
        `the client had received the 429`,
    );
    expect(count.startedInside).toEqual([]);
    expect(count.opened).toBeGreaterThanOrEqual(4);
    if ('error' in settled) throw settled.error;
    expect(settled.result.run.summaryLine).toMatch(/^Apply complete/);
    expect(exitCodeOf(settled.result.run)).toBe(0);
  }, 60_000);

  it('a client that ignores Retry-After is caught', async () => {
    // One request after another, refused or not, until 300 ms after the first 429 came back.
    let refusedAt: number | undefined;
    while (refusedAt === undefined || Date.now() - refusedAt < 300) {
      const res = await request(`${emulator.url}/api/v1/catalog`, {
        headers: { authorization: `Bearer ${API_KEY}` },
        dispatcher: wire.dispatcher,
      });
      await res.body.dump();
      if (res.statusCode === 429) refusedAt ??= Date.now();
    }
    const count = countInsideWindows(await emulator.requests(), wire.records, IN_FLIGHT_ALLOWANCE_MS);
    expect(count.opened).toBe(1);
    expect(count.startedInside.length).toBeGreaterThan(0);
    expect(count.startedInside).toHaveLength(count.serverSide);
  });
});

it('a request sent before the client received the 429 is excused, one sent after it is not', () => {
  const entry = (requestId: string, ts: number, fault?: RequestLogEntry['fault']): RequestLogEntry => ({
    method: 'GET',
    path: `/api/v1/${requestId}`,
    query: '',
    status: fault ? 429 : 200,
    durationMs: 1,
    ts,
    requestId,
    ...(fault ? { fault } : {}),
  });
  // The 429 is answered at 1001 and reaches the client at 1080 (a loaded machine).
  const log = [
    entry('opener', 1000, 'forced-429'),
    entry('early', 1040, 'window-429'),
    entry('in-flight', 1150, 'window-429'),
    entry('after', 1150, 'window-429'),
    entry('unknown', 1200, 'window-429'),
    entry('next-window', 2100),
  ];
  const records = new Map<string, ClientRecord>([
    ['opener', { sent: { at: 999, seq: 1 }, received: { at: 1080, seq: 4 } }],
    ['early', { sent: { at: 1030, seq: 2 } }],
    ['in-flight', { sent: { at: 1070, seq: 3 } }],
    ['after', { sent: { at: 1090, seq: 5 } }],
    ['next-window', { sent: { at: 2090, seq: 6 } }],
  ]);
  expect(countInsideWindows(log, records, 50)).toEqual({
    opened: 1,
    serverSide: 3,
    startedInside: [
      'GET /api/v1/after: arrived 149 ms after the 429 was answered, sent 10 ms after the client received the 429',
      'GET /api/v1/unknown: arrived 199 ms after the 429 was answered, not recorded by the client',
    ],
  });
});
