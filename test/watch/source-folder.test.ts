/**
 * One checkout folder per source: two watchers of different repositories sharing a cache
 * directory each apply their own repository, and a second watcher of the same source on the same
 * cache directory fails at start naming the first. Folder names never hold the URL's credentials.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitSourceFolder } from '../../src/watch/source-folder.js';
import {
  createRemote,
  type Emulator,
  entityTitle,
  removeDir,
  type RunningWatch,
  serviceYaml,
  startTestEmulator,
  startWatch,
  tempDir,
} from './harness.js';

describe('source folder names', () => {
  it('are a readable slug and a hash of URL, branch and path, without the credentials', () => {
    const plain = gitSourceFolder({ url: 'https://github.com/Acme/Catalog.git', branch: 'main' });
    expect(plain).toMatch(/^github\.com-acme-catalog-main-[0-9a-f]{12}$/);
    expect(
      gitSourceFolder({ url: 'https://x-access-token:ghp_s3cret@GitHub.com/Acme/Catalog.git', branch: 'main' }),
    ).toBe(plain);
    expect(gitSourceFolder({ url: 'https://github.com/Acme/Catalog.git?token=abc#frag', branch: 'main' })).toBe(plain);
    expect(gitSourceFolder({ url: 'https://github.com/Acme/Catalog/', branch: 'main' })).toBe(plain);
    expect(gitSourceFolder({ url: 'https://github.com/Acme/Catalog.git', branch: 'dev' })).not.toBe(plain);
    expect(gitSourceFolder({ url: 'https://github.com/Acme/Other.git', branch: 'main' })).not.toBe(plain);
    const inPath = gitSourceFolder({ url: 'https://github.com/Acme/Catalog.git', branch: 'main', path: './team-a/' });
    expect(inPath).toBe(
      gitSourceFolder({ url: 'https://github.com/Acme/Catalog.git', branch: 'main', path: 'team-a' }),
    );
    expect(inPath).not.toBe(plain);
    expect(gitSourceFolder({ url: 'git@github.com:acme/catalog.git' })).toMatch(
      /^github\.com-acme-catalog-default-branch-[0-9a-f]{12}$/,
    );
    // Nothing a URL holds can leave the cache directory or hide in the name.
    const hostile = gitSourceFolder({ url: 'file:///../../etc/passwd\n', branch: '../../x', path: '../..' });
    expect(hostile).toMatch(/^[a-z0-9._-]+$/);
    expect(hostile).not.toContain('..');
  });
});

describe('watchers sharing a cache directory', () => {
  let emulator: Emulator;
  let root: string;
  const running: RunningWatch[] = [];

  beforeEach(async () => {
    emulator = await startTestEmulator();
    root = await tempDir();
  });
  afterEach(async () => {
    for (const w of running.splice(0)) expect(await w.stop()).toBe(0);
    await emulator.stop();
    await removeDir(root);
  });

  it('each follows its own repository in its own folder (no --cache-dir, one CORTEX_SYNC_CACHE_DIR)', async () => {
    const remoteA = await createRemote(join(root, 'a'));
    const remoteB = await createRemote(join(root, 'b'));
    const firstA = await remoteA.push({ '.cortex/catalog/a.yaml': serviceYaml('svc-a') });
    const firstB = await remoteB.push({ '.cortex/catalog/b.yaml': serviceYaml('svc-b') });
    // No source id in the repositories: each is derived from its checkout's remote.
    const a = await startWatch({ repo: remoteA.url, branch: 'main', interval: 100 }, { emulator, cwd: root });
    running.push(a);
    await a.waitForRun((r) => r.revision === firstA && r.result === 'applied');
    const b = await startWatch({ repo: remoteB.url, branch: 'main', interval: 100 }, { emulator, cwd: root });
    running.push(b);
    await b.waitForRun((r) => r.revision === firstB && r.result === 'applied');

    const nextA = await remoteA.push({ '.cortex/catalog/a2.yaml': serviceYaml('svc-a2') });
    const run = await a.waitForRun((r) => r.revision === nextA);
    expect(run).toMatchObject({ result: 'applied', summary: { create: 1 } });
    expect(entityTitle(emulator, 'svc-a2')).toBe('svc-a2');
    expect((await a.status()).runs.every((r) => r.revision !== firstB)).toBe(true);
    expect((await b.status()).runs.every((r) => r.revision === firstB)).toBe(true);
    const folders = (await readdir(join(root, 'cache'))).filter((f) => f !== 'known_hosts');
    expect(folders).toHaveLength(2);
  });

  it('a second watcher of the same source fails at start naming the first; once it stops, the folder is free', async () => {
    const remote = await createRemote(join(root, 'a'));
    const first = await remote.push({ '.cortex/catalog/a.yaml': serviceYaml('svc-a') });
    const a = await startWatch({ repo: remote.url, branch: 'main' }, { emulator, cwd: root });
    await a.waitForRun((r) => r.revision === first && r.result === 'applied');

    const second = startWatch({ repo: remote.url, branch: 'main' }, { emulator, cwd: root });
    await expect(second).rejects.toThrow(
      new RegExp(`another watcher is using .*: pid ${process.pid} on host .* since .*, following file://`),
    );

    expect(await a.stop()).toBe(0);
    const again = await startWatch({ repo: remote.url, branch: 'main' }, { emulator, cwd: root });
    running.push(again);
    await again.waitForRun((r) => r.revision === first && r.result === 'applied');
  });
});
