/**
 * Merge mode on the kept live state (`LiveCache`, the watcher's runs after a change): a changed
 * entity is read by its tag, and the sources it names as writing keys into it (`claimants`) must
 * be judged on their records as on a full read. A list of the records that leaves a co-owner's
 * record out, in the same way as the last full read's list, leaves the records' fingerprint as
 * kept: without reading that record by its tag, a key the co-owner declares would be PATCHed over.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClient } from '../../src/api/types.js';
import type { SyncConfig } from '../../src/engine/config.js';
import { createEngineContext } from '../../src/engine/context.js';
import { LiveCache } from '../../src/engine/live-cache.js';
import { reconcile } from '../../src/engine/reconcile.js';
import { inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { removeDir, syncConfig, tempDir, writeFiles } from './helpers.js';

const API_KEY = 'qzxv-wkpt-0123456789-test';

let emulator: RunningEmulator;
let client: ApiClient;
const dirs: string[] = [];
let n = 0;

beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
});
afterAll(async () => {
  await client.close();
  await emulator.stop();
  for (const dir of dirs) await removeDir(dir);
});
afterEach(() => emulator.setFaults({}));

let tag: string;
beforeEach(() => {
  n += 1;
  tag = `inc-shared-${n}`;
});

const source = async (name: string, info: string): Promise<SyncConfig> => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, { [`.cortex/catalog/${tag}.yaml`]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n${info}` });
  return syncConfig({ dir, sourceId: name, baseUrl: emulator.url, prune: false, entityWrites: 'merge' });
};

const apply = (config: SyncConfig, cache?: LiveCache) =>
  reconcile(
    { config, mode: 'apply', ...(cache !== undefined ? { session: { liveCache: cache } } : {}) },
    createEngineContext(client),
  );

const groupsOf = async (): Promise<unknown> => {
  const res = await fetch(`${emulator.url}/api/v1/catalog/${tag}/openapi`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  return ((await res.json()) as { info: Record<string, unknown> }).info['x-cortex-groups'];
};

describe('merge mode on the kept live state', { timeout: 60_000 }, () => {
  it('a co-owner whose record the list leaves out is read by its tag: its key is a field-conflict, not overwritten', async () => {
    const ownerName = `inc-owner-${n}`;
    const platformName = `inc-platform-${n}`;
    const owner = await source(ownerName, '  title: Shared\n  description: owned here\n');
    const cache = new LiveCache({ maxAgeMs: 3_600_000, maxObjects: 10 });
    // Every list of the records leaves the platform's record out from now on.
    emulator.setFaults({
      dropFromLists: [{ match: inventoryTag(platformName), reads: 1000, path: '/api/v1/catalog/descriptors' }],
    });
    expect((await apply(owner, cache)).run.outcome).toBe('applied');
    expect(cache.warm).toBe(true);

    const platform = await source(platformName, '  x-cortex-groups: [tier-1]\n');
    const p = await apply(platform);
    expect(p.run.outcome).toBe('applied');
    expect(await groupsOf()).toEqual(['tier-1']);

    // The owner now declares the platform's key too: a change the kept state plans alone.
    await writeFiles(owner.dir, {
      [`.cortex/catalog/${tag}.yaml`]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  title: Shared\n  description: owned here\n  x-cortex-groups: [tier-9]\n`,
    });
    const r = await apply(owner, cache);
    expect(r.run.read).toMatchObject({ path: 'incremental' });
    expect(r.run.outcome).not.toBe('applied');
    expect(JSON.stringify(r)).toMatch(/field-conflict/);
    expect(await groupsOf()).toEqual(['tier-1']);
  });
});
