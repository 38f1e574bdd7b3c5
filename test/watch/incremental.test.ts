/**
 * The watcher reads only what changed: after a full read, a run after a change reads the objects
 * the changed manifests declare (by identity) and the ownership records, and applies under the
 * lease it kept; it reads everything on any doubt, each doubt here with a test that fails when it
 * is ignored.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/types.js';
import { generateRepository } from '../../packages/bench/src/generate.js';
import { resolveConfig } from '../../src/engine/config.js';
import { createEngineContext, systemClock } from '../../src/engine/context.js';
import { reconcile } from '../../src/engine/reconcile.js';
import type { RunRecord } from '../../src/watch/history.js';
import { createLogger } from '../../src/watch/log.js';
import type { Source } from '../../src/watch/source.js';
import { createWatchClient } from '../../src/watch/engine-adapter.js';
import { type RunningWatcher, startWatcher, type WatcherOptions } from '../../src/watch/watcher.js';
import { API_KEY, type Emulator, entityTitle, removeDir, startTestEmulator, tempDir, writeFiles } from './harness.js';

const SOURCE = 'incremental-test';

let emulator: Emulator;
let root: string;
let dir: string;
let watcher: RunningWatcher | undefined;
let logged: Record<string, unknown>[];

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  dir = join(root, 'repo');
  await generateRepository(dir, { entities: 60, sourceId: SOURCE });
  await writeFile(join(dir, 'cortex-sync.yaml'), `sourceId: ${SOURCE}\nprune: true\n`);
  logged = [];
});
afterEach(async () => {
  await watcher?.stop(5000);
  watcher = undefined;
  await emulator.stop();
  await removeDir(root);
});

/** A source that changes only when the test says so (`runOnce`). */
const manualSource = (at: string): Source => ({
  description: at,
  sync: () => Promise.resolve({ dir: at, revision: 'local' }),
  watch: () => Promise.resolve(),
  close: () => Promise.resolve(),
});

const env = () => ({
  CORTEX_BASE_URL: emulator.url,
  CORTEX_API_KEY: API_KEY,
  CORTEX_SYNC_ORIGIN: 'github.com/acme/inc',
});

const start = async (options: Partial<WatcherOptions> = {}): Promise<RunRecord> => {
  watcher = await startWatcher({
    source: manualSource(dir),
    resolveConfig: (at) => resolveConfig({ dir: at }, env(), at),
    apiKey: API_KEY,
    host: '127.0.0.1',
    port: 0,
    healIntervalMs: 0,
    pruneSettleMs: 0,
    planLogFile: join(root, 'plan-log.jsonl'),
    logger: createLogger({
      write: (line) => logged.push(JSON.parse(line) as Record<string, unknown>),
      secrets: [API_KEY],
    }),
    manifestCache: { settleMs: 0 },
    ...options,
  });
  return settled(1);
};

/** The record of run `n`, once no run is in progress. */
const settled = async (n: number, timeoutMs = 20_000): Promise<RunRecord> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const w = watcher;
    if (!w) throw new Error('no watcher');
    const runs = w.history.runs();
    if (runs.length >= n && !w.runner.state().running && w.runner.state().pending === undefined)
      return runs.find((r) => r.runId === `run-${n}`) ?? (runs[0] as RunRecord);
    if (Date.now() > deadline) throw new Error(`no run ${n}: ${JSON.stringify(runs)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

let runs = 1;
const runOnce = async (trigger: 'file-change' | 'heal' = 'file-change'): Promise<RunRecord> => {
  runs = Number(watcher?.history.last()?.runId.slice(4) ?? 0);
  watcher?.runner.trigger(trigger);
  return settled(runs + 1);
};

const serviceFile = (i: number) => join(dir, '.cortex', 'catalog', `svc-${String(i).padStart(5, '0')}.yaml`);
const tagOf = (i: number) => `svc-${String(i).padStart(5, '0')}`;

const retitle = async (i: number, title: string): Promise<void> => {
  const file = serviceFile(i);
  await writeFile(file, (await readFile(file, 'utf8')).replace(/^ {2}title: .*$/m, `  title: ${title}`));
};

const api = (method: string, path: string, body?: string, contentType = 'application/json') =>
  fetch(`${emulator.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': contentType },
    ...(body !== undefined ? { body } : {}),
  });

