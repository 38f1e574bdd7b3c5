/**
 * Export reads the dependency edges (one request per caller) only of the entities whose edges it
 * may write: not of the entities another source id manages, which it leaves out, edges and all
 * (unless `--include-other-sources`). The edges this source id manages are read whoever manages
 * their caller, and `--only unmanaged` still finds the unmanaged edges of this source's entities.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cli, type Emulator, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from '../e2e/harness.js';
import { callApi, listManifestFiles, readTree } from './helpers.js';

let emulator: Emulator;
/** Repo B's checkout. */
let repoB: string;
const dirs: string[] = [];
const newDir = async (): Promise<string> => {
  const dir = await tempDir('cortex-sync-export-edges-');
  dirs.push(dir);
  return dir;
};

/** Repo A manages 20 services (`a-00`…`a-19`), repo B one service; `ui` and its edge are the UI's. */
const OTHERS = 20;
const aTags = Array.from({ length: OTHERS }, (_, i) => `a-${String(i).padStart(2, '0')}`);

beforeEach(async () => {
  emulator = await startTestEmulator();
  // The workspace holds only what this test makes: not the emulator's sample scorecards.
  emulator.state.scorecards.items = [];
  const repoA = await newDir();
  await writeFiles(repoA, Object.fromEntries(aTags.map((tag) => [`.cortex/catalog/${tag}.yaml`, serviceYaml(tag)])));
  expect((await cli(['apply', '--dir', repoA, '--source-id', 'repo-a'], { emulator, cwd: repoA })).code).toBe(0);
  repoB = await newDir();
  await writeFiles(repoB, { '.cortex/catalog/b-svc.yaml': serviceYaml('b-svc') });
  expect((await cli(['apply', '--dir', repoB, '--source-id', 'repo-b'], { emulator, cwd: repoB })).code).toBe(0);
  // Made in the UI: a service and its edge.
  await callApi(emulator, 'POST', '/api/v1/open-api', serviceYaml('ui'), 'application/openapi;charset=UTF-8');
  await callApi(emulator, 'PUT', '/api/v1/catalog/dependencies', { values: { ui: [{ tag: 'b-svc' }] } });
});
afterEach(async () => {
  await emulator.stop();
  for (const dir of dirs.splice(0)) await removeDir(dir);
});

const callersRead = (from: number): string[] =>
  emulator.requests
    .slice(from)
    .filter((r) => r.method === 'GET' && /^\/api\/v1\/catalog\/[^/]+\/dependencies$/.test(r.path))
    .map((r) => decodeURIComponent(r.path.split('/')[4] ?? ''))
    .sort();

it('reads no edges of the entities another source id manages, and writes the same files', async () => {
  const out = await newDir();
  const before = emulator.requests.length;
  const run = await cli(['export', '--out', out, '--source-id', 'repo-b'], { emulator, cwd: out });
  expect(run.stderr).not.toMatch(/error/i);
  expect(run.code).toBe(0);
  expect(await listManifestFiles(out)).toEqual([
    '.cortex/catalog/b-svc.yaml',
    '.cortex/catalog/ui.yaml',
    '.cortex/dependencies/ui.yaml',
    'cortex-sync.yaml',
  ]);
  expect(run.stdout).toMatch(/Left out 20 objects other source ids manage \(`repo-a`\)/);
  // B's own service and the UI's: none of the 20 of repo A.
  expect(callersRead(before)).toEqual(['b-svc', 'ui']);
  expect(run.stderr).toMatch(/Reading the dependency edges of 2 entities/);
  expect(run.stdout).toContain('Read no dependency edges of 20 catalog objects other source ids manage');
});

it("an edge another source's entity has is left with it: --include-other-sources, or that source's --only unmanaged, exports it", async () => {
  await callApi(emulator, 'PUT', '/api/v1/catalog/dependencies', { values: { 'a-01': [{ tag: 'ui' }] } });
  const mine = await newDir();
  expect((await cli(['export', '--out', mine, '--source-id', 'repo-b'], { emulator, cwd: mine })).code).toBe(0);
  expect(await listManifestFiles(mine)).not.toContain('.cortex/dependencies/a-01.yaml');

  const all = await newDir();
  let before = emulator.requests.length;
  const run = await cli(['export', '--out', all, '--source-id', 'repo-b', '--include-other-sources'], {
    emulator,
    cwd: all,
  });
  expect(run.code).toBe(0);
  expect(callersRead(before)).toEqual([...aTags, 'b-svc', 'ui'].sort());
  expect((await readTree(all)).get('.cortex/dependencies/a-01.yaml')).toContain('- tag: ui');

  const theirs = await newDir();
  before = emulator.requests.length;
  const unmanaged = await cli(['export', '--out', theirs, '--source-id', 'repo-a', '--only', 'unmanaged'], {
    emulator,
    cwd: theirs,
  });
  expect(unmanaged.code).toBe(0);
  expect((await readTree(theirs)).get('.cortex/dependencies/a-01.yaml')).toContain('- tag: ui');
  // Repo B's entity is not read for edges; A's own and the UI's are.
  expect(callersRead(before)).toEqual([...aTags, 'ui'].sort());
});

it("an edge this source manages from another source's entity is still read and written", async () => {
  await writeFiles(repoB, {
    '.cortex/dependencies/a-00.yaml': 'callerTag: a-00\ndependencies:\n  - tag: b-svc\n',
  });
  const applied = await cli(['apply', '--dir', repoB, '--source-id', 'repo-b'], { emulator, cwd: repoB });
  expect(applied.code).toBe(0);
  const out = await newDir();
  const run = await cli(['export', '--out', out, '--source-id', 'repo-b'], { emulator, cwd: out });
  expect(run.code).toBe(0);
  expect((await readTree(out)).get('.cortex/dependencies/a-00.yaml')).toContain('- tag: b-svc');
});

it('an edge read that fails still stops the export, naming the operation and status, and writes nothing', async () => {
  const out = await newDir();
  emulator.setFaults({
    reject: [{ method: 'GET', path: '/api/v1/catalog/ui/dependencies', status: 403, message: 'not for you' }],
  });
  const run = await cli(['export', '--out', out, '--source-id', 'repo-b'], { emulator, cwd: out });
  expect(run.code).not.toBe(0);
  expect(run.stderr).toMatch(/list dependencies of `ui`.*403.*not for you/s);
  expect(await listManifestFiles(out)).toEqual([]);
});
