/**
 * The watcher takes no list's word for absence: with the emulator leaving a managed Initiative,
 * or the source's own ownership record, out of list answers (one read, and five in a row), its
 * incremental runs and its full reads never POST a duplicate, never bind the source to another
 * origin, and never drop an entry of the record. An incremental edit of an Initiative reads the
 * scorecard it names again.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/engine/config.js';
import { inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import type { RunRecord } from '../../src/watch/history.js';
import { createLogger } from '../../src/watch/log.js';
import type { Source } from '../../src/watch/source.js';
import { type RunningWatcher, startWatcher } from '../../src/watch/watcher.js';
import { API_KEY, type Emulator, removeDir, startTestEmulator, tempDir, writeFiles } from './harness.js';

const SOURCE = 'absence-watch';
const NAME = 'Kill2 test 3';

let emulator: Emulator;
let root: string;
const watchers: RunningWatcher[] = [];

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
});
afterEach(async () => {
  await Promise.all(watchers.splice(0).map((w) => w.stop(5000)));
  await emulator.stop();
  await removeDir(root);
});

const scorecard = (levels = ['Gold']) => `tag: readiness
name: Readiness
ladder:
  levels:
${levels.map((name, i) => `    - name: ${name}\n      rank: ${i + 1}\n      color: "#FFD700"`).join('\n')}
rules:
  - title: Has git
    expression: git != null
    level: Gold
`;
const initiative = (description: string, rank = 1) => `name: ${NAME}
description: ${description}
scorecardTag: readiness
targetDate: "2030-12-31"
isDraft: false
emphasizedLevels:
  - rank: ${rank}
`;

const manualSource = (at: string): Source => ({
  description: at,
  sync: () => Promise.resolve({ dir: at, revision: 'local' }),
  watch: () => Promise.resolve(),
  close: () => Promise.resolve(),
});

const start = async (dir: string, origin: string): Promise<RunningWatcher> => {
  const watcher = await startWatcher({
    source: manualSource(dir),
    resolveConfig: (at) =>
      resolveConfig(
        { dir: at },
        { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: API_KEY, CORTEX_SYNC_ORIGIN: origin },
        at,
      ),
    apiKey: API_KEY,
    host: '127.0.0.1',
    port: 0,
    healIntervalMs: 0,
    pruneSettleMs: 0,
    planLogFile: join(root, `plan-log-${watchers.length}.jsonl`),
    logger: createLogger({ write: () => {}, secrets: [API_KEY] }),
    manifestCache: { settleMs: 0 },
  });
  watchers.push(watcher);
  return watcher;
};

/** The record of run `n` of `watcher`, once no run is in progress. */
const settled = async (watcher: RunningWatcher, n: number): Promise<RunRecord> => {
  for (;;) {
    const runs = watcher.history.runs();
    const state = watcher.runner.state();
    const run = runs.find((r) => r.runId === `run-${n}`);
    if (run !== undefined && !state.running && state.pending === undefined) return run;
    await new Promise((r) => setTimeout(r, 10));
  }
};

const runAgain = async (watcher: RunningWatcher, trigger: 'file-change' | 'heal'): Promise<RunRecord> => {
  const n = Number(watcher.history.last()?.runId.slice(4) ?? 0);
  watcher.runner.trigger(trigger);
  return settled(watcher, n + 1);
};

const api = async (path: string): Promise<unknown> =>
  (await fetch(`${emulator.url}${path}`, { headers: { authorization: `Bearer ${API_KEY}` } })).json();

const initiatives = async (): Promise<{ name: string; description?: string }[]> => {
  emulator.setFaults({});
  const body = (await api('/api/v1/initiatives?includeDrafts=true&includeExpired=true&pageSize=1000')) as {
    initiatives: { name: string; description?: string }[];
  };
  return body.initiatives.filter((i) => i.name === NAME);
};

const recordOf = async (): Promise<Record<string, unknown>> =>
  (
    (await api(`/api/v1/catalog/${encodeURIComponent(inventoryTag(SOURCE))}/openapi`)) as {
      info: { 'x-cortex-definition': Record<string, unknown> };
    }
  ).info['x-cortex-definition'];