/** The requests the run made (the emulator's log), by method. */
const requestsSince = (from: number) => emulator.requests.slice(from);

describe('the watcher reads only what changed', () => {
  it('a one-file change reads that object and the records, and writes it, under the lease it kept', async () => {
    const first = await start();
    expect(first).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'no-cache' } });

    await retitle(10, 'Service ten, edited');
    const second = await runOnce();
    expect(second).toMatchObject({ result: 'applied', read: { path: 'incremental', objects: 1, underLease: 'held' } });
    expect(entityTitle(emulator, tagOf(10))).toBe('Service ten, edited');

    await retitle(11, 'Service eleven, edited');
    const from = emulator.requests.length;
    const third = await runOnce();
    expect(third).toMatchObject({ result: 'applied', read: { path: 'incremental', objects: 1, underLease: 'held' } });
    const sent = requestsSince(from);
    // The records, the entity (details and descriptor), the kept lease's check, the write, and the
    // lease's look after the run (does another apply wait for it?).
    expect(sent.length).toBeLessThanOrEqual(6);
    expect(sent.filter((r) => r.method !== 'GET')).toHaveLength(1);
    expect(sent.some((r) => r.path === '/api/v1/catalog/descriptors' && r.query?.includes('service'))).toBe(false);
    expect(entityTitle(emulator, tagOf(11))).toBe('Service eleven, edited');
    // Said in the log line and the metrics.
    expect(logged.find((l) => l.runId === third.runId && l.msg === 'run applied changes')).toMatchObject({
      read: { path: 'incremental', objects: 1 },
    });
    const metrics = await (await fetch(`${watcher?.url ?? ''}/metrics`)).text();
    expect(metrics).toMatch(/cortex_sync_reconcile_reads_total\{path="incremental",reason=""\} 2/);
    expect(metrics).toMatch(/cortex_sync_reconcile_reads_total\{path="full",reason="no-cache"\} 1/);
  });

  it('objects deleted in the UI: the GET sees 404, the run reads everything and puts back what else went', async () => {
    await start();
    expect((await api('DELETE', `/api/v1/catalog/${tagOf(12)}`)).ok).toBe(true);
    expect((await api('DELETE', `/api/v1/catalog/${tagOf(13)}`)).ok).toBe(true);
    await retitle(12, 'Service twelve, edited');
    const run = await runOnce();
    expect(run).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'gone-live' } });
    // The full read saw the other deletion too: both are back.
    expect(entityTitle(emulator, tagOf(12))).toBe('Service twelve, edited');
    expect(entityTitle(emulator, tagOf(13))).toBe('Service 13');
  });

  it('another source takes over an object this one manages: the run reads everything and refuses (not the edit alone)', async () => {
    await start();
    const other = join(root, 'other');
    await writeFiles(other, {
      'cortex-sync.yaml': 'sourceId: someone-else\n',
      [`.cortex/catalog/${tagOf(14)}.yaml`]: await readFile(serviceFile(14), 'utf8'),
    });
    const client = createWatchClient(
      (await resolveConfig({ dir: other }, env(), other)).config,
      API_KEY,
      { emit: () => {} },
      systemClock,
    );
    try {
      const { config } = await resolveConfig(
        { dir: other, allowTakeover: true },
        { ...env(), CORTEX_SYNC_ORIGIN: 'github.com/acme/other' },
        other,
      );
      const taken = await reconcile({ config, mode: 'apply' }, createEngineContext(client));
      expect(taken.run.outcome).toBe('applied');
    } finally {
      await client.close();
    }
    await retitle(15, 'Service fifteen, edited');
    const run = await runOnce();
    expect(run).toMatchObject({ result: 'refused', read: { path: 'full', reason: 'ownership-changed' } });
    expect(run.errors.join('\n')).toMatch(/managed by source `someone-else`/);
    expect(entityTitle(emulator, tagOf(15))).toBe('Service 15');
  });

  it("a changed object that exists live outside this source's record: the run reads everything (an ownership question)", async () => {
    await start();
    const descriptor = `openapi: 3.0.1\ninfo:\n  title: Made in the UI\n  x-cortex-tag: made-in-ui\n  x-cortex-type: service\n`;
    expect((await api('POST', '/api/v1/open-api', descriptor, 'application/openapi;charset=UTF-8')).ok).toBe(true);
    await writeFiles(dir, { '.cortex/catalog/made-in-ui.yaml': descriptor.replace('Made in the UI', 'Adopted') });
    const run = await runOnce();
    expect(run).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'not-in-record' } });
    expect(entityTitle(emulator, 'made-in-ui')).toBe('Adopted');
  });

  it('a file deleted: the run reads everything at once and prunes (never on a partial read)', async () => {
    await start();
    await rm(serviceFile(16));
    const run = await runOnce();
    expect(run).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'manifest-removed' } });
    expect(run.summary).toMatchObject({ archive: 1 });
    const id = emulator.state.entities.idByTag[tagOf(16)];
    expect(id && emulator.state.entities.byId[id]?.isArchived).toBe(true);
    // Removals applied leave nothing kept: the next run reads everything again.
    await retitle(17, 'Service seventeen, edited');
    expect(await runOnce()).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'no-cache' } });
  });

  it('a changed entity type: the run reads everything (its schema judges other entities)', async () => {
    await start();
    const file = join(dir, '.cortex', 'entity-types', 'bench-datastore.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('Benchmark entity type', 'The datastore type'));
    expect(await runOnce()).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'type-changed' } });
  });

  it('a changed cortex-sync.yaml: the run reads everything', async () => {
    await start();
    await writeFile(join(dir, 'cortex-sync.yaml'), `sourceId: ${SOURCE}\nprune: true\nprotect: ["entity/svc-00001"]\n`);
    await retitle(18, 'Service eighteen, edited');
    expect(await runOnce()).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'config-changed' } });
  });

  it('after a run with an error (a write refused with 409), the next run reads everything', async () => {
    await start();
    emulator.setFaults({
      reject: [
        {
          method: 'POST',
          path: '/api/v1/open-api',
          bodyIncludes: 'Service nineteen, edited',
          status: 409,
          message: 'conflict',
        },
      ],
    });
    await retitle(19, 'Service nineteen, edited');
    const failed = await runOnce();
    expect(failed).toMatchObject({ result: 'partial', read: { path: 'incremental' } });
    emulator.setFaults({});
    const next = await runOnce();
    expect(next).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'no-cache' } });
    expect(entityTitle(emulator, tagOf(19))).toBe('Service nineteen, edited');
  });

  it('the heal interval reads everything, and so does a run once what is kept is older than it', async () => {
    let offset = 0;
    await start({
      healIntervalMs: 3_600_000,
      clock: { ...systemClock, now: () => Date.now() + offset },
    });
    expect(await runOnce('heal')).toMatchObject({ read: { path: 'full', reason: 'heal' } });
    offset = 3_600_000;
    await retitle(20, 'Service twenty, edited');
    expect(await runOnce()).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'cache-expired' } });
  });

  it('two changes, one arriving while the first is applied: the run after it applies the second', async () => {
    let armed = false;
    let hold: (() => void) | undefined;
    let writing: (() => void) | undefined;
    const inWrite = new Promise<void>((resolve) => {
      writing = resolve;
    });
    const wrap = (client: ApiClient): ApiClient => ({
      paginate: (req, key) => client.paginate(req, key),
      stats: () => client.stats(),
      close: () => client.close(),
      request: async (req) => {
        if (armed && hold === undefined && req.method === 'POST' && req.operation.includes(tagOf(21))) {
          const released = new Promise<void>((resolve) => {
            hold = resolve;
          });
          writing?.();
          await released;
        }
        return client.request(req);
      },
    });
    await start({ createClient: (...args) => wrap(createWatchClient(...args)) });
    armed = true;
    await retitle(21, 'Service twenty-one, edited');
    const before = Number(watcher?.history.last()?.runId.slice(4));
    watcher?.runner.trigger('file-change');
    await inWrite;
    await retitle(22, 'Service twenty-two, edited');
    watcher?.runner.trigger('file-change');
    hold?.();
    const last = await settled(before + 2);
    expect(watcher?.history.runs()[1]).toMatchObject({ result: 'applied', read: { path: 'incremental', objects: 1 } });
    expect(last).toMatchObject({ result: 'applied', read: { path: 'incremental', objects: 1 } });
    expect(entityTitle(emulator, tagOf(21))).toBe('Service twenty-one, edited');
    expect(entityTitle(emulator, tagOf(22))).toBe('Service twenty-two, edited');
  });

  it('another apply of the source waits for the kept lease, gets it once the watcher lets it go, and the watcher then re-checks', async () => {
    await start({ leaseLingerMs: 1500 });
    expect(watcher?.liveCache()?.warm).toBe(true);
    const { config } = await resolveConfig({ dir }, env(), dir);
    await retitle(23, 'Service twenty-three, by hand');
    const client = createWatchClient(config, API_KEY, { emit: () => {} }, systemClock);
    const events: string[] = [];
    try {
      const started = Date.now();
      const other = await reconcile(
        { config, mode: 'apply' },
        createEngineContext(client, { events: { emit: (e) => events.push(e.type) } }),
      );
      expect(other.run.outcome).toBe('applied');
      // It waited for the watcher's lease (said so), which was let go when the watcher saw it wait.
      expect(events).toContain('lease.waiting');
      expect(Date.now() - started).toBeGreaterThan(500);
    } finally {
      await client.close();
    }
    await retitle(24, 'Service twenty-four, edited');
    const run = await runOnce();
    // The lease it had was let go: taken again, and what the plan writes re-checked under it.
    expect(run).toMatchObject({ result: 'applied', read: { path: 'incremental', underLease: 'recheck' } });
    expect(entityTitle(emulator, tagOf(24))).toBe('Service twenty-four, edited');
  });

  it('an apply that breaks the kept lease (--break-lease): the watcher notices before it writes, and takes it again', async () => {
    await start({ leaseLingerMs: 60_000 });
    const { config } = await resolveConfig({ dir, breakLease: true }, env(), dir);
    await retitle(25, 'Service twenty-five, by hand');
    const client = createWatchClient(config, API_KEY, { emit: () => {} }, systemClock);
    try {
      const other = await reconcile({ config, mode: 'apply' }, createEngineContext(client));
      expect(other.run.outcome).toBe('applied');
    } finally {
      await client.close();
    }
    await retitle(26, 'Service twenty-six, edited');
    const run = await runOnce();
    expect(run).toMatchObject({ result: 'applied', read: { underLease: 'recheck' } });
    expect(entityTitle(emulator, tagOf(26))).toBe('Service twenty-six, edited');
  });

  it('more changed objects than reading them one by one is worth: the run reads everything', async () => {
    await start();
    for (const i of [27, 28, 29, 30, 31, 32, 33, 34]) await retitle(i, `Service ${i}, edited`);
    expect(await runOnce()).toMatchObject({ result: 'applied', read: { path: 'full', reason: 'many-changes' } });
    expect(entityTitle(emulator, tagOf(31))).toBe('Service 31, edited');
  });

  it('a changed scorecard: its descriptor is read by tag, not the whole workspace', async () => {
    const fixture = join(import.meta.dirname, '..', '..', 'src', 'kinds', 'scorecard', 'fixtures');
    const scorecard = join('.cortex', 'scorecards', 'fixture-readiness.yaml');
    const text = await readFile(join(fixture, scorecard), 'utf8');
    await writeFiles(dir, { [scorecard]: text });
    await start();
    await writeFiles(dir, { [scorecard]: text.replace(/^name: .*$/m, 'name: Readiness, edited') });
    const from = emulator.requests.length;
    const run = await runOnce();
    const sent = requestsSince(from);
    expect(run).toMatchObject({ result: 'applied', read: { path: 'incremental', objects: 1, underLease: 'held' } });
    // The records, the scorecard's descriptor, the kept lease's check, the write, the lease's look after the run.
    expect(
      sent.filter((r) => r.method === 'GET' && r.path === '/api/v1/scorecards/fixture-readiness/descriptor'),
    ).toHaveLength(1);
    expect(sent.filter((r) => r.path === '/api/v1/scorecards')).toEqual([]);
    expect(sent.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /api/v1/scorecards/descriptor',
    ]);
    expect(sent.length).toBeLessThanOrEqual(5);
    expect(emulator.state.scorecards.items.find((s) => s.tag === 'fixture-readiness')?.name).toBe('Readiness, edited');
  });
});
