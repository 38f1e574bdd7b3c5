import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/types.js';
import type { Change, Diagnostic, KindName } from '../../src/core/model.js';
import { createEngineContext, systemClock } from '../../src/engine/context.js';
import { executePlan } from '../../src/engine/executor.js';
import { memoryPlanLog } from '../../src/engine/plan-log.js';
import { KIND_NAMES } from '../../src/kinds/registry.js';
import type { AnyKindHandler } from '../../src/kinds/types.js';
import { batchKind, change, memoryApi, newTrace, pathOf, type Trace, tracedKind } from './fakes.js';

const NOW = Date.parse('2025-03-04T05:06:07.000Z');

const run = async (
  changes: Change[],
  handlers: AnyKindHandler[],
  options: { client?: ApiClient; concurrency?: number } = {},
) => {
  const log = memoryPlanLog();
  const byKind = new Map(handlers.map((h) => [h.kind, h]));
  const report = await executePlan(
    {
      changes,
      handlerFor: (kind: KindName) => {
        const handler = byKind.get(kind);
        if (!handler) throw new Error(`no fake kind ${kind}`);
        return handler;
      },
      kindOrder: KIND_NAMES,
      options: { sourceId: 'test-repo' },
      concurrency: options.concurrency ?? 8,
      log,
    },
    createEngineContext(options.client ?? memoryApi(), { clock: { now: () => NOW, sleep: systemClock.sleep } }),
  );
  const outcomes = Object.fromEntries(report.results.map((r) => [`${r.change.kind}/${r.change.id}`, r.outcome]));
  return { report, log: log.entries, outcomes };
};

const tracedKinds = (trace: Trace, kinds: KindName[] = ['entity-type', 'entity', 'catalog-page', 'initiative']) =>
  kinds.map((k) => tracedKind(k, trace));

describe('executePlan: failures', () => {
  it('a failed change skips what waits for it, transitively; independent changes still run', async () => {
    const trace = newTrace();
    const client = memoryApi({ failures: { [pathOf({ kind: 'entity-type', id: 'database' })]: 400 } });
    const changes = [
      change('entity-type', 'database', 'create'),
      change('catalog-page', 'home', 'create'),
      change('entity', 'orders-db', 'create', ['entity-type/database']),
      change('initiative', 'db-hygiene', 'create', ['entity/orders-db']),
    ];
    const { report, log, outcomes } = await run(changes, tracedKinds(trace), { client });

    expect(outcomes).toEqual({
      'entity-type/database': 'failed',
      'catalog-page/home': 'ok',
      'entity/orders-db': 'skipped',
      'initiative/db-hygiene': 'skipped',
    });
    const byKey = new Map(report.results.map((r) => [`${r.change.kind}/${r.change.id}`, r]));
    expect(byKey.get('entity-type/database')?.error).toContain('HTTP 400');
    expect(byKey.get('entity/orders-db')?.blockedBy).toBe('entity-type/database');
    expect(byKey.get('initiative/db-hygiene')?.blockedBy).toBe('entity/orders-db');
    expect(byKey.get('initiative/db-hygiene')?.error).toMatch(/entity\/orders-db.*skipped/);
    // Nothing was sent for the skipped changes.
    expect(client.sent.map((r) => r.path).sort()).toEqual(
      [pathOf({ kind: 'entity-type', id: 'database' }), pathOf({ kind: 'catalog-page', id: 'home' })].sort(),
    );
    expect(trace.events.filter((e) => e.startsWith('start')).sort()).toEqual([
      'start catalog-page/home',
      'start entity-type/database',
    ]);

    const skippedLines = log.filter((l) => l.outcome === 'skipped');
    expect(skippedLines).toEqual([
      expect.objectContaining({
        kind: 'entity',
        id: 'orders-db',
        action: 'create',
        method: null,
        path: null,
        status: null,
        attempts: 0,
        outcome: 'skipped',
        error: expect.stringContaining('entity-type/database'),
      }),
      expect.objectContaining({ kind: 'initiative', id: 'db-hygiene', method: null, outcome: 'skipped' }),
    ]);
  });

  it('reports results in plan order and leaves noops out', async () => {
    const trace = newTrace();
    const changes = [
      change('entity-type', 'a', 'noop'),
      change('entity', 'b', 'update'),
      change('catalog-page', 'c', 'noop'),
      change('catalog-page', 'd', 'create'),
    ];
    const { report } = await run(changes, tracedKinds(trace));
    expect(report.results.map((r) => r.change.id)).toEqual(['b', 'd']);
    expect(trace.events.filter((e) => e.startsWith('start')).sort()).toEqual([
      'start catalog-page/d',
      'start entity/b',
    ]);
  });

  it('attaches what explainFailure says to the failed change, and API warnings to a successful one', async () => {
    const client = memoryApi({ failures: { [pathOf({ kind: 'entity', id: 'broken' })]: 400 } });
    const located: Diagnostic = { severity: 'error', code: 'api-violation', message: 'owner missing', line: 4 };
    const warning: Diagnostic = { severity: 'warning', code: 'api-warning', message: 'tag looks odd' };
    const entity: AnyKindHandler = {
      ...tracedKind('entity', newTrace()),
      write: {
        async apply(c, ctx) {
          await ctx.client.request({ operation: 'upsert', method: 'POST', path: pathOf(c) });
          ctx.warn?.([warning]);
        },
        explainFailure: () => [located],
      },
    };
    const { report } = await run([change('entity', 'broken', 'update'), change('entity', 'fine', 'update')], [entity], {
      client,
    });
    expect(report.results.find((r) => r.change.id === 'broken')?.diagnostics).toEqual([located]);
    expect(report.results.find((r) => r.change.id === 'fine')).toMatchObject({ outcome: 'ok', diagnostics: [warning] });
  });

  it('changes caught in a dependency cycle are skipped, never applied', async () => {
    const trace = newTrace();
    const changes = [
      change('entity', 'a', 'create', ['entity/b']),
      change('entity', 'b', 'create', ['entity/a']),
      change('entity', 'c', 'create'),
    ];
    const { outcomes } = await run(changes, tracedKinds(trace, ['entity']));
    expect(outcomes).toEqual({ 'entity/a': 'skipped', 'entity/b': 'skipped', 'entity/c': 'ok' });
    expect(trace.events).toEqual(['start entity/c', 'end entity/c']);
  });
});

