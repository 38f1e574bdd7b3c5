/**
 * The apply lease with clocks that disagree: expiry is judged by the server's clock (the API's
 * `Date` header) or by observation (a record unchanged for a ttl is free), never by the waiter's
 * wall clock; a holder killed with its clock a year ahead blocks nobody for longer than a ttl; the
 * operator can break a lease; a waiting apply says at once who holds it and then every 10 s.
 * Fake clocks drive both sides; the emulator's clock (its `Date` header) is set by the test.
 */
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClient, ApiRequest, ApiResponse } from '../../src/api/types.js';
import { emptyClientStats } from '../../src/api/types.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { type Clock, type EngineEvent, systemClock } from '../../src/engine/context.js';
import { INVENTORY_ENTITY_TYPE } from '../../src/kinds/entity/records/inventory.js';
import {
  acquireLease,
  applyUnderLease,
  DEFAULT_LEASE_SETTINGS,
  LeaseHeldError,
  LeaseLostError,
  type LeaseSettings,
  leaseTag,
  readLease,
} from '../../src/engine/lease.js';
import { leaseEventLine } from '../../src/engine/lease-events.js';
import { formatLeaseTime, judgeLease, serverClock } from '../../src/engine/lease-judge.js';
import { API_KEY, cli, removeDir, serviceYaml, tempDir, writeFiles } from '../cli/run.js';

const SOURCE = 'github.com/acme/catalog';
const YEAR_MS = 365 * 24 * 3600 * 1000;
const T0 = Date.UTC(2030, 0, 1);

/**
 * Virtual time shared by the test's server and the runs. Every sleep is queued with its wake-up
 * time; one at a time, in wake-up order and a real millisecond apart, time moves on to the next
 * wake-up (so two sleepers overlap as they would in real time). `now()` is a wall clock a test may
 * offset or jump; `monotonic()` never jumps.
 */
const virtualTime = (start = T0) => {
  let t = start;
  const queue: { at: number; wake: () => void }[] = [];
  let stepping = false;
  const step = () => {
    queue.sort((a, b) => a.at - b.at);
    const next = queue.shift();
    if (next) {
      t = Math.max(t, next.at);
      next.wake();
    }
    stepping = queue.length > 0;
    if (stepping) setTimeout(step, 1);
  };
  const make = (wallOffset: () => number): Clock => ({
    now: () => t + wallOffset(),
    monotonic: () => t - start,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        const entry = {
          at: t + ms,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          queue.splice(queue.indexOf(entry), 1);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(entry);
        if (!stepping) {
          stepping = true;
          setTimeout(step, 1);
        }
      }),
  });
  return { server: () => t, clock: make };
};

/** The lease record as a hand (or a crashed holder) left it in the workspace. */
const leaseDescriptor = (lease: Record<string, unknown>): string =>
  stringify({
    openapi: '3.0.1',
    info: {
      title: 'lease',
      'x-cortex-tag': leaseTag(SOURCE),
      'x-cortex-type': INVENTORY_ENTITY_TYPE,
      'x-cortex-definition': { lease: { source: SOURCE, pending: [], ...lease } },
    },
  });

