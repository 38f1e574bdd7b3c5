/**
 * An Initiative's POST has no client-chosen identity. A server that processes it only after the
 * client gave up (a timeout), or a run killed while the POST was held, must still leave exactly one
 * Initiative. A proxy on 127.0.0.1 holds POST /api/v1/initiatives for a while before passing it
 * on to the emulator, as a slow server would.
 */
import { createServer, request, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient } from '../../../src/api/types.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import { systemClock } from '../../../src/engine/context.js';
import { acquireLease, DEFAULT_LEASE_SETTINGS, type LeaseSettings } from '../../../src/engine/lease.js';
import { createInitiative, pendingKey } from '../../../src/kinds/initiative/api.js';
import { initiativeRequestBody } from '../../../src/kinds/initiative/normalize.js';
import type { InitiativeManifest } from '../../../src/kinds/initiative/schema.js';

const API_KEY = 'create-safety-key-0123456789abcdef';
const HOLD_MS = 1_500;
const SOURCE = 'github.com/acme/catalog';

let emulator: RunningEmulator;
let proxy: Server;
let proxyUrl: string;
const held: Promise<void>[] = [];

beforeEach(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  const upstream = new URL(emulator.url);
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const slow = req.method === 'POST' && req.url === '/api/v1/initiatives';
      const forward = new Promise<void>((resolve) => {
        setTimeout(
          () => {
            const out = request(
              {
                host: upstream.hostname,
                port: upstream.port,
                method: req.method,
                path: req.url,
                headers: { ...req.headers, host: upstream.host },
              },
              (answer) => {
                const parts: Buffer[] = [];
                answer.on('data', (c: Buffer) => parts.push(c));
                answer.on('end', () => {
                  if (!res.destroyed) res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(parts));
                  resolve();
                });
              },
            );
            out.on('error', () => resolve());
            out.end(Buffer.concat(chunks));
          },
          slow ? HOLD_MS : 0,
        );
      });
      held.push(forward);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  proxyUrl = `http://127.0.0.1:${address.port}`;
});
afterEach(async () => {
  await Promise.all(held.splice(0));
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await emulator.stop();
});

const spec: InitiativeManifest = {
  name: 'Production readiness',
  scorecardTag: 'production-readiness',
  targetDate: '2030-12-31',
  isDraft: false,
  emphasizedLevels: [{ rank: 1 }],
  emphasizedRules: [],
} as unknown as InitiativeManifest;

/** A client that gives up on a request after 500 ms (the server holds the POST for 1.5 s). */
const impatientClient = (): ApiClient =>
  createApiClient({ baseUrl: proxyUrl, apiKey: API_KEY, timeoutMs: 500, maxAttempts: 1 });

const settings = (holder: string, extra: Partial<LeaseSettings> = {}): LeaseSettings => ({
  ...DEFAULT_LEASE_SETTINGS,
  holder,
  settleMs: 20,
  pollMs: 50,
  ttlMs: 400,
  pendingWindowMs: 5_000,
  ...extra,
});

const stored = () => emulator.state.initiatives.items.filter((i) => i.name === spec.name);
const posts = () => emulator.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/initiatives').length;

describe('Initiative creates are never repeated blindly', () => {
  it('a POST the server processes after the client timed out leaves exactly one Initiative', async () => {
    const client = impatientClient();
    const ctx = { client, clock: systemClock, signal: new AbortController().signal };
    const lease = await acquireLease(ctx, SOURCE, settings('run-1'));
    await createInitiative(client, spec, lease.pending);
    await lease.release();
    await Promise.all(held.splice(0));
    expect(stored()).toHaveLength(1);
    expect(posts()).toBe(1);
  });

  it('a POST answered 5xx is looked for once, not for the whole pending window: the failure is named and a rerun creates one', async () => {
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    const ctx = { client, clock: systemClock, signal: new AbortController().signal };
    // A window far beyond the test's time limit: waiting it out would fail the test.
    const lease = await acquireLease(ctx, SOURCE, settings('run-1', { pendingWindowMs: 120_000 }));
    emulator.setFaults({
      reject: [{ method: 'POST', path: '/api/v1/initiatives', status: 503, message: 'try again later' }],
    });
    await expect(createInitiative(client, spec, lease.pending)).rejects.toThrow(/503/);
    expect(lease.pending.since(pendingKey(spec.name))).toBeUndefined();
    emulator.setFaults({});
    await createInitiative(client, spec, lease.pending);
    await lease.release();
    expect(stored()).toHaveLength(1);
  });

  it('without a lease, a timed-out POST is not sent again: the create fails, and the rerun finds the one Initiative', async () => {
    const client = impatientClient();
    await expect(createInitiative(client, spec)).rejects.toThrow(/outcome is unknown.*not sent again/);
    await Promise.all(held.splice(0));
    await createInitiative(client, spec);
    expect(stored()).toHaveLength(1);
    expect(posts()).toBe(1);
  });

  it('a run killed while its POST was held: the rerun finds the pending create, waits it out, creates nothing', async () => {
    const client = createApiClient({ baseUrl: proxyUrl, apiKey: API_KEY, maxAttempts: 1 });
    const killed = new AbortController();
    const first = await acquireLease({ client, clock: systemClock, signal: killed.signal }, SOURCE, settings('run-1'));
    await first.pending.record(pendingKey(spec.name));
    // The POST leaves, then the process dies: no answer is read, no release, no more renewals.
    held.push(
      fetch(`${proxyUrl}/api/v1/initiatives`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(initiativeRequestBody(spec)),
      }).then(() => {}),
    );
    killed.abort();

    // The rerun waits for the dead run's lease to expire, then sees its pending create.
    const second = await acquireLease(
      { client, clock: systemClock, signal: new AbortController().signal },
      SOURCE,
      settings('run-2'),
    );
    expect(second.pending.since(pendingKey(spec.name))).toBeDefined();
    await createInitiative(client, spec, second.pending);
    expect(second.pending.since(pendingKey(spec.name))).toBeUndefined();
    await second.release();
    await Promise.all(held.splice(0));
    expect(stored()).toHaveLength(1);
    expect(posts()).toBe(1);
  });
});
