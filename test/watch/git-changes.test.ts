/**
 * A git source says which files a new commit changed (relative to the manifest root), so that the
 * watcher's load looks only at those; it says nothing (the load walks) when it cannot tell.
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGitSource } from '../../src/watch/git-source.js';
import { createRemote, removeDir, serviceYaml, tempDir, type TestRemote, writeFiles } from './harness.js';

let root: string;
let remote: TestRemote;

beforeEach(async () => {
  root = await tempDir();
  remote = await createRemote(root);
});
afterEach(async () => {
  await removeDir(root);
});

const sourceOf = (path?: string) =>
  createGitSource({
    url: remote.url,
    branch: 'main',
    ...(path !== undefined ? { path } : {}),
    checkoutDir: join(root, 'checkout'),
    knownHostsFile: join(root, 'known_hosts'),
    intervalMs: 0,
    env: { PATH: process.env.PATH ?? '', HOME: root, GIT_CONFIG_NOSYSTEM: '1' },
  });

const sorted = (files: readonly string[] | undefined) => (files === undefined ? undefined : [...files].sort());

describe('a git source names the files a commit changed', () => {
  it('none on the first sync; then every path added, edited, removed or renamed, and nothing for the same commit', async () => {
    await remote.push({
      'cortex-sync.yaml': 'sourceId: git-changes\n',
      '.cortex/catalog/a.yaml': serviceYaml('a'),
      '.cortex/catalog/b.yaml': serviceYaml('b'),
      '.cortex/catalog/c.yaml': serviceYaml('c'),
    });
    const source = sourceOf();
    const signal = new AbortController().signal;
    expect((await source.sync(signal)).changedFiles).toBeUndefined();

    await remote.push({
      '.cortex/catalog/a.yaml': serviceYaml('a', 'A, edited'),
      '.cortex/catalog/b.yaml': null,
      '.cortex/catalog/c.yaml': null,
      '.cortex/catalog/d.yaml': serviceYaml('c'),
      'services/new/cortex.yaml': serviceYaml('new'),
    });
    expect(sorted((await source.sync(signal)).changedFiles)).toEqual([
      '.cortex/catalog/a.yaml',
      '.cortex/catalog/b.yaml',
      '.cortex/catalog/c.yaml',
      '.cortex/catalog/d.yaml',
      'services/new/cortex.yaml',
    ]);
    expect((await source.sync(signal)).changedFiles).toEqual([]);
    await source.close();
  });

  it('with --path: only the files under it, relative to it', async () => {
    await remote.push({
      'catalog/cortex-sync.yaml': 'sourceId: git-changes\n',
      'catalog/svc/cortex.yaml': serviceYaml('s'),
    });
    const source = sourceOf('./catalog/');
    const signal = new AbortController().signal;
    await source.sync(signal);

    await remote.push({ 'catalog/svc/cortex.yaml': serviceYaml('s', 'edited'), 'README.md': 'outside' });
    expect((await source.sync(signal)).changedFiles).toEqual(['svc/cortex.yaml']);

    await source.close();
  });

  it('with --path reached through a symlink the repository holds: nothing said (its changes are under another name)', async () => {
    await mkdir(join(root, 'work'), { recursive: true });
    await symlink('real', join(root, 'work', 'catalog'));
    await remote.push({
      'real/cortex-sync.yaml': 'sourceId: git-changes\n',
      'real/svc/cortex.yaml': serviceYaml('s'),
    });
    const source = sourceOf('catalog');
    const signal = new AbortController().signal;
    await source.sync(signal);

    await remote.push({ 'real/svc/cortex.yaml': serviceYaml('s', 'edited through the link') });
    expect((await source.sync(signal)).changedFiles).toBeUndefined();
    await source.close();
  });

  it('a force-push that rewrites history, a mode change, a name with a newline, a file deleted and restored', async () => {
    const work = join(root, 'work');
    const gitIn = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
        cwd: work,
        env: { PATH: process.env.PATH ?? '', HOME: work, GIT_CONFIG_NOSYSTEM: '1' },
      });
    await remote.push({ '.cortex/catalog/a.yaml': serviceYaml('a'), '.cortex/catalog/b.yaml': serviceYaml('b') });
    const source = sourceOf();
    const signal = new AbortController().signal;
    await source.sync(signal);

    // The commit checked out is no longer on the branch: the new one is compared with it all the same.
    await writeFiles(work, { '.cortex/catalog/a.yaml': serviceYaml('a', 'rewritten') });
    gitIn('commit', '--quiet', '--all', '--amend', '-m', 'rewritten');
    gitIn('push', '--quiet', '--force', 'origin', 'HEAD:refs/heads/main');
    expect((await source.sync(signal)).changedFiles).toEqual(['.cortex/catalog/a.yaml']);

    await chmod(join(work, '.cortex/catalog/b.yaml'), 0o755);
    await remote.push({});
    expect((await source.sync(signal)).changedFiles).toEqual(['.cortex/catalog/b.yaml']);

    await remote.push({ '.cortex/catalog/new\nline "quoted".yaml': serviceYaml('n') });
    expect((await source.sync(signal)).changedFiles).toEqual(['.cortex/catalog/new\nline "quoted".yaml']);

    await remote.push({ '.cortex/catalog/b.yaml': null });
    expect((await source.sync(signal)).changedFiles).toEqual(['.cortex/catalog/b.yaml']);
    await remote.push({ '.cortex/catalog/b.yaml': serviceYaml('b') });
    expect((await source.sync(signal)).changedFiles).toEqual(['.cortex/catalog/b.yaml']);
    await source.close();
  });
});
