/**
 * The watcher keeps what it parsed: after the first run, a one-file change reads and parses that
 * one file, and the kept (frozen) objects of every other kind go through plan and apply unharmed.
 */
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/engine/config.js';
import { createDirSource } from '../../src/watch/dir-source.js';
import type { RunRecord } from '../../src/watch/history.js';
import type { Source } from '../../src/watch/source.js';
import { createLogger } from '../../src/watch/log.js';
import { type RunningWatcher, startWatcher } from '../../src/watch/watcher.js';
import { API_KEY, type Emulator, entityTitle, removeDir, sleep, startTestEmulator, tempDir } from './harness.js';

const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples');

let emulator: Emulator;
let root: string;
let dir: string;
let watcher: RunningWatcher | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  dir = join(root, 'repo');
  await cp(EXAMPLES, dir, { recursive: true });
  // An Initiative's result depends on the day (its target date), so it is re-read every load; left
  // out here so that the count below is about the cache alone.
  await rm(join(dir, '.cortex', 'initiatives'), { recursive: true, force: true });
});
afterEach(async () => {
  await watcher?.stop(5000);
  watcher = undefined;
  await emulator.stop();
  await removeDir(root);
});

const runAfter = async (w: RunningWatcher, count: number, timeoutMs = 15_000): Promise<RunRecord> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs = w.history.runs();
    if (runs.length > count && !w.runner.state().running) return runs[0] as RunRecord;
    if (Date.now() > deadline) throw new Error(`no run ${count + 1}: ${JSON.stringify(runs)}`);
    await sleep(10);
  }
};

/** One file-change run with nothing changed: the load after it starts from the noted changes. */
const noteOnly = async (w: RunningWatcher, cache: { lastLoadWalked: boolean }): Promise<void> => {
  const count = w.history.runs().length;
  w.runner.trigger('file-change');
  await runAfter(w, count);
  expect(cache.lastLoadWalked).toBe(false);
};

const watch = (source: Source): Promise<RunningWatcher> => {
  // Both folders are checkouts of one repository: one origin (the operator's setting; a git
  // source gets it from its remote).
  const env = { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: API_KEY, CORTEX_SYNC_ORIGIN: 'github.com/acme/catalog' };
  return startWatcher({
    source,
    resolveConfig: (at) => resolveConfig({ dir: at }, env, at),
    apiKey: API_KEY,
    host: '127.0.0.1',
    port: 0,
    healIntervalMs: 0,
    planLogFile: join(root, 'plan-log.jsonl'),
    logger: createLogger({ write: () => {}, secrets: [API_KEY] }),
    // Trust a file at once (tests write files and load them within milliseconds).
    manifestCache: { settleMs: 0 },
  });
};

