import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverManifestFiles } from '../../src/source/discover.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cortex-discover-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const put = async (rel: string, text = 'a: 1\n'): Promise<void> => {
  await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
  await writeFile(path.join(root, rel), text);
};

describe('discoverManifestFiles', () => {
  it('returns owned files as sorted relative posix paths, skipping .git, node_modules and symlinked dirs', async () => {
    await put('cortex.yaml');
    await put('services/b/cortex.yaml');
    await put('services/a/cortex.yml');
    await put('services/a/README.md');
    await put('.git/cortex.yaml');
    await put('web/node_modules/pkg/cortex.yaml');
    await put('outside/cortex.yaml');
    await symlink(path.join(root, 'outside'), path.join(root, 'linked'), 'dir');
    await symlink(path.join(root, 'services/b/cortex.yaml'), path.join(root, 'services/cortex.yaml'), 'file');

    const files = await discoverManifestFiles(root, (rel) => /(^|\/)cortex\.ya?ml$/.test(rel));
    expect(files).toEqual([
      'cortex.yaml',
      'outside/cortex.yaml',
      'services/a/cortex.yml',
      'services/b/cortex.yaml',
      'services/cortex.yaml',
    ]);
  });

  it('passes each relative path to the ownership test', async () => {
    await put('.cortex/catalog/x.yaml');
    await put('.cortex/other/y.yaml');
    const seen: string[] = [];
    const files = await discoverManifestFiles(root, (rel) => {
      seen.push(rel);
      return rel.startsWith('.cortex/catalog/');
    });
    expect(files).toEqual(['.cortex/catalog/x.yaml']);
    expect(seen.sort()).toEqual(['.cortex/catalog/x.yaml', '.cortex/other/y.yaml']);
  });

  it('throws for a missing root rather than returning nothing', async () => {
    await expect(discoverManifestFiles(path.join(root, 'nope'), () => true)).rejects.toThrow(/ENOENT/);
  });
});
