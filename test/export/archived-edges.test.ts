/**
 * `export --include-archived` writes an archived entity's API dependency edges with it, so that
 * applying the export brings the entity back with its edges (and a prune knows them). Without the
 * flag the entity and its edges are left out, and its edges are not even read. An archived caller
 * whose edges the API will not show (404) is said, by name, and the rest is exported.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cli, type Emulator, removeDir, serviceYaml, startTestEmulator, tempDir } from '../e2e/harness.js';
import { callApi, listManifestFiles, type PlanJson, readTree } from './helpers.js';

let emulator: Emulator;
const emulators: Emulator[] = [];
const dirs: string[] = [];
const newDir = async (): Promise<string> => {
  const dir = await tempDir('cortex-sync-export-archived-');
  dirs.push(dir);
  return dir;
};

/** `old` (archived afterwards) calls `ledger` and `users`; `ledger` and `users` are live. */
const seed = async (target: Emulator, withEdges: boolean): Promise<void> => {
  // The workspace holds only what this test makes: not the emulator's sample scorecards.
  target.state.scorecards.items = [];
  for (const tag of ['ledger', 'users', 'old']) {
    await callApi(target, 'POST', '/api/v1/open-api', serviceYaml(tag), 'application/openapi;charset=UTF-8');
  }
  if (withEdges) {
    await callApi(target, 'PUT', '/api/v1/catalog/dependencies', {
      values: { old: [{ tag: 'ledger', method: 'POST', path: '/v1/entries' }, { tag: 'users' }] },
    });
  }
  await callApi(target, 'PUT', '/api/v1/catalog/old/archive');
};

const startEmulator = async (): Promise<Emulator> => {
  const started = await startTestEmulator();
  emulators.push(started);
  return started;
};

beforeEach(async () => {
  emulator = await startEmulator();
  await seed(emulator, true);
});
afterEach(async () => {
  for (const e of emulators.splice(0)) await e.stop();
  for (const dir of dirs.splice(0)) await removeDir(dir);
});

/** The callers whose edges were read since request `from`. */
const callersRead = (from: number): string[] =>
  emulator.requests
    .slice(from)
    .filter((r) => r.method === 'GET' && /^\/api\/v1\/catalog\/[^/]+\/dependencies$/.test(r.path))
    .map((r) => decodeURIComponent(r.path.split('/')[4] ?? ''))
    .sort();

const exportTo = (out: string, extra: string[] = []) =>
  cli(['export', '--out', out, '--source-id', 'catalog-repo', ...extra], { emulator, cwd: out });

it("--include-archived exports an archived entity's outgoing edges with it", async () => {
  const out = await newDir();
  const before = emulator.requests.length;
  const run = await exportTo(out, ['--include-archived']);
  expect(run.stderr).not.toMatch(/error|warning/i);
  expect(run.code).toBe(0);
  expect(callersRead(before)).toEqual(['ledger', 'old', 'users']);
  const tree = await readTree(out);
  expect(tree.get('.cortex/catalog/old.yaml')).toContain('x-cortex-tag: old');
  const edges = tree.get('.cortex/dependencies/old.yaml') ?? '';
  expect(edges).toContain('callerTag: old');
  expect(edges).toMatch(/- tag: ledger\n\s+method: POST\n\s+path: \/v1\/entries/);
  expect(edges).toMatch(/- tag: users\n/);
  expect(run.stdout).toMatch(/Exported 3 entities, 2 dependencies in 4 files/);
});

it('without --include-archived neither the archived entity nor its edges are exported, nor its edges read', async () => {
  const out = await newDir();
  const before = emulator.requests.length;
  const run = await exportTo(out);
  expect(run.code).toBe(0);
  expect(await listManifestFiles(out)).toEqual([
    '.cortex/catalog/ledger.yaml',
    '.cortex/catalog/users.yaml',
    'cortex-sync.yaml',
  ]);
  expect(callersRead(before)).toEqual(['ledger', 'users']);
});

it('an archived caller whose edges the API does not show (404) is named in a warning; the rest is exported', async () => {
  emulator.setFaults({
    reject: [
      { method: 'GET', path: '/api/v1/catalog/old/dependencies', status: 404, message: 'Entity not found: old' },
    ],
  });
  const out = await newDir();
  const run = await exportTo(out, ['--include-archived']);
  expect(run.code).toBe(0);
  expect(run.stderr).toMatch(
    /warning: the dependency edges of the archived entity `old` could not be read .*HTTP 404: Entity not found: old/,
  );
  expect(await listManifestFiles(out)).toEqual([
    '.cortex/catalog/ledger.yaml',
    '.cortex/catalog/old.yaml',
    '.cortex/catalog/users.yaml',
    'cortex-sync.yaml',
  ]);
});

it('the export applied where the archived entity lost its edges plans exactly its unarchive and its two edges', async () => {
  const out = await newDir();
  expect((await exportTo(out, ['--include-archived'])).code).toBe(0);
  const fresh = await startEmulator();
  await seed(fresh, false);
  const run = await cli(['plan', '--dir', out, '--output', 'json'], { emulator: fresh, cwd: out });
  expect(run.stderr).not.toMatch(/error/i);
  expect(run.code).toBe(0);
  const plan = JSON.parse(run.stdout) as PlanJson;
  const writes = plan.changes.filter(
    (c) =>
      c.kind !== 'inventory' && !((c.action === 'noop' || c.adopt === true) && c.diff.length === 0 && !c.unarchive),
  );
  expect(writes.map((c) => `${c.action}${c.unarchive ? ' (unarchive)' : ''} ${c.kind} ${c.id}`).sort()).toEqual([
    'create dependency old→ledger POST /v1/entries',
    'create dependency old→users',
    expect.stringMatching(/^\S+ \(unarchive\) entity old$/),
  ]);
});

it('a live caller gone when its edges are read (404) is named in a warning too; a 403 still fails the export', async () => {
  emulator.setFaults({
    reject: [{ method: 'GET', path: '/api/v1/catalog/ledger/dependencies', status: 404, message: 'Entity not found' }],
  });
  const out = await newDir();
  const run = await exportTo(out, ['--include-archived']);
  expect(run.code).toBe(0);
  expect(run.stderr).toMatch(/warning: the entity `ledger` was not found when its dependency edges were read/);
  expect((await readTree(out)).get('.cortex/dependencies/old.yaml')).toContain('- tag: users');

  emulator.setFaults({
    reject: [{ method: 'GET', path: '/api/v1/catalog/old/dependencies', status: 403, message: 'not for you' }],
  });
  const denied = await newDir();
  const failed = await exportTo(denied, ['--include-archived']);
  expect(failed.code).not.toBe(0);
  expect(failed.stderr).toMatch(/list dependencies of `old`.*403.*not for you/s);
  expect(await listManifestFiles(denied)).toEqual([]);
});
