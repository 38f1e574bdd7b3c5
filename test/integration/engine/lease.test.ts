/**
 * One apply per source at a time: two applies started together against a workspace with 100 ms
 * latency create one Initiative between them; an apply that cannot get the lease in time exits 1
 * naming the holder; a crashed holder's lease expires. The CLI runs in-process against the
 * emulator on 127.0.0.1.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { RunningEmulator } from '../../../packages/emulator/src/server.js';
import { startEmulator } from '../../../packages/emulator/src/server.js';
import { systemClock } from '../../../src/engine/context.js';
import {
  acquireLease,
  DEFAULT_LEASE_SETTINGS,
  LeaseHeldError,
  readLease,
  writeLease,
} from '../../../src/engine/lease.js';
import { API_KEY, cli, removeDir, tempDir, writeFiles } from '../../cli/run.js';

const SOURCE = 'github.com/acme/catalog';
const INITIATIVE = `name: Payments production readiness
scorecardTag: production-readiness
targetDate: "2030-12-31"
isDraft: false
emphasizedLevels: [{rank: 1}]
emphasizedRules: []
`;

let emulator: RunningEmulator;
let dir: string;
beforeEach(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0, faults: { latencyMs: 100 } });
  dir = await tempDir();
  await writeFiles(dir, {
    'cortex-sync.yaml': `sourceId: ${SOURCE}\n`,
    '.cortex/initiatives/readiness.yaml': INITIATIVE,
  });
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(dir);
});

const initiatives = () => emulator.state.initiatives.items.filter((i) => i.name === 'Payments production readiness');

describe('the apply lease', () => {
  it('two applies started together create one Initiative; the second waits for the first, or exits 1 naming it', async () => {
    const runs = await Promise.all([
      cli(['apply', '--dir', '.'], { cwd: dir, emulator }),
      cli(['apply', '--dir', '.'], { cwd: dir, emulator }),
    ]);
    expect(initiatives()).toHaveLength(1);
    for (const run of runs) {
      if (run.code !== 0) expect(run.stderr).toMatch(/another apply of this source is running \(held by .+ run /);
    }
    expect(runs.some((r) => r.code === 0)).toBe(true);
  });

  it('an apply that cannot get the lease in time exits 1 naming the holder, and writes nothing', async () => {
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    const held = await acquireLease({ client, clock: systemClock, signal: new AbortController().signal }, SOURCE, {
      ...DEFAULT_LEASE_SETTINGS,
      holder: 'ci-runner-7 run deadbeef',
      settleMs: 10,
    });
    const from = emulator.requests.length;
    const run = await cli(['apply', '--dir', '.'], { cwd: dir, emulator, env: { CORTEX_SYNC_LEASE_WAIT: '1' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/held by ci-runner-7 run deadbeef/);
    const writes = emulator.requests.slice(from).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));
    expect(writes).toEqual([]);
    expect(initiatives()).toHaveLength(0);
    await held.release();
    expect((await readLease(client, SOURCE))?.expiresAt).toBe(0);
  });

  it("a crashed holder's lease expires: the next one takes it after the ttl", async () => {
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    const crashed = new AbortController();
    const settings = { ...DEFAULT_LEASE_SETTINGS, settleMs: 10, pollMs: 50, ttlMs: 600 };
    await acquireLease({ client, clock: systemClock, signal: crashed.signal }, SOURCE, { ...settings, holder: 'a' });
    crashed.abort(); // no release, no more renewals
    const impatient = acquireLease({ client, clock: systemClock, signal: new AbortController().signal }, SOURCE, {
      ...settings,
      holder: 'b',
      waitMs: 0,
    });
    await expect(impatient).rejects.toBeInstanceOf(LeaseHeldError);
    const next = await acquireLease({ client, clock: systemClock, signal: new AbortController().signal }, SOURCE, {
      ...settings,
      holder: 'c',
      waitMs: 5_000,
    });
    expect((await readLease(client, SOURCE))?.holder).toBe('c');
    await next.release();
  });
});

describe('what an apply says about the lease', () => {
  it('an apply that found the lease released by the previous one says nothing about taking it', async () => {
    const first = await cli(['apply', '--dir', '.'], { cwd: dir, emulator });
    expect(first.code, first.stderr).toBe(0);
    await writeFiles(dir, { '.cortex/initiatives/readiness.yaml': INITIATIVE.replace('2030-12-31', '2031-06-30') });
    const second = await cli(['apply', '--dir', '.'], { cwd: dir, emulator });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/apply lease/);
  });

  it('an apply that waited for another holder says whose lease it took and after how long', async () => {
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    const held = await acquireLease({ client, clock: systemClock, signal: new AbortController().signal }, SOURCE, {
      ...DEFAULT_LEASE_SETTINGS,
      holder: 'ci-runner-7 run deadbeef',
      settleMs: 10,
    });
    const from = emulator.requests.length;
    const run = cli(['apply', '--dir', '.'], { cwd: dir, emulator });
    while (!emulator.requests.slice(from).some((r) => r.method === 'GET' && r.path.includes('cortex-sync-lease-')))
      await new Promise((resolve) => setTimeout(resolve, 20));
    await held.release();
    const done = await run;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(
      /Took the apply lease of source `github.com\/acme\/catalog` after \d+ s: ci-runner-7 run deadbeef .*released it/,
    );
  });

  it('a lease let go for another waiting apply is not taken from it: the wait that runs out says whose it is', async () => {
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    const ctx = { client, clock: systemClock, signal: new AbortController().signal };
    const settings = { ...DEFAULT_LEASE_SETTINGS, settleMs: 10, pollMs: 100 };
    await (await acquireLease(ctx, SOURCE, { ...settings, holder: 'watcher run 11111111' })).release();
    const released = await readLease(client, SOURCE);
    await writeLease(client, { ...released!, waiting: [{ holder: 'ci run 22222222', since: Date.now() }] });
    const taking = acquireLease(ctx, SOURCE, { ...settings, holder: 'me run 33333333', waitMs: 200 });
    await expect(taking).rejects.toThrow(
      /^the apply lease of this source was let go for another apply that waited for it first \(ci run 22222222\); waited 0 s\. Try again when it has finished$/,
    );
    // The waiter it was let go for takes it at once.
    const waiter = await acquireLease(ctx, SOURCE, { ...settings, holder: 'ci run 22222222', waitMs: 0 });
    expect((await readLease(client, SOURCE))?.holder).toBe('ci run 22222222');
    await waiter.release();
    await client.close();
  });

  it('a waiter whose ask cannot be written (the API refuses it) keeps waiting, and says the lease is kept idle', async () => {
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    const ctx = { client, clock: systemClock, signal: new AbortController().signal };
    const settings = { ...DEFAULT_LEASE_SETTINGS, settleMs: 10, pollMs: 100 };
    const kept = await acquireLease(ctx, SOURCE, { ...settings, holder: 'watcher run 44444444' });
    await kept.setIdle(true);
    const refusing: typeof client = {
      ...client,
      request: (req) =>
        req.method === 'POST'
          ? Promise.reject(new Error(`${req.operation}: 503 Service Unavailable`))
          : client.request(req),
    };
    const waiting = acquireLease({ ...ctx, client: refusing }, SOURCE, {
      ...settings,
      holder: 'cli run 55555555',
      waitMs: 500,
    });
    await expect(waiting).rejects.toThrow(/kept idle by a watcher between its runs \(held by watcher run 44444444/);
    await kept.release();
    await client.close();
  });
});