describe('judgeLease (pure)', () => {
  const base = { me: 'me', ttlMs: 60_000, handoffMs: 10_000 };
  const seen = (expiresAt: number, holder = 'other') => ({ holder, expiresAt, fingerprint: `${holder}${expiresAt}` });

  it('judges expiry by the server, never by the waiter: a waiter 120 s ahead still sees the lease held', () => {
    const server = T0;
    const lease = seen(server + 60_000); // written by a holder in server time
    expect(judgeLease({ ...base, lease, serverNow: server, unchangedForMs: 0 })).toMatchObject({
      state: 'held',
      untilBelieved: true,
    });
    expect(judgeLease({ ...base, lease, serverNow: server + 62_000, unchangedForMs: 0 })).toEqual({
      state: 'free',
      why: 'expired',
    });
  });

  it('a record seen unchanged for a ttl is free whatever it claims: a year ahead, NaN, 10^15, 10^16, unreadable', () => {
    for (const expiresAt of [T0 + YEAR_MS, NaN, 1e15, 1e16, Number.POSITIVE_INFINITY]) {
      const lease = seen(expiresAt);
      expect(judgeLease({ ...base, lease, serverNow: T0, unchangedForMs: 59_999 }).state, String(expiresAt)).toBe(
        'held',
      );
      expect(judgeLease({ ...base, lease, serverNow: T0, unchangedForMs: 60_000 }).state, String(expiresAt)).toBe(
        'free',
      );
      expect(judgeLease({ ...base, lease, serverNow: T0, unchangedForMs: 0 })).toMatchObject({ untilBelieved: false });
    }
    const unreadable = { holder: '?', expiresAt: NaN, fingerprint: 'x', unreadable: true };
    expect(judgeLease({ ...base, lease: unreadable, serverNow: T0, unchangedForMs: 1 }).state).toBe('held');
    expect(judgeLease({ ...base, lease: unreadable, serverNow: T0, unchangedForMs: 60_000 })).toEqual({
      state: 'free',
      why: 'unreadable',
    });
  });

  it('a lease let go for waiting applies is theirs first: others wait until it has been seen unchanged for the handoff, whatever the clocks', () => {
    const released = { ...seen(0), waiting: ['cli run aaaa1111', 'cli run bbbb2222'] };
    for (const serverNow of [undefined, T0, T0 + YEAR_MS, T0 - YEAR_MS]) {
      expect(judgeLease({ ...base, me: 'cli run bbbb2222', lease: released, serverNow, unchangedForMs: 0 })).toEqual({
        state: 'free',
        why: 'released',
      });
      expect(
        judgeLease({ ...base, me: 'watcher run cccc3333', lease: released, serverNow, unchangedForMs: 9_999 }),
      ).toEqual({
        state: 'held',
        untilBelieved: false,
        staleInMs: 1,
        reservedFor: 'cli run aaaa1111',
      });
      expect(
        judgeLease({ ...base, me: 'watcher run cccc3333', lease: released, serverNow, unchangedForMs: 10_000 }),
      ).toEqual({
        state: 'free',
        why: 'released',
      });
    }
  });

  it('without a Date header only observation frees a lease; a released one is free at once', () => {
    expect(judgeLease({ ...base, lease: seen(1), serverNow: undefined, unchangedForMs: 0 }).state).toBe('held');
    expect(judgeLease({ ...base, lease: seen(0), serverNow: undefined, unchangedForMs: 0 })).toEqual({
      state: 'free',
      why: 'released',
    });
  });

  it('the server clock follows Date headers on the monotonic clock; a wall-clock jump changes nothing', () => {
    let mono = 1_000;
    let wall = 5;
    const server = serverClock(
      () => mono,
      () => wall,
    );
    expect(server.now()).toBe(5); // no Date yet: the run's own clock
    server.observe(new Date(T0).toUTCString());
    mono += 2_500;
    wall -= 3_600_000;
    expect(server.now()).toBe(T0 + 2_500);
    server.observe('not a date');
    expect(server.now()).toBe(T0 + 2_500);
  });

  it('a holder name a record holds is printed on one line, escaped and cut', () => {
    const line = leaseEventLine({
      type: 'lease.waiting',
      sourceId: SOURCE,
      holder: `evil\n::error::x\u001b[2K${'y'.repeat(10_000)}`,
      untilBelieved: true,
      until: T0,
      waitedMs: 0,
      waitLimitMs: 120_000,
    });
    expect(line).not.toContain('\n');
    expect(line).not.toContain('\u001b');
    expect(line).toContain('evil\\n::error::x\\x1b[2K');
    expect(line?.length).toBeLessThan(400);
  });

  it('formats any expiry without throwing (10^16 is past the last date JavaScript can print)', () => {
    expect(formatLeaseTime(1e16)).toBe('10000000000000000');
    expect(formatLeaseTime(NaN)).toBe('NaN');
    expect(formatLeaseTime(T0)).toBe('2030-01-01T00:00:00.000Z');
  });
});

/**
 * An in-memory workspace holding lease records, answering with the `Date` of the virtual server
 * time; each answer takes 5 ms of that time (so the clock cannot move past a request in flight).
 */
