/**
 * A long-running process (the watcher) reconciles again and again. Two hundred reconciles, each
 * with its own client closed afterwards and all under one stop signal, leave no sockets, timers or
 * listeners behind. Each check is an exact count, so a leak of one per run shows after the first;
 * the process's growth over hours is the benchmark's to measure (packages/bench).
 */
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { SyncConfig } from '../../../src/engine/config.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { reconcile } from '../../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import { removeDir, tempDir, writeFiles } from '../../engine/helpers.js';

const API_KEY = 'leak-test-key-0123456789';
const RUNS = 200;

let emulator: RunningEmulator;
let dir: string;
beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  dir = await tempDir();
  await writeFiles(dir, {
    '.cortex/catalog-pages/home.yaml':
      'slug: home\nname: Home\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n',
  });
});
afterAll(async () => {
  await emulator.stop();
  await removeDir(dir);
});

const config: () => SyncConfig = () => ({
  dir,
  sourceId: 'github.com/acme/leak',
  baseUrl: emulator.url,
  prune: false,
  pruneEntities: 'archive',
  allowMassDelete: false,
  allowTakeover: false,
  maxDeleteShare: 0.25,
  protect: [],
  concurrency: 4,
  requestsPerMinute: 1000,
  forceEntityTypeSchema: false,
});

/** Active handles by type, without the ones this test's own runner keeps (stdio, IPC). */
const resources = (): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
};

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

describe('reconcile in a long-running process', () => {
  it(`${RUNS} reconciles leave no sockets, timers or listeners behind`, { timeout: 600_000 }, async () => {
    const stop = new AbortController();
    const once = async (mode: 'plan' | 'apply') => {
      const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, requestsPerMinute: 1_000_000 });
      try {
        const result = await reconcile(
          { config: config(), mode },
          createEngineContext(client, { signal: stop.signal }),
        );
        expect(result.status).toBe(mode === 'apply' ? 'applied' : 'planned');
      } finally {
        await client.close();
      }
    };
    await once('apply'); // warm up: the page and the ownership record exist from here on
    await settle();
    const before = resources();
    const processListeners = process.eventNames().map((name) => process.listenerCount(name));

    for (let i = 0; i < RUNS; i++) await once(i % 10 === 0 ? 'apply' : 'plan');
    await settle();

    const after = resources();
    expect(after).toEqual(before);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    expect(process.eventNames().map((name) => process.listenerCount(name))).toEqual(processListeners);
    console.log(`leak check after ${RUNS} reconciles: ${JSON.stringify(after)} (before: ${JSON.stringify(before)})`);
  });
});