describe('executePlan: order', () => {
  it('a change starts only after the changes it waits for have finished', async () => {
    const trace = newTrace();
    const changes = [
      change('entity-type', 'database', 'create'),
      change('entity', 'team-a', 'create'),
      change('entity', 'orders-db', 'create', ['entity-type/database', 'entity/team-a']),
    ];
    await run(changes, tracedKinds(trace));
    const at = (event: string) => trace.events.indexOf(event);
    expect(at('start entity/orders-db')).toBeGreaterThan(at('end entity-type/database'));
    expect(at('start entity/orders-db')).toBeGreaterThan(at('end entity/team-a'));
  });

  it('removals start only after every write has finished, entities removed before their types', async () => {
    const trace = newTrace();
    const changes = [
      change('entity-type', 'database', 'update'),
      change('entity', 'orders-db', 'create'),
      change('catalog-page', 'home', 'update'),
      change('initiative', 'old-goal', 'delete'),
      change('entity', 'legacy-db', 'archive'),
      change('entity-type', 'legacy', 'delete'),
    ];
    await run(changes, tracedKinds(trace));
    const at = (event: string) => trace.events.indexOf(event);
    const lastWriteEnd = Math.max(
      at('end entity-type/database'),
      at('end entity/orders-db'),
      at('end catalog-page/home'),
    );
    for (const removal of ['initiative/old-goal', 'entity/legacy-db', 'entity-type/legacy']) {
      expect(at(`start ${removal}`), removal).toBeGreaterThan(lastWriteEnd);
    }
    expect(at('start entity-type/legacy')).toBeGreaterThan(at('end entity/legacy-db'));
    expect(at('start entity/legacy-db')).toBeGreaterThan(at('end initiative/old-goal'));
  });

  it('never has more changes in flight than the concurrency, and does use it', async () => {
    for (const concurrency of [1, 3]) {
      const trace = newTrace();
      const changes = Array.from({ length: 12 }, (_, i) => change('entity', `service-${i}`, 'create'));
      const { outcomes } = await run(changes, tracedKinds(trace, ['entity']), { concurrency });
      expect(trace.maxInFlight, `concurrency ${concurrency}`).toBe(concurrency);
      expect(Object.values(outcomes).every((o) => o === 'ok')).toBe(true);
    }
  });
});