const repository = async (name: string, files: Record<string, string>): Promise<string> => {
  const dir = join(root, name);
  await writeFiles(dir, { 'cortex-sync.yaml': `sourceId: ${SOURCE}\n`, ...files });
  return dir;
};

describe('the watcher never takes a short list for absence', () => {
  for (const reads of [1, 5]) {
    it(`a managed Initiative left out of ${reads} list answer${reads > 1 ? 's' : ''}: the incremental run and a heal update it, never POST`, async () => {
      const dir = await repository('repo', {
        '.cortex/scorecards/readiness.yaml': scorecard(),
        '.cortex/initiatives/kill2.yaml': initiative('Reach Gold'),
      });
      const watcher = await start(dir, 'github.com/acme/catalog');
      expect(await settled(watcher, 1)).toMatchObject({ result: 'applied' });
      const recordBefore = await recordOf();

      for (const [trigger, description] of [
        ['file-change', 'Reach Gold soon'],
        ['heal', 'Reach Gold by winter'],
      ] as const) {
        await writeFiles(dir, { '.cortex/initiatives/kill2.yaml': initiative(description) });
        emulator.setFaults({ dropFromLists: [{ match: NAME, reads, path: '/api/v1/initiatives' }] });
        const from = emulator.requests.length;
        const run = await runAgain(watcher, trigger);
        expect(run, trigger).toMatchObject({ result: 'applied' });
        const sent = emulator.requests.slice(from);
        expect(
          sent.filter((r) => r.method === 'POST' && r.path === '/api/v1/initiatives'),
          trigger,
        ).toEqual([]);
        expect(await initiatives(), trigger).toEqual([expect.objectContaining({ description })]);
      }
      expect((await recordOf()).objects).toEqual(recordBefore.objects);
    });

    it(`the source's record left out of ${reads} list answer${reads > 1 ? 's' : ''}: a watcher of another origin is refused (source-claimed), writes nothing`, async () => {
      const rightful = await repository('rightful', { '.cortex/scorecards/readiness.yaml': scorecard() });
      const first = await start(rightful, 'github.com/acme/catalog');
      expect(await settled(first, 1)).toMatchObject({ result: 'applied' });
      const before = await recordOf();

      const fork = await repository('fork', { '.cortex/scorecards/readiness.yaml': scorecard(['Gold', 'Silver']) });
      emulator.setFaults({
        dropFromLists: [{ match: inventoryTag(SOURCE), reads, path: '/api/v1/catalog/descriptors' }],
      });
      const from = emulator.requests.length;
      const other = await start(fork, 'github.com/mallory/fork');
      const run = await settled(other, 1);
      expect(run.result).toBe('refused');
      expect(run.errors.join('\n')).toMatch(/belongs to origin `github\.com\/acme\/catalog`/);
      expect(emulator.requests.slice(from).filter((r) => r.method !== 'GET')).toEqual([]);
      emulator.setFaults({});
      expect(await recordOf()).toEqual(before);
    });
  }

  it('an incremental edit of an Initiative reads the scorecard it names again: a level removed in the UI is judged, not the kept copy', async () => {
    const dir = await repository('repo', {
      '.cortex/scorecards/readiness.yaml': scorecard(['Gold', 'Silver']),
      '.cortex/initiatives/kill2.yaml': initiative('Reach Gold'),
    });
    const watcher = await start(dir, 'github.com/acme/catalog');
    expect(await settled(watcher, 1)).toMatchObject({ result: 'applied' });
    // Someone deletes the scorecard in the UI; the edit of the Initiative alone changes in the repository.
    const deleted = await fetch(`${emulator.url}/api/v1/scorecards/readiness`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(deleted.ok).toBe(true);
    await writeFiles(dir, { '.cortex/initiatives/kill2.yaml': initiative('Reach Silver', 2) });
    const from = emulator.requests.length;
    const run = await runAgain(watcher, 'file-change');
    const sent = emulator.requests.slice(from);
    expect(sent.some((r) => r.method === 'GET' && r.path.includes('readiness'))).toBe(true);
    // The full read that follows puts the scorecard back before the Initiative that names it.
    expect(run).toMatchObject({ result: 'applied', read: { path: 'full' } });
    expect(await initiatives()).toEqual([expect.objectContaining({ description: 'Reach Silver' })]);
  });
});
