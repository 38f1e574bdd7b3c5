import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverManifestFiles, discoverManifests } from '../../src/source/discover.js';

let root: string;
let outside: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cortex-discover-'));
  outside = await mkdtemp(path.join(tmpdir(), 'cortex-discover-outside-'));
});
afterEach(async () => {
  await chmod(path.join(root, 'locked'), 0o755).catch(() => {});
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const put = async (rel: string, text = 'a: 1\n', base = root): Promise<void> => {
  await mkdir(path.dirname(path.join(base, rel)), { recursive: true });
  await writeFile(path.join(base, rel), text);
};
const cortexYaml = (rel: string): boolean => /(^|\/)cortex\.ya?ml$/.test(rel);
const catalog = (rel: string): boolean => cortexYaml(rel) || /^\.cortex\/catalog\/.+\.ya?ml$/.test(rel);

describe('discoverManifests', () => {
  it('returns owned files as sorted relative posix paths, skipping .git and node_modules', async () => {
    await put('cortex.yaml');
    await put('services/b/cortex.yaml');
    await put('services/a/cortex.yml');
    await put('services/a/README.md');
    await put('.git/cortex.yaml');
    await put('web/node_modules/pkg/cortex.yaml');
    await symlink(path.join(root, 'services/b/cortex.yaml'), path.join(root, 'services/cortex.yaml'), 'file');

    const { files, problems } = await discoverManifests(root, cortexYaml);
    expect(problems).toEqual([]);
    expect(files.map((f) => f.relPath)).toEqual([
      'cortex.yaml',
      'services/a/cortex.yml',
      'services/b/cortex.yaml',
      'services/cortex.yaml',
    ]);
    // A symlinked manifest is read from its real path.
    expect(files.find((f) => f.relPath === 'services/cortex.yaml')?.realPath).toMatch(/services\/b\/cortex\.yaml$/);
  });

  it('follows a symlinked folder inside the root under its own path, so the layout applies to it', async () => {
    await put('shared/payments.yaml');
    await mkdir(path.join(root, '.cortex'));
    await symlink(path.join(root, 'shared'), path.join(root, '.cortex/catalog'), 'dir');
    const { files, problems } = await discoverManifests(root, catalog);
    expect(problems).toEqual([]);
    expect(files.map((f) => f.relPath)).toEqual(['.cortex/catalog/payments.yaml']);
  });

  it('reports every path it cannot read as a manifest instead of skipping it', async () => {
    await mkdir(path.join(root, '.cortex/catalog'), { recursive: true });
    await put('ok/cortex.yaml');
    await symlink(path.join(root, 'gone.yaml'), path.join(root, 'cortex.yaml'), 'file');
    await symlink('loop-b.yaml', path.join(root, '.cortex/catalog/loop-a.yaml'));
    await symlink('loop-a.yaml', path.join(root, '.cortex/catalog/loop-b.yaml'));
    await mkdir(path.join(root, 'svc/cortex.yaml'), { recursive: true });
    await put('secret.yaml', 'token: abc\n', outside);
    await symlink(path.join(outside, 'secret.yaml'), path.join(root, '.cortex/catalog/stolen.yaml'));
    await symlink(outside, path.join(root, '.cortex/catalog/team'), 'dir');
    await symlink(root, path.join(root, 'ok/self'), 'dir');

    const { files, problems } = await discoverManifests(root, catalog);
    expect(files.map((f) => f.relPath)).toEqual(['ok/cortex.yaml']);
    expect(problems.map((p) => p.relPath)).toEqual([
      '.cortex/catalog/loop-a.yaml',
      '.cortex/catalog/loop-b.yaml',
      '.cortex/catalog/stolen.yaml',
      '.cortex/catalog/team',
      'cortex.yaml',
      'ok/self',
      'svc/cortex.yaml',
    ]);
    const message = (rel: string) => problems.find((p) => p.relPath === rel)?.message;
    expect(message('cortex.yaml')).toMatch(/dangling/);
    expect(message('.cortex/catalog/loop-a.yaml')).toMatch(/loop/);
    expect(message('.cortex/catalog/stolen.yaml')).toMatch(/outside the manifest directory/);
    expect(message('.cortex/catalog/team')).toMatch(/outside the manifest directory/);
    expect(message('ok/self')).toMatch(/loop/);
    expect(message('svc/cortex.yaml')).toMatch(/is a directory/);
    await expect(discoverManifestFiles(root, catalog)).rejects.toThrow(/dangling/);
  });

  it('ignores a symlink outside the root whose name no kind owns', async () => {
    await put('notes.txt', 'x', outside);
    await symlink(path.join(outside, 'notes.txt'), path.join(root, 'notes.txt'));
    expect(await discoverManifests(root, catalog)).toMatchObject({ files: [], problems: [], unownedYaml: [] });
  });

  it.skipIf(process.getuid?.() === 0)(
    'reports a folder it has no permission to list (skipped as root: root reads anything)',
    async () => {
      await put('locked/cortex.yaml');
      await chmod(path.join(root, 'locked'), 0o000);
      const { problems } = await discoverManifests(root, cortexYaml);
      expect(problems).toEqual([{ relPath: 'locked', message: expect.stringMatching(/permission denied/) }]);
    },
  );

  it('throws for a missing root rather than returning nothing', async () => {
    await expect(discoverManifestFiles(path.join(root, 'nope'), () => true)).rejects.toThrow(/ENOENT/);
  });
});
