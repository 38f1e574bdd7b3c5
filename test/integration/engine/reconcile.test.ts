import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient } from '../../../src/api/types.js';
import type { SyncConfig } from '../../../src/engine/config.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { readInventories } from '../../../src/kinds/entity/records/inventory.js';
import { memoryPlanLog } from '../../../src/engine/plan-log.js';
import { reconcile } from '../../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import { removeDir, syncConfig, tempDir, writeFiles } from '../../engine/helpers.js';

const API_KEY = 'reconcile-test-key-0123456789';
const SOURCE = 'github.com/acme/pages';

const page = (slug: string): string =>
  `slug: ${slug}\nname: ${slug}\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`;

let emulator: RunningEmulator;
let client: ApiClient;
let dir: string;
beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
});
afterAll(() => emulator.stop());
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

const config = (overrides: Partial<SyncConfig> = {}): SyncConfig =>
  syncConfig({ dir, sourceId: SOURCE, baseUrl: emulator.url, ...overrides });

const managed = async (): Promise<string[]> =>
  [...((await readInventories(client, SOURCE)).bySource.get(SOURCE) ?? [])].sort();

describe('reconcile: the ownership inventory around an apply', () => {
  it('is written before the first write, keeps an object whose delete failed, and drops it once deleted', async () => {
    await writeFiles(dir, {
      '.cortex/catalog-pages/alpha.yaml': page('alpha'),
      '.cortex/catalog-pages/beta.yaml': page('beta'),
    });
    const from = emulator.requests.length;
    const first = await reconcile(
      { config: config(), mode: 'apply', planLog: memoryPlanLog() },
      createEngineContext(client),
    );
    expect(first.status).toBe('applied');
    const writes = emulator.requests.slice(from).filter((r) => r.method !== 'GET');
    const paths = writes.map((r) => r.path);
    // The record type, then the apply lease and the inventory before any object; the lease is released last.
    expect(paths.slice(0, 3)).toEqual(['/api/v1/catalog/definitions', '/api/v1/open-api', '/api/v1/open-api']);
    expect(paths.slice(3, 5).sort()).toEqual(['/api/v1/catalog-pages', '/api/v1/catalog-pages']);
    expect(paths.slice(5)).toEqual(['/api/v1/open-api']);
    expect(await managed()).toEqual(['catalog-page/alpha', 'catalog-page/beta']);

    await rm(join(dir, '.cortex/catalog-pages/beta.yaml'));
    emulator.setFaults({
      reject: [{ method: 'DELETE', path: '/api/v1/catalog-pages/beta', status: 409, message: 'in use' }],
    });
    const refused = await reconcile({ config: config(), mode: 'apply' }, createEngineContext(client));
    expect(refused.status).toBe('applied');
    if (refused.status !== 'applied') return;
    expect(refused.report.results.map((r) => [r.change.id, r.change.action, r.outcome])).toEqual([
      ['beta', 'delete', 'failed'],
    ]);
    expect(await managed()).toEqual(['catalog-page/alpha', 'catalog-page/beta']);

    emulator.setFaults({});
    const retried = await reconcile({ config: config(), mode: 'apply' }, createEngineContext(client));
    expect(retried.status === 'applied' && retried.report.results.map((r) => r.outcome)).toEqual(['ok']);
    expect(await managed()).toEqual(['catalog-page/alpha']);
  });

  it('plan mode sends only GET requests and leaves the inventory alone', async () => {
    await writeFiles(dir, { '.cortex/catalog-pages/gamma.yaml': page('gamma') });
    const from = emulator.requests.length;
    const result = await reconcile(
      { config: config({ sourceId: 'plan-only' }), mode: 'plan' },
      createEngineContext(client),
    );
    expect(result.status).toBe('planned');
    expect(emulator.requests.slice(from).every((r) => r.method === 'GET')).toBe(true);
  });

  it('invalid manifests: nothing is read from or written to the API', async () => {
    await writeFiles(dir, { '.cortex/catalog-pages/broken.yaml': 'slug: [unclosed\n' });
    const from = emulator.requests.length;
    const result = await reconcile({ config: config(), mode: 'apply' }, createEngineContext(client));
    expect(result.status).toBe('invalid');
    expect(emulator.requests.length).toBe(from);
  });
});