const leaseApi = (time: ReturnType<typeof virtualTime>): ApiClient & { records: Map<string, unknown> } => {
  const records = new Map<string, unknown>();
  const serverNow = time.server;
  const request = async <T>(req: ApiRequest): Promise<ApiResponse<T>> => {
    await time.clock(() => 0).sleep(5);
    const headers = { date: new Date(serverNow()).toUTCString() };
    const answer = (status: number, body: unknown) => ({
      status,
      headers,
      body: body as T,
      attempts: 1,
      durationMs: 1,
    });
    if (req.method === 'GET' && req.path.startsWith('/api/v1/catalog/definitions/')) return answer(200, {});
    if (req.method === 'GET') {
      const tag = decodeURIComponent(req.path.split('/')[4] ?? '');
      return records.has(tag) ? answer(200, records.get(tag)) : answer(404, {});
    }
    const { parse } = await import('yaml');
    const doc = parse(String(req.body)) as { info: { 'x-cortex-tag': string } };
    records.set(doc.info['x-cortex-tag'], doc);
    return answer(200, {});
  };
  return { records, request, paginate: async () => [], close: async () => {}, stats: emptyClientStats };
};

const settings = (holder: string, extra: Partial<LeaseSettings> = {}): LeaseSettings => ({
  ...DEFAULT_LEASE_SETTINGS,
  holder,
  ...extra,
});

