/**
 * What `export` refuses and what it leaves out: an existing file without --force, a directory of
 * another source id (by its cortex-sync.yaml or by the manifests it holds), objects a repository
 * manages with --only unmanaged, archived entities unless asked for, kinds not asked for, and
 * objects the directory already declares elsewhere.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manifestBaseName } from '../../../src/kinds/shared/file-name.js';
import { cli, type Emulator, removeDir, startTestEmulator, tempDir } from '../../e2e/harness.js';
import { callApi, listFiles, listManifestFiles, readTree, seedWorkspace } from '../../export/helpers.js';

let emulator: Emulator;
const dirs: string[] = [];
const newDir = async (): Promise<string> => {
  const dir = await tempDir('cortex-sync-export-');
  dirs.push(dir);
  return dir;
};
const exportTo = (out: string, extra: string[] = []) => cli(['export', '--out', out, ...extra], { emulator, cwd: out });

beforeEach(async () => {
  emulator = await startTestEmulator();
  await seedWorkspace(emulator);
});
afterEach(async () => {
  await emulator.stop();
  for (const dir of dirs.splice(0)) await removeDir(dir);
});

describe('export refuses', () => {
  it('to replace an existing file without --force, writing nothing; --force replaces it', async () => {
    const out = await newDir();
    expect((await exportTo(out, ['--source-id', 'repo-a'])).code).toBe(0);
    const edited = join(out, '.cortex/catalog/ledger.yaml');
    await writeFile(edited, '# edited by hand\n');
    await callApi(
      emulator,
      'POST',
      '/api/v1/open-api',
      'openapi: 3.0.1\ninfo:\n  title: New\n  x-cortex-tag: brand-new\n',
      'application/openapi;charset=UTF-8',
    );
    const before = await readTree(out);

    const again = await exportTo(out);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists? already.*\.cortex\/.*Nothing was written; pass --force/s);
    expect(await readTree(out)).toEqual(before);

    const forced = await exportTo(out, ['--force']);
    expect(forced.code).toBe(0);
    const after = await readTree(out);
    expect(after.get('.cortex/catalog/ledger.yaml')).toContain('x-cortex-tag: ledger');
    expect(after.has('.cortex/catalog/brand-new.yaml')).toBe(true);
    expect([...after.keys()].filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a directory whose cortex-sync.yaml names another source id', async () => {
    const out = await newDir();
    await writeFile(join(out, 'cortex-sync.yaml'), 'sourceId: someone-else\n');
    const run = await exportTo(out, ['--source-id', 'repo-a']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('someone-else');
    expect(await listFiles(out)).toEqual(['cortex-sync.yaml']);
  });

  it('a directory holding manifests another source id manages', async () => {
    const managed = await newDir();
    expect((await exportTo(managed, ['--source-id', 'repo-a'])).code).toBe(0);
    expect((await cli(['apply', '--dir', managed], { emulator, cwd: managed })).code).toBe(0);

    const other = await newDir();
    await mkdir(join(other, 'services/ledger'), { recursive: true });
    await writeFile(
      join(other, 'services/ledger/cortex.yaml'),
      'openapi: 3.0.1\ninfo:\n  title: Ledger\n  x-cortex-tag: ledger\n',
    );
    const run = await exportTo(other, ['--source-id', 'repo-b']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/services\/ledger\/cortex\.yaml declares entity\/ledger, which `repo-a` manages/);
    expect(await listFiles(other)).toEqual(['services/ledger/cortex.yaml']);
  });

  it('unknown kinds in --kinds', async () => {
    const out = await newDir();
    const run = await exportTo(out, ['--kinds', 'entity,widgets']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('unknown kind widgets');
    expect(await listFiles(out)).toEqual([]);
  });
});

describe('export leaves out', () => {
  it('what a repository manages with --only unmanaged', async () => {
    const managed = await newDir();
    await exportTo(managed, ['--source-id', 'repo-a']);
    await rm(join(managed, '.cortex/catalog/ledger.yaml'));
    expect((await cli(['apply', '--dir', managed], { emulator, cwd: managed })).code).toBe(0);

    const out = await newDir();
    const run = await exportTo(out, ['--only', 'unmanaged']);
    expect(run.code).toBe(0);
    expect(await listManifestFiles(out)).toEqual(['.cortex/catalog/ledger.yaml']);
    // Every object of the workspace but the ledger, the emulator's two sample scorecards included;
    // not the two edges of the entities that repository manages, which are not even read.
    expect(run.stdout).toMatch(/Left out 11 objects a repository manages/);
    expect(run.stdout).toContain('Read no dependency edges of 5 catalog objects other source ids manage');
  });

  it('archived entities unless --include-archived', async () => {
    const plain = await newDir();
    await exportTo(plain, ['--kinds', 'entity']);
    expect(await listFiles(plain)).not.toContain('.cortex/catalog/old-service.yaml');

    const withArchived = await newDir();
    expect((await exportTo(withArchived, ['--kinds', 'entity', '--include-archived'])).code).toBe(0);
    const tree = await readTree(withArchived);
    expect(tree.get('.cortex/catalog/old-service.yaml')).toContain('title: Old service');
  });

  it('kinds not asked for, and then reads no dependency edges', async () => {
    const out = await newDir();
    const before = emulator.requests.length;
    const run = await exportTo(out, ['--kinds', 'catalog-page,scaffolder-template']);
    expect(run.code).toBe(0);
    expect(await listManifestFiles(out)).toEqual([
      '.cortex/catalog-pages/agents.yaml',
      '.cortex/scaffolders/agent-template.yaml',
    ]);
    const reads = emulator.requests.slice(before);
    expect(reads.filter((r) => r.path.endsWith('/dependencies'))).toEqual([]);
    expect(reads.every((r) => r.method === 'GET')).toBe(true);
  });

  it('objects the directory declares elsewhere already', async () => {
    const out = await newDir();
    await mkdir(join(out, 'services/web'), { recursive: true });
    await writeFile(
      join(out, 'services/web/cortex.yaml'),
      'openapi: 3.0.1\ninfo:\n  title: Web\n  x-cortex-tag: "@acme/web.app"\n',
    );
    const run = await exportTo(out, ['--kinds', 'entity']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Left out 1 object the directory declares already');
    expect(await listFiles(out)).not.toContain(`.cortex/catalog/${manifestBaseName('@acme/web.app')}.yaml`);
  });

  it('shows progress and an estimate for the per-caller dependency reads on stderr', async () => {
    const out = await newDir();
    const run = await exportTo(out, ['--kinds', 'dependency']);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/dependency edges of 6 entities: one request each .*requests\/minute/);
    expect(run.stdout).toMatch(/^Exported 2 dependencies in 2 files/);
  });
});
