/**
 * A hand-over stopped halfway: the run is stopped after the plan is approved, before the caller's
 * descriptor is written. The edge must stay in the ownership record (its new home is not written
 * yet), nothing is deleted, and the next run finishes the hand-over.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { createEngineContext } from '../../src/engine/context.js';
import { readInventories } from '../../src/kinds/entity/records/inventory.js';
import { reconcile } from '../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { removeDir, syncConfig, tempDir, writeFiles } from './helpers.js';

const API_KEY = 'hand-over-test-key-0123456789';
const SOURCE = 'hand-over-src';
const service = (tag: string, extra = ''): string =>
  `openapi: 3.0.1\ninfo:\n  title: ${tag}\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n${extra}`;

let emulator: RunningEmulator;
let dir: string;
beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
});
afterAll(() => emulator.stop());
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

const run = async (signal?: AbortSignal, approve?: () => Promise<boolean>) => {
  const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY });
  try {
    return await reconcile(
      {
        config: syncConfig({ dir, baseUrl: emulator.url, sourceId: SOURCE }),
        mode: 'apply',
        ...(approve ? { approve } : {}),
      },
      createEngineContext(client, signal ? { signal } : {}),
    );
  } finally {
    await client.close();
  }
};

const recorded = async (): Promise<string[]> => {
  const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY });
  try {
    return [...((await readInventories(client, SOURCE)).bySource.get(SOURCE) ?? [])].sort();
  } finally {
    await client.close();
  }
};

describe('a hand-over stopped before the descriptor is written', () => {
  it('keeps the edge in the record, deletes nothing, and the next run completes it', async () => {
    const keepers = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}/cortex.yaml`, service(`k${i}`)]));
    await writeFiles(dir, {
      ...keepers,
      'payments/cortex.yaml': service('payments'),
      'ledger/cortex.yaml': service('ledger'),
      '.cortex/dependencies/payments.yaml': 'callerTag: payments\ndependencies:\n  - tag: ledger\n',
    });
    expect((await run()).status).toBe('applied');
    expect(await recorded()).toContain('dependency/payments→ledger');

    await rm(join(dir, '.cortex/dependencies/payments.yaml'));
    await writeFiles(dir, {
      'payments/cortex.yaml': service('payments', '  x-cortex-dependency:\n    - tag: ledger\n'),
    });
    const stop = new AbortController();
    const from = emulator.requests.length;
    const stopped = await run(stop.signal, async () => {
      stop.abort('SIGTERM');
      return true;
    });
    expect(stopped.status === 'applied' && stopped.report.interrupted).toBe(true);
    expect(emulator.requests.slice(from).filter((r) => r.path.includes('dependencies') && r.method !== 'GET')).toEqual(
      [],
    );
    expect(await recorded()).toContain('dependency/payments→ledger');

    const next = await run();
    expect(next.status).toBe('applied');
    expect(next.diagnostics.map((d) => d.code)).toContain('handed-over');
    expect(await recorded()).not.toContain('dependency/payments→ledger');
    const after = await run();
    expect(after.status === 'applied' && after.plan.changes.every((c) => c.action === 'noop')).toBe(true);
    expect(after.diagnostics).toEqual([]);
  });
});