describe('acquireLease with clocks that disagree', () => {
  it('a second apply whose clock runs 120 s ahead waits while the first renews, and says who holds it at once', async () => {
    const time = virtualTime();
    const api = leaseApi(time);
    const first = await acquireLease(
      { client: api, clock: time.clock(() => 0), signal: new AbortController().signal },
      SOURCE,
      settings('runner-1 run aaaa1111'),
    );
    const events: EngineEvent[] = [];
    const second = acquireLease(
      {
        client: api,
        clock: time.clock(() => 120_000),
        signal: new AbortController().signal,
        events: { emit: (e) => events.push(e) },
      },
      SOURCE,
      settings('runner-2 run bbbb2222', { waitMs: 50_000 }),
    );
    await expect(second).rejects.toBeInstanceOf(LeaseHeldError);
    expect(events[0]).toMatchObject({ type: 'lease.waiting', holder: 'runner-1 run aaaa1111' });
    expect((events[0] as { waitedMs: number }).waitedMs).toBeLessThan(1_000); // said at once
    const waited = events.filter((e) => e.type === 'lease.waiting').map((e) => (e as { waitedMs: number }).waitedMs);
    for (let i = 1; i < waited.length; i++) expect((waited[i] ?? 0) - (waited[i - 1] ?? 0)).toBeLessThanOrEqual(10_000);
    expect(waited.at(-1)).toBeGreaterThanOrEqual(40_000);
    await first.release();
  });

  it('a holder whose clock runs 120 s behind keeps its lease: its expiry is written in the server’s time', async () => {
    const time = virtualTime();
    const api = leaseApi(time);
    const holder = await acquireLease(
      { client: api, clock: time.clock(() => -120_000), signal: new AbortController().signal },
      SOURCE,
      settings('behind run 77778888'),
    );
    const waiting = acquireLease(
      { client: api, clock: time.clock(() => 0), signal: new AbortController().signal },
      SOURCE,
      settings('on-time run 9999aaaa', { waitMs: 90_000 }),
    );
    await expect(waiting).rejects.toBeInstanceOf(LeaseHeldError);
    expect((await readLease(api, SOURCE))?.holder).toBe('behind run 77778888');
    await holder.release();
  });

  it('a waiter whose wall clock jumps (back an hour, then a day ahead) waits just the same', async () => {
    const time = virtualTime();
    const api = leaseApi(time);
    const holder = await acquireLease(
      { client: api, clock: time.clock(() => 0), signal: new AbortController().signal },
      SOURCE,
      settings('holder run cccc3333'),
    );
    let jump = 0;
    const jumpy = time.clock(() => jump);
    const waiting = acquireLease(
      {
        client: api,
        clock: {
          ...jumpy,
          sleep: async (ms, s) => {
            jump = jump === 0 ? -3_600_000 : 86_400_000;
            await jumpy.sleep(ms, s);
          },
        },
        signal: new AbortController().signal,
      },
      SOURCE,
      settings('waiter run dddd4444', { waitMs: 30_000 }),
    );
    await expect(waiting).rejects.toBeInstanceOf(LeaseHeldError);
    await holder.release();
  });

  it('a holder killed with its clock a year ahead blocks a waiter for one ttl, not a year', async () => {
    const time = virtualTime();
    const api = leaseApi(time);
    const crashed = new AbortController();
    await acquireLease(
      { client: api, clock: time.clock(() => YEAR_MS), signal: crashed.signal },
      SOURCE,
      settings('far-future run eeee5555'),
    );
    crashed.abort(); // killed: no renewal, no release
    // Its expiry was written in the server's time (the Date header), so its clock does not matter.
    const events: EngineEvent[] = [];
    const started = time.server();
    const next = await acquireLease(
      {
        client: api,
        clock: time.clock(() => 0),
        signal: new AbortController().signal,
        events: { emit: (e) => events.push(e) },
      },
      SOURCE,
      settings('next run ffff6666'),
    );
    expect(time.server() - started).toBeLessThan(70_000);
    expect(events.at(-1)).toMatchObject({
      type: 'lease.taken',
      from: { holder: 'far-future run eeee5555' },
    });
    expect((await readLease(api, SOURCE))?.holder).toBe('next run ffff6666');
    await next.release();
  });

  it('a pending create recorded by a holder a year ahead is waited for at most one window', async () => {
    const time = virtualTime();
    const api = leaseApi(time);
    api.records.set(leaseTag(SOURCE), {
      info: {
        'x-cortex-definition': {
          lease: {
            source: SOURCE,
            holder: 'gone',
            expiresAt: 0,
            pending: [{ key: 'initiative/Q3', since: T0 + YEAR_MS }],
          },
        },
      },
    });
    const held = await acquireLease(
      { client: api, clock: time.clock(() => 0), signal: new AbortController().signal },
      SOURCE,
      settings('me'),
    );
    expect(held.pending.since('initiative/Q3')).toBeLessThanOrEqual(held.pending.now());
    await held.release();
  });

  it('--break-lease takes a live lease at once and says whose; the holder notices at its next renewal and stops', async () => {
    const time = virtualTime();
    const api = leaseApi(time);
    const holderEvents: EngineEvent[] = [];
    const ttl = { ttlMs: 600, pollMs: 50, settleMs: 10 };
    let bodyStopped: unknown;
    let applying!: () => void;
    const holding = new Promise<void>((resolve) => (applying = resolve));
    const running = applyUnderLease(
      { mode: 'apply', sourceId: SOURCE, settings: settings('alive run 11112222', ttl) },
      {
        client: api,
        clock: systemClock,
        signal: new AbortController().signal,
        events: { emit: (e) => holderEvents.push(e) },
      },
      () => true,
      async (mode, _pending, lost) => {
        if (mode === 'plan') return 'planned';
        applying();
        // A long apply: it stops starting changes once the lease is lost.
        await new Promise<void>((resolve) => {
          lost?.addEventListener('abort', () => {
            bodyStopped = lost.reason;
            resolve();
          });
          setTimeout(resolve, 5_000);
        });
        return 'applied';
      },
    );
    await holding; // the first apply holds the lease and is applying
    const breakerEvents: EngineEvent[] = [];
    const breaker = await acquireLease(
      {
        client: api,
        clock: time.clock(() => 0),
        signal: new AbortController().signal,
        events: { emit: (e) => breakerEvents.push(e) },
      },
      SOURCE,
      settings('operator run 33334444', { breakLease: true, ...ttl }),
    );
    expect(breakerEvents).toEqual([
      expect.objectContaining({
        type: 'lease.taken',
        from: expect.objectContaining({ holder: 'alive run 11112222', why: 'broken' }),
      }),
    ]);
    await expect(running).rejects.toBeInstanceOf(LeaseLostError);
    expect(bodyStopped).toBeInstanceOf(LeaseLostError);
    expect(holderEvents).toContainEqual({ type: 'lease.lost', sourceId: SOURCE, holder: 'operator run 33334444' });
    // The broken holder's release did not overwrite the breaker's lease.
    expect((await readLease(api, SOURCE))?.holder).toBe('operator run 33334444');
    expect((await readLease(api, SOURCE))?.expiresAt).toBeGreaterThan(0);
    await breaker.release();
  });
});

