/**
 * An apply with work reads the workspace once: under the apply lease it re-reads only what its
 * plan writes (those objects by identity, and the ownership records); when any of that changed
 * since the plan read it — or the plan removes objects — it reads everything again and plans
 * again, as before. A no-op apply reads once and takes no lease.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { DotSegmentPathError } from '../../src/api/errors.js';
import type { ApiClient } from '../../src/api/types.js';
import { createEngineContext, type EngineEvent } from '../../src/engine/context.js';
import { type LeaseKeeper, releaseEachRun } from '../../src/engine/lease-keeper.js';
import { reconcile } from '../../src/engine/reconcile.js';
import { unreadableById } from '../../src/engine/recheck.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { removeDir, syncConfig, tempDir, writeFiles } from './helpers.js';

const API_KEY = 'recheck-test-key-0123456789';

const page = (slug: string, name = slug): string =>
  `slug: ${slug}\nname: ${name}\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`;

let emulator: RunningEmulator;
let client: ApiClient;
let dir: string;
let source: string;
let n = 0;
beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
});
afterAll(async () => {
  await client.close();
  await emulator.stop();
});
beforeEach(async () => {
  dir = await tempDir();
  n += 1;
  source = `github.com/acme/recheck-${n}`;
});
afterEach(() => removeDir(dir));

const apply = async (leases?: LeaseKeeper, prune = false) => {
  const events: EngineEvent[] = [];
  const from = emulator.requests.length;
  const result = await reconcile(
    {
      config: syncConfig({ dir, sourceId: source, baseUrl: emulator.url, prune }),
      mode: 'apply',
      ...(leases ? { session: { leases } } : {}),
    },
    createEngineContext(client, { events: { emit: (e) => events.push(e) } }),
  );
  const stages = events.flatMap((e) => (e.type === 'stage.done' ? [`${e.stage}${e.underLease ? '*' : ''}`] : []));
  return { result, stages, received: emulator.requests.slice(from) };
};

/** A keeper that lets `meanwhile` happen between the plan and the lease (another writer). */
const meanwhile = (act: () => Promise<void>): LeaseKeeper => ({
  take: async (...args) => {
    await act();
    return releaseEachRun.take(...args);
  },
  done: (lease, clean) => releaseEachRun.done(lease, clean),
});

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${emulator.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

const lists = (received: { method: string; path: string }[]) =>
  received.filter((r) => r.method === 'GET' && /\/(catalog-pages|definitions|descriptors|initiatives)$/.test(r.path));

describe('no double read under the apply lease', () => {
  it('re-reads only the objects it writes and the records: no list is read twice', async () => {
    await writeFiles(dir, {
      '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`),
      '.cortex/catalog-pages/beta.yaml': page(`beta-${n}`),
    });
    expect((await apply()).result.run.outcome).toBe('applied');
    await writeFiles(dir, { '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`, 'Alpha, renamed') });
    const { result, stages, received } = await apply();
    expect(result.run).toMatchObject({ outcome: 'applied', reason: 'changes-applied' });
    expect(result.run.read).toEqual({ path: 'full', underLease: 'recheck' });
    expect(stages).toEqual(['load', 'read-live', 'validate', 'plan', 'lease', 'recheck*', 'apply*', 'record*']);
    // The page list is read once (by the plan); under the lease, the one page it writes.
    expect(lists(received).filter((r) => r.path === '/api/v1/catalog-pages')).toHaveLength(1);
    expect(received.filter((r) => r.method === 'GET' && r.path === `/api/v1/catalog-pages/alpha-${n}`)).toHaveLength(1);
    expect(received.filter((r) => r.method === 'GET' && r.path.includes(`beta-${n}`))).toHaveLength(0);
  });

  it('a plan that writes more objects than a whole read costs re-reads in bulk, not one by one', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`.cortex/catalog-pages/p${i}.yaml`] = page(`many-${n}-${i}`);
    await writeFiles(dir, files);
    const { result, received } = await apply();
    expect(result.run.outcome).toBe('applied');
    expect(result.run.read).toEqual({ path: 'full', underLease: 'full', fallback: 'many-changes' });
    // No page is read by its slug: the lists are read twice (the plan, then under the lease).
    expect(received.filter((r) => r.method === 'GET' && r.path.startsWith(`/api/v1/catalog-pages/many-`))).toEqual([]);
    const gets = received.filter((r) => r.method === 'GET').length;
    expect(gets).toBeLessThan(40);
  });

  it('stopped once the lease is taken: the error says the lease was written, not that nothing was', async () => {
    await writeFiles(dir, { '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`) });
    const stop = new AbortController();
    const run = reconcile(
      { config: syncConfig({ dir, sourceId: source, baseUrl: emulator.url }), mode: 'apply' },
      createEngineContext(client, {
        signal: stop.signal,
        events: { emit: (e) => e.type === 'stage.done' && e.stage === 'lease' && stop.abort() },
      }),
    );
    await expect(run).rejects.toThrow(
      /^interrupted before any change was made \(\d+ write requests? went to cortex-sync's own records, such as its lease\)$/,
    );
    expect((await api('GET', `/api/v1/catalog-pages/alpha-${n}`)).status).toBe(404);

    const early = new AbortController();
    early.abort();
    await expect(
      reconcile(
        { config: syncConfig({ dir, sourceId: source, baseUrl: emulator.url }), mode: 'apply' },
        createEngineContext(client, { signal: early.signal }),
      ),
    ).rejects.toThrow(/^interrupted before anything was written$/);
  });

  it('an object deleted between the plan and the lease: everything is read again and the plan made again', async () => {
    await writeFiles(dir, { '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`) });
    expect((await apply()).result.run.outcome).toBe('applied');
    await writeFiles(dir, { '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`, 'Alpha, renamed') });
    const { result, stages } = await apply(
      meanwhile(async () => {
        expect((await api('DELETE', `/api/v1/catalog-pages/alpha-${n}`)).ok).toBe(true);
      }),
    );
    expect(result.run.read).toEqual({ path: 'full', underLease: 'full', fallback: 'changed' });
    expect(stages).toEqual([
      'load',
      'read-live',
      'validate',
      'plan',
      'lease',
      'recheck*',
      'load*',
      'read-live*',
      'validate*',
      'plan*',
      'apply*',
      'record*',
    ]);
    // The plan applied is the one read again: the page is created, not updated.
    expect(result.status === 'applied' && result.report.results.map((r) => [r.change.action, r.outcome])).toEqual([
      ['create', 'ok'],
    ]);
    expect(emulator.state.catalogPages.items.find((p) => p.slug === `alpha-${n}`)?.name).toBe('Alpha, renamed');
  });

  it("another source's record written between the plan and the lease: everything is read again", async () => {
    await writeFiles(dir, { '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`) });
    expect((await apply()).result.run.outcome).toBe('applied');
    await writeFiles(dir, { '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`, 'Alpha, renamed') });
    const other = await tempDir();
    try {
      await writeFiles(other, { '.cortex/catalog-pages/other.yaml': page(`other-${n}`) });
      const { result } = await apply(
        meanwhile(async () => {
          const done = await reconcile(
            {
              config: syncConfig({ dir: other, sourceId: `${source}-other`, baseUrl: emulator.url, prune: false }),
              mode: 'apply',
            },
            createEngineContext(client),
          );
          expect(done.run.outcome).toBe('applied');
        }),
      );
      expect(result.run.read).toMatchObject({ underLease: 'full', fallback: 'changed' });
      expect(result.run.outcome).toBe('applied');
    } finally {
      await removeDir(other);
    }
  });

  it('a plan that removes objects reads everything again under the lease (a removal is never decided on a partial read)', async () => {
    await writeFiles(dir, {
      '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`),
      '.cortex/catalog-pages/beta.yaml': page(`beta-${n}`),
      '.cortex/catalog-pages/gamma.yaml': page(`gamma-${n}`),
      '.cortex/catalog-pages/delta.yaml': page(`delta-${n}`),
      '.cortex/catalog-pages/epsilon.yaml': page(`epsilon-${n}`),
    });
    expect((await apply(undefined, true)).result.run.outcome).toBe('applied');
    await writeFiles(dir, { '.cortex/catalog-pages/beta.yaml': page(`beta-${n}`, 'Beta, renamed') });
    const { rm } = await import('node:fs/promises');
    await rm(`${dir}/.cortex/catalog-pages/alpha.yaml`);
    const { result } = await apply(undefined, true);
    expect(result.run.read).toEqual({ path: 'full', underLease: 'full', fallback: 'removals' });
    expect(result.run).toMatchObject({ outcome: 'applied', reason: 'changes-applied' });
  });

  it("an id a path cannot hold ('..', refused by the client before sending) is not read by identity; other failures are not hidden", () => {
    const refused = new DotSegmentPathError({ operation: 'read catalog page `..`', method: 'GET', path: '/x/..' });
    expect(unreadableById(refused)).toBeUndefined();
    const other = new Error('HTTP 500');
    expect(() => unreadableById(other)).toThrow(other);
  });

  it('an apply with nothing to write reads once, takes no lease and re-checks nothing', async () => {
    await writeFiles(dir, { '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`) });
    expect((await apply()).result.run.outcome).toBe('applied');
    const { result, stages, received } = await apply();
    expect(result.run).toMatchObject({ reason: 'in-sync', read: { path: 'full' } });
    expect(result.run.read?.underLease).toBeUndefined();
    expect(stages).toEqual(['load', 'read-live', 'validate', 'plan', 'apply', 'record']);
    expect(received.every((r) => r.method === 'GET')).toBe(true);
  });
});
