/**
 * `watch --repo … --path P`: the operator names the folder, the repository decides what it is. A
 * commit that makes P (or a folder on the way) a symlink pointing out of the checkout would have
 * the watcher read and apply manifests from anywhere on its host (another source's checkout, a
 * mounted volume): the sync fails naming the path, and nothing is read there. A symlink that stays
 * inside the repository is an ordinary folder.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGitSource, type GitSource } from '../../src/watch/git-source.js';
import { createRemote, removeDir, serviceYaml, tempDir, type TestRemote } from './harness.js';

let root: string;
let remote: TestRemote;
let source: GitSource | undefined;

beforeEach(async () => {
  root = await tempDir();
  remote = await createRemote(root);
});
afterEach(async () => {
  await source?.close();
  source = undefined;
  await removeDir(root);
});

const syncAt = (path: string) => {
  source = createGitSource({
    url: remote.url,
    branch: 'main',
    path,
    checkoutDir: join(root, 'checkout'),
    knownHostsFile: join(root, 'known_hosts'),
    intervalMs: 0,
    env: { PATH: process.env.PATH ?? '', HOME: root, GIT_CONFIG_NOSYSTEM: '1' },
  });
  return source.sync(new AbortController().signal);
};

describe('the watched path', () => {
  it('a committed symlink out of the checkout is refused, naming --path; the folder it points at is not the manifest root', async () => {
    const elsewhere = join(root, 'another-source', 'checkout');
    await mkdir(join(elsewhere, '.cortex', 'catalog'), { recursive: true });
    await writeFile(join(elsewhere, '.cortex', 'catalog', 'theirs.yaml'), serviceYaml('theirs'));
    await mkdir(join(root, 'work', 'teams'), { recursive: true });
    await symlink(elsewhere, join(root, 'work', 'teams', 'a'));
    await remote.push({ 'README.md': 'catalog\n' });
    await expect(syncAt('teams/a')).rejects.toThrow(
      /^--path teams\/a is outside the checkout once its symlinks are followed/,
    );
  });

  it('a symlink inside the repository is followed', async () => {
    await mkdir(join(root, 'work', 'real'), { recursive: true });
    await symlink('real', join(root, 'work', 'catalog'));
    await remote.push({ 'real/.cortex/catalog/ours.yaml': serviceYaml('ours') });
    const snapshot = await syncAt('catalog');
    expect(snapshot.dir).toBe(join(root, 'checkout', 'catalog'));
  });
});
