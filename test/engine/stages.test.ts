/**
 * `reconcile` as named stages, ending in one run report: each stage is an event with its
 * duration and a line of the report, an apply with work re-checks under the lease what it writes, an apply
 * with nothing to write reads once and takes no lease, the report counts the requests the API
 * received, and a plan whose only write is the ownership record has work.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { exitCodeOf } from '../../src/core/outcome.js';
import { createEngineContext, type EngineEvent, systemClock } from '../../src/engine/context.js';
import { LeaseHeldError, LeaseLostError } from '../../src/engine/lease.js';
import { failureReason, reconcile, type ReconcileInput } from '../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { removeDir, syncConfig, tempDir, writeFiles } from './helpers.js';

const API_KEY = 'stages-test-key-0123456789';

const page = (slug: string): string =>
  `slug: ${slug}\nname: ${slug}\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`;

let emulator: RunningEmulator;
let dir: string;
let source: string;
let n = 0;
beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
});
afterAll(() => emulator.stop());
beforeEach(async () => {
  dir = await tempDir();
  n += 1;
  source = `github.com/acme/stages-${n}`;
});
afterEach(() => removeDir(dir));

const run = async (mode: 'plan' | 'apply', extra: Partial<ReconcileInput> = {}) => {
  const events: EngineEvent[] = [];
  const sink = { emit: (e: EngineEvent) => events.push(e) };
  const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, events: sink });
  const from = emulator.requests.length;
  try {
    const result = await reconcile(
      { config: syncConfig({ dir, sourceId: source, baseUrl: emulator.url, prune: false }), mode, ...extra },
      createEngineContext(client, { events: sink }),
    );
    return { result, events, received: emulator.requests.slice(from) };
  } finally {
    await client.close();
  }
};

const stagesOf = (events: EngineEvent[]) =>
  events.flatMap((e) => (e.type === 'stage.done' ? [`${e.stage}${e.underLease ? '*' : ''}`] : []));

describe('reconcile as named stages', () => {
  it('a plan: load, read-live, validate, plan, each an event with its duration and a line of the report', async () => {
    await writeFiles(dir, { [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`) });
    const { result, events, received } = await run('plan');
    expect(stagesOf(events)).toEqual(['load', 'read-live', 'validate', 'plan']);
    expect(result.run.stages.map((s) => s.stage)).toEqual(['load', 'read-live', 'validate', 'plan']);
    expect(result.run.stages.every((s) => s.durationMs >= 0 && s.failed === undefined)).toBe(true);
    // Every request the API received, and nothing but reads.
    expect(result.run.requests).toEqual({ sent: received.length, writes: 0 });
    expect(events.at(-1)).toMatchObject({ type: 'reconcile.done', status: 'planned', reason: 'changes-planned' });
  });

  it('an apply with work re-checks what it writes under the lease, then approve, apply, record; the report counts every request', async () => {
    await writeFiles(dir, { [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`) });
    const { result, events, received } = await run('apply', { approve: () => Promise.resolve(true) });
    expect(result.run).toMatchObject({ outcome: 'applied', reason: 'changes-applied', changes: true });
    expect(stagesOf(events)).toEqual([
      'load',
      'read-live',
      'validate',
      'plan',
      'lease',
      'recheck*',
      'approve*',
      'apply*',
      'record*',
    ]);
    expect(result.run.read).toEqual({ path: 'full', underLease: 'recheck' });
    expect(result.run.requests.sent).toBe(received.length);
    expect(result.run.requests.writes).toBe(received.filter((r) => r.method !== 'GET').length);
    expect(result.run.requests.writes).toBeGreaterThan(result.run.steps.ok);
  });

  it('an apply with nothing to write reads the workspace once and takes no lease', async () => {
    await writeFiles(dir, { [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`) });
    expect((await run('apply')).result.run.outcome).toBe('applied');
    const again = await run('apply');
    expect(again.result.run).toMatchObject({ outcome: 'applied', reason: 'in-sync', hasWork: false, changes: false });
    expect(stagesOf(again.events)).toEqual(['load', 'read-live', 'validate', 'plan', 'apply', 'record']);
    expect(again.received.every((r) => r.method === 'GET')).toBe(true);
    const plan = await run('plan');
    expect(again.received.length).toBe(plan.received.length);
  });

  it('a clock that steps back makes no negative duration', async () => {
    await writeFiles(dir, { [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`) });
    let t = 1_000_000_000_000;
    const backwards = { now: () => (t -= 1_000), sleep: systemClock.sleep };
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY });
    try {
      const result = await reconcile(
        { config: syncConfig({ dir, sourceId: source, baseUrl: emulator.url }), mode: 'plan' },
        createEngineContext(client, { clock: backwards }),
      );
      expect(result.run.stages.map((s) => s.durationMs)).toEqual([0, 0, 0, 0]);
      expect(result.run.durationMs).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('a stage that throws is reported as failed, and the run says why', async () => {
    await writeFiles(dir, { [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`) });
    const events: EngineEvent[] = [];
    const client = createApiClient({ baseUrl: emulator.url, apiKey: 'not-the-key', events: { emit: () => {} } });
    try {
      await expect(
        reconcile(
          { config: syncConfig({ dir, sourceId: source, baseUrl: emulator.url }), mode: 'plan' },
          createEngineContext(client, { events: { emit: (e) => events.push(e) } }),
        ),
      ).rejects.toThrow(/HTTP 401/);
    } finally {
      await client.close();
    }
    expect(events.filter((e) => e.type === 'stage.done')).toEqual([
      expect.objectContaining({ stage: 'load', ok: true }),
      expect.objectContaining({ stage: 'read-live', ok: false }),
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'reconcile.done', status: 'error', reason: 'api-error' });
  });
});

describe('the reason of a run that threw', () => {
  it('names the lease, and says interrupted whatever failed once the run was stopped', () => {
    expect(failureReason(new LeaseHeldError('ci run 1', Date.now(), 120_000), false)).toBe('lease-held');
    expect(failureReason(new LeaseLostError('s', 'ci run 2'), false)).toBe('lease-lost');
    expect(failureReason(new LeaseHeldError('ci run 1', Date.now(), 1_000), true)).toBe('interrupted');
    expect(failureReason(new Error('boom'), false)).toBe('internal');
  });
});

describe('the run report', () => {
  it('a plan whose only write is the ownership record has work, and --detailed-exitcode exits 2', async () => {
    await writeFiles(dir, {
      [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`),
      '.cortex/catalog-pages/beta.yaml': page(`beta-${n}`),
    });
    expect((await run('apply')).result.run.outcome).toBe('applied');
    // Deleted in the UI, and its manifest removed: only the record still names it.
    const gone = await fetch(`${emulator.url}/api/v1/catalog-pages/beta-${n}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(gone.ok).toBe(true);
    await rm(join(dir, '.cortex/catalog-pages/beta.yaml'));

    const { result } = await run('plan');
    expect(result.run).toMatchObject({
      outcome: 'planned',
      reason: 'changes-planned',
      hasWork: true,
      pending: 1,
      changes: true,
      plannedTotal: { create: 0, update: 0, delete: 0, archive: 0, noop: 1 },
      counts: { inventory: expect.objectContaining({ update: 1 }) as unknown },
    });
    expect(result.run.summaryLine).toMatch(/1 ownership-record write planned\.$/);
    expect(exitCodeOf(result.run, { detailedExitcode: true })).toBe(2);

    const applied = await run('apply');
    expect(applied.result.run).toMatchObject({ outcome: 'applied', changes: true, steps: { ok: 1, failed: 0 } });
    expect((await run('plan')).result.run).toMatchObject({ hasWork: false, reason: 'in-sync' });
  });

  it('an apply the approve hook declines writes nothing, is not-approved and exits 1', async () => {
    await writeFiles(dir, { [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`) });
    let seen: number | undefined;
    const { result, received } = await run('apply', {
      approve: (_plan, _diagnostics, work) => {
        seen = work.pending;
        return Promise.resolve(false);
      },
    });
    expect(seen).toBe(2);
    expect(result.run).toMatchObject({ outcome: 'not-approved', reason: 'not-approved', hasWork: true });
    expect(exitCodeOf(result.run)).toBe(1);
    // Only the lease was written (taken and given back): no object.
    expect(received.filter((r) => r.method !== 'GET' && r.path.startsWith('/api/v1/catalog-pages'))).toEqual([]);
    const alpha = await fetch(`${emulator.url}/api/v1/catalog-pages/alpha-${n}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(alpha.status).toBe(404);
  });
});

describe('the stages against a stop or a failure: the lease is never left behind', () => {
  /** An apply with no wait for the lease: it fails at once if another run left the lease held. */
  const applyNow = async () => {
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY });
    try {
      return await reconcile(
        {
          config: syncConfig({ dir, sourceId: source, baseUrl: emulator.url, prune: false, leaseWaitMs: 0 }),
          mode: 'apply',
        },
        createEngineContext(client),
      );
    } finally {
      await client.close();
    }
  };

  it('a plan with work never takes the lease, nor writes anything', async () => {
    await writeFiles(dir, { [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`) });
    const { result, events, received } = await run('plan');
    expect(result.run.hasWork).toBe(true);
    expect(events.some((e) => e.type === 'stage.done' && e.stage === 'lease')).toBe(false);
    expect(received.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('an apply whose live read fails takes no lease: the next apply takes it at once', async () => {
    await writeFiles(dir, { [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`) });
    emulator.setFaults({ reject: [{ method: 'GET', path: '/api/v1/catalog-pages', status: 503, message: 'down' }] });
    try {
      await expect(run('apply')).rejects.toThrow(/503/);
    } finally {
      emulator.setFaults({});
    }
    expect((await applyNow()).run.outcome).toBe('applied');
  });

  for (const stage of ['load', 'read-live', 'validate', 'plan', 'lease', 'recheck', 'approve', 'apply'] as const) {
    it(`stopped as ${stage} ends: the lease is given back and the next apply takes it at once`, async () => {
      await writeFiles(dir, { [`.cortex/catalog-pages/alpha.yaml`]: page(`alpha-${n}`) });
      const stop = new AbortController();
      const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY });
      const sink = { emit: (e: EngineEvent) => e.type === 'stage.done' && e.stage === stage && stop.abort() };
      const stopped = await reconcile(
        {
          config: syncConfig({ dir, sourceId: source, baseUrl: emulator.url, prune: false }),
          mode: 'apply',
          approve: () => Promise.resolve(true),
        },
        createEngineContext(client, { signal: stop.signal, events: sink }),
      ).then(
        (done) => done.run.outcome,
        (error: unknown) => failureReason(error, stop.signal.aborted),
      );
      await client.close();
      // A stop once every change is done still shrinks the record (without the run's signal): applied.
      expect(stopped).toBe(stage === 'apply' ? 'applied' : 'interrupted');
      const next = await applyNow();
      expect(next.run.outcome).toBe('applied');
      // Stopped after the changes: the record was written as they went, so the next apply has nothing to do.
      if (stage === 'apply') expect(next.run.hasWork).toBe(false);
    });
  }
});
