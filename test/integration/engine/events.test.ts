import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { SyncConfig } from '../../../src/engine/config.js';
import { createEngineContext, type EngineEvent } from '../../../src/engine/context.js';
import { memoryPlanLog } from '../../../src/engine/plan-log.js';
import { reconcile } from '../../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import { renderPlanJson, renderPlanMarkdown, renderPlanText } from '../../../src/render/index.js';
import { removeDir, syncConfig, tempDir, writeFiles } from '../../engine/helpers.js';

const API_KEY = 'events-test-key-0123456789';
const SOURCE = 'github.com/acme/events';

const page = (slug: string): string =>
  `slug: ${slug}\nname: ${slug}\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`;

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

const config = (overrides: Partial<SyncConfig> = {}): SyncConfig =>
  syncConfig({ dir, sourceId: SOURCE, baseUrl: emulator.url, ...overrides });

const run = async (mode: 'plan' | 'apply') => {
  const events: EngineEvent[] = [];
  const sink = { emit: (e: EngineEvent) => events.push(e) };
  const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, events: sink });
  const log = memoryPlanLog();
  try {
    const result = await reconcile(
      { config: config(), mode, planLog: log },
      createEngineContext(client, { events: sink }),
    );
    return { result, events, log: log.entries };
  } finally {
    await client.close();
  }
};

describe('reconcile: events and the ownership record as plan steps', () => {
  it('reports started, reads, plan.ready, one operation.done per step, done — in that order', async () => {
    await writeFiles(dir, {
      '.cortex/catalog-pages/alpha.yaml': page('alpha'),
      '.cortex/catalog-pages/beta.yaml': page('beta'),
    });
    const { result, events, log } = await run('apply');
    expect(result.status).toBe('applied');

    const types = events.map((e) => e.type);
    expect(types[0]).toBe('reconcile.started');
    expect(types.at(-1)).toBe('reconcile.done');
    const ready = types.indexOf('plan.ready');
    // Before the plan: the reads, and the reading stages as each ends.
    expect(types.slice(1, ready).every((t) => t === 'request' || t === 'stage.done')).toBe(true);
    expect(ready).toBeGreaterThan(1);
    expect(events[ready]).toMatchObject({ type: 'plan.ready', pending: 3, summary: { create: 2 } });

    const done = events.filter((e) => e.type === 'operation.done');
    expect(done.map((e) => `${e.kind}/${e.id}:${e.action}:${e.outcome}`).sort()).toEqual(
      ['catalog-page/alpha:create:ok', 'catalog-page/beta:create:ok', `inventory/${done[0]?.id}:create:ok`].sort(),
    );
    // The ownership record is written first, before any object.
    expect(done[0]).toMatchObject({ kind: 'inventory', action: 'create', outcome: 'ok' });
    expect(done.every((e) => e.status !== null && e.durationMs >= 0)).toBe(true);
    // Every write request comes after the plan is ready.
    const writes = events.flatMap((e, i) => (e.type === 'request' && e.method !== 'GET' ? [i] : []));
    expect(Math.min(...writes)).toBeGreaterThan(ready);
    expect(events.at(-1)).toMatchObject({ type: 'reconcile.done', status: 'applied' });

    // The plan log names the record's writes as `inventory`, not as an entity update.
    const recordLines = log.filter((l) => l.kind === 'inventory');
    expect(recordLines.length).toBeGreaterThan(0);
    expect(log.filter((l) => l.kind === 'entity')).toEqual([]);
  });

  it('a plan shows the ownership record writes in text, markdown and JSON', async () => {
    await writeFiles(dir, { '.cortex/catalog-pages/gamma.yaml': page('gamma') });
    const { result, events } = await run('plan');
    expect(result.status).toBe('planned');
    if (result.status !== 'planned') return;
    expect(events.filter((e) => e.type === 'operation.done')).toEqual([]);
    expect(result.plan.inventory).toEqual([
      expect.objectContaining({ phase: 'before', action: 'update', add: ['catalog-page/gamma'] }),
      // alpha and beta (applied above) are dropped after this plan's prunes.
      expect.objectContaining({ phase: 'after', remove: ['catalog-page/alpha', 'catalog-page/beta'] }),
    ]);

    const json = JSON.parse(renderPlanJson(result.plan)) as { changes: { kind: string; phase?: string }[] };
    expect(json.changes[0]).toMatchObject({ kind: 'inventory', phase: 'before' });
    expect(json.changes.at(-1)).toMatchObject({ kind: 'inventory', phase: 'after' });
    const text = renderPlanText(result.plan, { color: false });
    expect(text).toMatch(/~ update inventory\/\S+ {2}\(ownership record, before the changes\)/);
    expect(text).toContain('+ catalog-page/gamma = "managed"');
    expect(text).toContain('And 2 writes of the ownership record (inventory).');
    expect(renderPlanMarkdown(result.plan)).toMatch(/#### 🟡 update `[^`]+` — ownership record, after the changes/);
  });
});