describe('executePlan: batch kinds', () => {
  it('hands the writes of a bulk kind over together, then its removals, and records each outcome', async () => {
    const trace = newTrace();
    const changes = [
      change('entity', 'payments', 'create'),
      change('dependency', 'payments:ledger', 'create', ['entity/payments']),
      change('dependency', 'payments:fraud', 'update', ['entity/payments']),
      change('dependency', 'orders:ledger', 'create'),
      change('catalog-page', 'needs-edge', 'create', ['dependency/payments:fraud']),
      change('dependency', 'old:edge', 'delete'),
      change('dependency', 'older:edge', 'delete'),
    ];
    const handlers = [
      tracedKind('entity', trace),
      tracedKind('catalog-page', trace),
      batchKind('dependency', trace, ['payments:fraud']),
    ];
    const { outcomes, report, log } = await run(changes, handlers);

    expect(trace.batches).toEqual([
      ['dependency/payments:ledger', 'dependency/payments:fraud', 'dependency/orders:ledger'],
      ['dependency/old:edge', 'dependency/older:edge'],
    ]);
    expect(outcomes).toEqual({
      'entity/payments': 'ok',
      'dependency/payments:ledger': 'ok',
      'dependency/payments:fraud': 'failed',
      'dependency/orders:ledger': 'ok',
      'catalog-page/needs-edge': 'skipped',
      'dependency/old:edge': 'ok',
      'dependency/older:edge': 'ok',
    });
    expect(report.results.find((r) => r.change.id === 'payments:fraud')?.error).toContain('refused in bulk');
    // One plan-log line per bulk request, naming the batch.
    const bulkLines = log.filter((l) => l.kind === 'dependency');
    expect(bulkLines.map((l) => [l.id, l.method])).toEqual([
      ['payments:ledger (+2 more)', 'PUT'],
      ['old:edge (+1 more)', 'DELETE'],
    ]);
  });

  it('a change a bulk kind gives no outcome for is reported failed, not left out, and its dependents wait', async () => {
    const trace = newTrace();
    const forgetful: AnyKindHandler = {
      ...batchKind('dependency', trace),
      write: {
        ...batchKind('dependency', trace).write,
        async applyBatch(changes) {
          return changes.filter((c) => c.id !== 'lost:edge').map((c) => ({ change: c }));
        },
      },
    };
    const { outcomes } = await run(
      [
        change('dependency', 'kept:edge', 'create'),
        change('dependency', 'lost:edge', 'create'),
        change('catalog-page', 'after', 'create', ['dependency/lost:edge']),
      ],
      [forgetful, tracedKind('catalog-page', trace)],
    );
    expect(outcomes).toEqual({
      'dependency/kept:edge': 'ok',
      'dependency/lost:edge': 'failed',
      'catalog-page/after': 'skipped',
    });
  });

  it('a whole batch fails when applyBatch throws', async () => {
    const trace = newTrace();
    const client = memoryApi({ failures: { '/api/v1/fake/dependency/bulk': 503 } });
    const { outcomes } = await run(
      [change('dependency', 'a:b', 'create'), change('dependency', 'c:d', 'create')],
      [batchKind('dependency', trace)],
      { client },
    );
    expect(outcomes).toEqual({ 'dependency/a:b': 'failed', 'dependency/c:d': 'failed' });
  });
});

describe('executePlan: plan log and counts', () => {
  it('writes one line per request with every field, and counts write attempts (retries included)', async () => {
    const trace = newTrace();
    const retried = pathOf({ kind: 'entity', id: 'flaky' });
    const refused = pathOf({ kind: 'catalog-page', id: 'bad' });
    const client = memoryApi({ attempts: { [retried]: 3 }, failures: { [refused]: 422 } });
    const changes = [
      change('entity', 'flaky', 'update'),
      change('catalog-page', 'bad', 'create'),
      change('initiative', 'gone', 'delete'),
    ];
    const { report, log } = await run(changes, tracedKinds(trace), { client });

    expect(report.writeRequests).toBe(3 + 1 + 1);
    expect(report.durationMs).toBe(0);
    const ts = new Date(NOW).toISOString();
    const byId = (id: string) => log.find((l) => l.id === id);
    expect(byId('flaky')).toEqual({
      ts,
      kind: 'entity',
      id: 'flaky',
      action: 'update',
      method: 'PUT',
      path: retried,
      status: 200,
      attempts: 3,
      durationMs: 3,
      outcome: 'ok',
    });
    expect(byId('bad')).toEqual({
      ts,
      kind: 'catalog-page',
      id: 'bad',
      action: 'create',
      method: 'POST',
      path: refused,
      status: 422,
      attempts: 1,
      durationMs: 7,
      outcome: 'failed',
      error: expect.stringContaining('refused by the test'),
    });
    expect(byId('gone')).toMatchObject({ method: 'DELETE', status: 200, outcome: 'ok' });
    expect(log).toHaveLength(3);
  });

  it('counts no reads as writes, and logs a read with its query string', async () => {
    const client = memoryApi();
    const reader: AnyKindHandler = {
      ...tracedKind('catalog-page', newTrace()),
      write: {
        async apply(c, ctx) {
          await ctx.client.request({ operation: 'look up', method: 'GET', path: pathOf(c), query: { a: ['x', 'y'] } });
          await ctx.client.request({ operation: 'write', method: 'PUT', path: pathOf(c) });
        },
      },
    };
    const { report, log } = await run([change('catalog-page', 'home', 'update')], [reader], { client });
    expect(report.writeRequests).toBe(1);
    expect(log.map((l) => `${l.method} ${l.path}`)).toEqual([
      `GET ${pathOf({ kind: 'catalog-page', id: 'home' })}?a=x&a=y`,
      `PUT ${pathOf({ kind: 'catalog-page', id: 'home' })}`,
    ]);
  });

  it('an empty plan sends nothing and reports nothing', async () => {
    const client = memoryApi();
    const { report, log } = await run([change('entity', 'same', 'noop')], [tracedKind('entity', newTrace())], {
      client,
    });
    expect(report).toMatchObject({ results: [], writeRequests: 0 });
    expect(client.sent).toEqual([]);
    expect(log).toEqual([]);
  });
});
