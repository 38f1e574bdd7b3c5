import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { SyncConfig } from '../../../src/engine/config.js';
import { createEngineContext, type EngineEvent } from '../../../src/engine/context.js';
import { memoryPlanLog } from '../../../src/engine/plan-log.js';
import { reconcile } from '../../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import { type Forwarder, startForwarder } from '../../support/forwarder.js';
import { removeDir, tempDir, writeFiles } from '../../engine/helpers.js';

const API_KEY = 'abort-test-key-0123456789';
const SOURCE = 'github.com/acme/abort';

const page = (slug: string): string =>
  `slug: ${slug}\nname: ${slug}\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`;

let emulator: RunningEmulator;
let forwarder: Forwarder;
let dir: string;
/** Resolves when the server has answered the first long Retry-After. */
let rateLimited: Promise<void>;
let onRateLimited: () => void;

beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  // Creating page `beta` meets a 429 asking to come back in two minutes; everything else is served.
  forwarder = await startForwarder(emulator.url, (seen) => {
    if (seen.method !== 'POST' || !seen.path.startsWith('/api/v1/catalog-pages') || !seen.body.includes('"beta"'))
      return undefined;
    onRateLimited();
    return { status: 429, headers: { 'retry-after': '120' }, body: { message: 'rate limited' } };
  });
});
afterAll(async () => {
  await forwarder.close();
  await emulator.stop();
});
beforeEach(async () => {
  dir = await tempDir();
  rateLimited = new Promise<void>((resolve) => (onRateLimited = resolve));
});
afterEach(() => removeDir(dir));

const config = (): SyncConfig => ({
  dir,
  sourceId: SOURCE,
  baseUrl: forwarder.url,
  prune: false,
  pruneEntities: 'archive',
  allowMassDelete: false,
  allowTakeover: false,
  maxDeleteShare: 0.25,
  protect: [],
  concurrency: 1,
  requestsPerMinute: 1000,
  forceEntityTypeSchema: false,
});

describe('reconcile: aborting the context', () => {
  it('returns at once while the client waits out a two-minute Retry-After (not after it: longer than the test may run), reporting what was and was not done', async () => {
    await writeFiles(dir, {
      '.cortex/catalog-pages/alpha.yaml': page('alpha'),
      '.cortex/catalog-pages/beta.yaml': page('beta'),
      '.cortex/catalog-pages/gamma.yaml': page('gamma'),
    });
    const events: EngineEvent[] = [];
    let paused: () => void = () => {};
    const pausing = new Promise<void>((resolve) => {
      paused = resolve;
    });
    const sink = {
      emit: (e: EngineEvent) => {
        events.push(e);
        if (e.type === 'ratelimit.paused') paused();
      },
    };
    const client = createApiClient({ baseUrl: forwarder.url, apiKey: API_KEY, events: sink });
    const controller = new AbortController();
    const log = memoryPlanLog();
    const running = reconcile(
      { config: config(), mode: 'apply', planLog: log },
      createEngineContext(client, { signal: controller.signal, events: sink }),
    );

    await rateLimited;
    // The client now pauses for 120 s (it said so); the run is asked to stop. Were the pause waited
    // out, the run would outlast the test's timeout.
    await pausing;
    controller.abort('SIGINT');
    const result = await running;
    await client.close();

    expect(result.status).toBe('applied');
    if (result.status !== 'applied') return;
    expect(result.report.interrupted).toBe(true);
    const outcomes = Object.fromEntries(result.report.results.map((r) => [r.change.id, [r.outcome, r.error]]));
    expect(outcomes.alpha).toEqual(['ok', undefined]);
    // In flight when the stop came (waiting out the pause, nothing processed): reported, not lost.
    expect(outcomes.beta?.[0]).toBe('skipped');
    expect(outcomes.beta?.[1]).toMatch(/interrupted/);
    // Never started.
    expect(outcomes.gamma?.[0]).toBe('skipped');
    expect(outcomes.gamma?.[1]).toMatch(/interrupted/);

    // Only alpha exists; the ownership record was written before it and still tracks all three (safe).
    const slugs = emulator.requests
      .filter((r) => r.method === 'POST' && r.path.startsWith('/api/v1/catalog-pages'))
      .map((r) => r.status);
    expect(slugs).toEqual([200]);
    expect(result.report.inventory?.map((w) => [w.write.phase, w.outcome])).toEqual([['before', 'ok']]);

    // The plan log names every change, the interrupted ones as skipped.
    expect(
      log.entries
        .filter((e) => e.kind === 'catalog-page' && e.outcome === 'skipped')
        .map((e) => e.id)
        .sort(),
    ).toEqual(['beta', 'gamma']);
    // Releasing the lease (its read first: is it still ours?) would have to wait out the pause: it
    // is given up (the lease expires) and says so, rather than holding the stopped run for two minutes.
    expect(log.entries.filter((e) => e.outcome === 'skipped' && e.kind !== 'catalog-page')).toEqual([
      expect.objectContaining({ kind: 'inventory', method: 'GET', error: expect.stringMatching(/lease.*cancelled/) }),
    ]);
    expect(log.entries.some((e) => e.kind === 'inventory' && e.method === 'POST' && e.outcome === 'ok')).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'reconcile.done', status: 'interrupted' });
    expect(events.some((e) => e.type === 'ratelimit.paused' && e.ms >= 100_000)).toBe(true);
  });
});