describe('watch keeps what it parsed', () => {
  it('re-reads only the changed file after the first run, and applies the change', async () => {
    watcher = await watch(createDirSource({ dir, debounceMs: 50 }));
    const first = await runAfter(watcher, 0);
    expect(first.result, first.errors.join('\n')).toBe('applied');
    const cache = watcher.manifestCache();
    if (!cache) throw new Error('no manifest cache after the first run');
    const files = cache.size;
    expect(files).toBeGreaterThan(10);
    const before = cache.totals;

    const file = join(dir, '.cortex', 'catalog', 'payments-api.yaml');
    const text = await readFile(file, 'utf8');
    const changed = text.replace(/^( {2}title: ).*$/m, '$1Payments API (edited)');
    expect(changed).not.toBe(text);
    await writeFile(file, changed);

    const second = await runAfter(watcher, 1);
    expect(second).toMatchObject({ trigger: 'file-change', result: 'applied', summary: { update: 1 } });
    expect(entityTitle(emulator, 'payments-api')).toBe('Payments API (edited)');
    const after = cache.totals;
    // The plan read the changed file; under the lease only what it writes is re-checked (no file is read again).
    expect(after.loaded - before.loaded).toBe(1);
    expect(after.reused - before.reused).toBe(files - 1);
    expect(cache.size).toBe(files);
  });

  it('starts afresh when the manifest root moves (another checkout path)', async () => {
    const other = join(root, 'other');
    await cp(dir, other, { recursive: true });
    let current = dir;
    watcher = await watch({
      description: 'two checkouts',
      sync: async () => ({ dir: current, revision: current === dir ? 'one' : 'two' }),
      watch: async () => {},
      close: async () => {},
    });
    expect((await runAfter(watcher, 0)).result).toBe('applied');
    const first = watcher.manifestCache();

    current = other;
    watcher.runner.trigger('commit');
    expect((await runAfter(watcher, 1)).result).toBe('applied');
    const second = watcher.manifestCache();
    expect(second).not.toBe(first);
    // Every file of the new root was read (none reused from the old one's results).
    expect(second?.totals.loaded).toBe(second?.size);
  });

  it('a file-change run looks only at what the events named; the heal run walks and applies what they missed', async () => {
    let changedFiles: string[] = [];
    watcher = await watch({
      description: 'events told by the test',
      sync: async () => {
        const files = changedFiles;
        changedFiles = [];
        return { dir, revision: 'local', changedFiles: files };
      },
      watch: async () => {},
      close: async () => {},
    });
    expect((await runAfter(watcher, 0)).result).toBe('applied');
    const cache = watcher.manifestCache();
    if (!cache) throw new Error('no manifest cache after the first run');
    expect(cache.lastLoadWalked).toBe(true);

    const retitle = async (rel: string, title: string) => {
      const file = join(dir, rel);
      await writeFile(file, (await readFile(file, 'utf8')).replace(/^( {2}title: ).*$/m, `$1${title}`));
    };
    await retitle('.cortex/catalog/payments-api.yaml', 'Payments API (noted)');
    changedFiles = ['.cortex/catalog/payments-api.yaml'];
    watcher.runner.trigger('file-change');
    expect(await runAfter(watcher, 1)).toMatchObject({ result: 'applied', summary: { update: 1 } });
    expect(cache.lastLoadWalked).toBe(false);
    expect(entityTitle(emulator, 'payments-api')).toBe('Payments API (noted)');

    // An event lost (nothing named): the change waits, and nothing is removed meanwhile.
    const live = Object.keys(emulator.state.entities.byId).length;
    expect(live).toBeGreaterThan(5);
    await retitle('.cortex/catalog/payments-api.yaml', 'Payments API (missed)');
    watcher.runner.trigger('file-change');
    const missed = await runAfter(watcher, 2);
    expect(missed.result).toBe('applied');
    expect(missed.summary).toMatchObject({ update: 0, delete: 0 });
    expect(entityTitle(emulator, 'payments-api')).toBe('Payments API (noted)');
    expect(Object.keys(emulator.state.entities.byId)).toHaveLength(live);

    watcher.runner.trigger('heal');
    expect(await runAfter(watcher, 3)).toMatchObject({ trigger: 'heal', result: 'applied', summary: { update: 1 } });
    expect(cache.lastLoadWalked).toBe(true);
    expect(entityTitle(emulator, 'payments-api')).toBe('Payments API (missed)');

    // The look that confirms a removal walks too: a file is judged missing only on a walk.
    await noteOnly(watcher, cache);
    watcher.runner.trigger('settle');
    expect(await runAfter(watcher, 5)).toMatchObject({ trigger: 'settle', result: 'applied' });
    expect(cache.lastLoadWalked).toBe(true);
  });

  it('the changes told to a run that stopped at an invalid cortex-sync.yaml are read by the next run', async () => {
    let changedFiles: string[] = [];
    watcher = await watch({
      description: 'events told by the test',
      sync: async () => {
        const files = changedFiles;
        changedFiles = [];
        return { dir, revision: 'local', changedFiles: files };
      },
      watch: async () => {},
      close: async () => {},
    });
    expect((await runAfter(watcher, 0)).result).toBe('applied');
    const config = join(dir, 'cortex-sync.yaml');
    const valid = await readFile(config, 'utf8');
    const manifest = join(dir, '.cortex/catalog/payments-api.yaml');
    await writeFile(manifest, (await readFile(manifest, 'utf8')).replace(/^( {2}title: ).*$/m, '$1Edited meanwhile'));
    await writeFile(config, 'sourceId: [not a source id\n');
    changedFiles = ['.cortex/catalog/payments-api.yaml', 'cortex-sync.yaml'];
    watcher.runner.trigger('file-change');
    expect(await runAfter(watcher, 1)).toMatchObject({ result: 'invalid', reason: 'invalid-config' });

    // The fix names only the configuration; the edit told to the stopped run is not forgotten.
    await writeFile(config, valid);
    changedFiles = ['cortex-sync.yaml'];
    watcher.runner.trigger('file-change');
    expect(await runAfter(watcher, 2)).toMatchObject({ result: 'applied', summary: { update: 1 } });
    expect(entityTitle(emulator, 'payments-api')).toBe('Edited meanwhile');
  });
});