describe('the CLI waiting for a lease (emulator)', () => {
  let emulator: RunningEmulator;
  let dir: string;
  let time: ReturnType<typeof virtualTime>;
  beforeEach(async () => {
    time = virtualTime();
    emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0, now: time.server });
    dir = await tempDir();
    await writeFiles(dir, { 'cortex-sync.yaml': `sourceId: ${SOURCE}\n`, 'cortex.yaml': serviceYaml('svc-a') });
  });
  afterEach(async () => {
    await emulator.stop();
    await removeDir(dir);
  });

  const putLease = async (lease: Record<string, unknown>) => {
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    // The record type first (an apply creates it), then the record as a crashed holder left it.
    await client.request({
      operation: 'create type',
      method: 'POST',
      path: '/api/v1/catalog/definitions',
      body: { type: INVENTORY_ENTITY_TYPE, name: 'x', schema: { type: 'object' } },
    });
    await client.request({
      operation: 'put lease',
      method: 'POST',
      path: '/api/v1/open-api',
      body: leaseDescriptor(lease),
      contentType: 'application/openapi;charset=UTF-8',
    });
    await client.close();
  };

  it('a holder killed -9 with a clock a year ahead: the next apply says at once who holds it, then every 10 s, and takes it after one ttl', async () => {
    await putLease({
      holder: 'ci-runner-9 run 0badc0de',
      expiresAt: T0 + YEAR_MS,
      since: T0 + YEAR_MS - 5_000,
      beat: 7,
    });
    const run = await cli(['apply'], { emulator, cwd: dir, clock: time.clock(() => 0) });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split('\n');
    expect(lines[0]).toMatch(
      /^Waiting for the apply lease of source `github\.com\/acme\/catalog`: held by ci-runner-9 run 0badc0de since 2030-12-31T23:59:55\.000Z, claiming until 2031-01-01T00:00:00\.000Z \(not believed/,
    );
    const waited = [...run.stderr.matchAll(/waited (\d+) s of 120 s/g)].map((m) => Number(m[1]));
    expect(waited[0]).toBe(0);
    for (let i = 1; i < waited.length; i++) expect((waited[i] ?? 0) - (waited[i - 1] ?? 0)).toBeLessThanOrEqual(10);
    expect(waited.length).toBeGreaterThanOrEqual(6);
    expect(run.stderr).toMatch(
      /Took the apply lease .* after 6\d s: the lease of ci-runner-9 run 0badc0de since .* was not renewed/,
    );
  });

  it.each([
    ['NaN', '.nan'],
    ['10^15', 1e15],
    ['10^16', 1e16],
    ['a string', 'tomorrow'],
  ])('a lease record with expiry %s is taken after one ttl, and nothing crashes', async (_name, expiresAt) => {
    await putLease({ holder: 'odd\u001b[2Kholder\nline', expiresAt });
    const run = await cli(['apply'], { emulator, cwd: dir, clock: time.clock(() => 0) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^(Still )?[Ww]aiting for the apply lease/m);
    expect(run.stderr).not.toContain('\u001b');
  });

  it('--break-lease takes a live lease without waiting and prints whose it broke', async () => {
    await putLease({ holder: 'ci-runner-7 run deadbeef', expiresAt: T0 + 50_000, since: T0 - 10_000 });
    const run = await cli(['apply', '--break-lease'], { emulator, cwd: dir, clock: time.clock(() => 0) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /Broke the apply lease of source `github\.com\/acme\/catalog` held by ci-runner-7 run deadbeef since 2029-12-31T23:59:50\.000Z, until 2030-01-01T00:00:50\.000Z \(--break-lease\)/,
    );
    expect(run.stderr).not.toMatch(/Waiting for/);
  });
});

describe('the CLI against a live holder, real time', () => {
  let emulator: RunningEmulator;
  let dir: string;
  beforeEach(async () => {
    emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
    dir = await tempDir();
    await writeFiles(dir, { 'cortex-sync.yaml': `sourceId: ${SOURCE}\n`, 'cortex.yaml': serviceYaml('svc-a') });
  });
  afterEach(async () => {
    await emulator.stop();
    await removeDir(dir);
  });

  it('an apply whose clock runs 120 s ahead does not take a lease its holder is renewing; it waits, then names the holder', async () => {
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    const held = await acquireLease({ client, clock: systemClock, signal: new AbortController().signal }, SOURCE, {
      ...DEFAULT_LEASE_SETTINGS,
      holder: 'ci-runner-7 run deadbeef',
      settleMs: 10,
    });
    const ahead: Clock = { ...systemClock, now: () => Date.now() + 120_000 };
    const from = emulator.requests.length;
    const run = await cli(['apply'], { emulator, cwd: dir, clock: ahead, env: { CORTEX_SYNC_LEASE_WAIT: '2' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^Waiting for the apply lease of source .*: held by ci-runner-7 run deadbeef since /m);
    expect(run.stderr).toMatch(/another apply of this source is running \(held by ci-runner-7 run deadbeef/);
    const writes = emulator.requests.slice(from).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));
    expect(writes).toEqual([]);
    await held.release();
    await client.close();
  });
});
