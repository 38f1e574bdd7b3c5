/**
 * A watcher killed while git was working (kill -9, an OOM kill) leaves git's lock files in the
 * checkout and, where it was not pid 1, its git processes still running. The next watcher on that
 * folder stops those orphans and removes the locks instead of failing every sync with "File exists".
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clearGitLeftovers, type GitLeftovers } from '../../src/watch/git-leftovers.js';
import { runGit } from '../../src/watch/git-process.js';
import { createGitSource } from '../../src/watch/git-source.js';
import { createRemote, removeDir, serviceYaml, tempDir, type TestRemote } from './harness.js';

let root: string;
let remote: TestRemote;
const started: number[] = [];

beforeEach(async () => {
  root = await tempDir();
  remote = await createRemote(root);
});
afterEach(async () => {
  for (const pid of started.splice(0))
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
  await removeDir(root);
});

const env = () => ({ PATH: process.env.PATH ?? '', HOME: root, GIT_CONFIG_NOSYSTEM: '1' });
const sourceOf = (onLeftovers?: (l: GitLeftovers) => void) =>
  createGitSource({
    url: remote.url,
    branch: 'main',
    checkoutDir: join(root, 'checkout'),
    knownHostsFile: join(root, 'known_hosts'),
    intervalMs: 0,
    env: env(),
    ...(onLeftovers ? { onLeftovers } : {}),
  });
const LOCKS = ['index.lock', 'shallow.lock', 'HEAD.lock', 'refs/remotes/origin/main.lock'];
const leaveLocks = async () => {
  for (const lock of LOCKS) await writeFile(join(root, 'checkout', '.git', lock), '');
};
const locksLeft = async () =>
  (await readdir(join(root, 'checkout', '.git'), { recursive: true })).filter((f) => f.endsWith('.lock'));

/** A long-running process named like git (`git-orphan`, a link to `sleep`) in its own group, working in `cwd`. */
const orphanIn = async (cwd: string): Promise<number> => {
  const bin = join(root, 'bin');
  await mkdir(bin, { recursive: true });
  const sleep = execFileSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).trim();
  await symlink(sleep, join(bin, 'git-orphan')).catch(() => undefined);
  const child = spawn(join(bin, 'git-orphan'), ['300'], { cwd, detached: true, stdio: 'ignore' });
  child.unref();
  if (child.pid === undefined) throw new Error('could not start the stand-in orphan');
  started.push(child.pid);
  return child.pid;
};
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const exited = (pid: number) => expect.poll(() => alive(pid), { timeout: 5000, interval: 50 }).toBe(false);

describe('what a killed git left in the checkout', () => {
  it('a new watcher syncs past the lock files, removes them and says so', async () => {
    await remote.push({ 'cortex-sync.yaml': 'sourceId: x\n', '.cortex/catalog/a.yaml': serviceYaml('a') });
    const first = sourceOf();
    await first.sync(new AbortController().signal);
    await first.close();
    await leaveLocks();
    const pushed = await remote.push({ '.cortex/catalog/a.yaml': serviceYaml('a', 'edited') });

    const told: GitLeftovers[] = [];
    const second = sourceOf((l) => told.push(l));
    const snapshot = await second.sync(new AbortController().signal);
    expect(snapshot.revision).toBe(pushed);
    expect(await locksLeft()).toEqual([]);
    expect(told).toHaveLength(1);
    expect([...(told[0]?.removed ?? [])].sort()).toEqual(LOCKS.map((l) => `.git/${l}`).sort());
    await second.close();
  });

  it('a lock that appears later is named by git’s error, and the next sync clears it', async () => {
    await remote.push({ 'cortex-sync.yaml': 'sourceId: x\n' });
    const source = sourceOf();
    const signal = new AbortController().signal;
    await source.sync(signal);
    await leaveLocks();
    await remote.push({ 'cortex-sync.yaml': 'sourceId: y\n' });
    await expect(source.sync(signal)).rejects.toThrow(/Unable to create '.*\.lock': File exists/);
    await expect(source.sync(signal)).resolves.toMatchObject({ revision: expect.any(String) });
    expect(await locksLeft()).toEqual([]);
    await source.close();
  });

  it('an orphaned git process working in the checkout is stopped; one elsewhere, or one of ours, is not', async () => {
    await remote.push({ 'cortex-sync.yaml': 'sourceId: x\n' });
    const first = sourceOf();
    await first.sync(new AbortController().signal);
    await first.close();
    const checkout = join(root, 'checkout');
    const orphan = await orphanIn(join(checkout, '.git'));
    const elsewhere = await orphanIn(root);
    const ours = await orphanIn(checkout);
    await leaveLocks();

    const cleared = await clearGitLeftovers(checkout, { ownGroups: new Set([ours]), staleLockMs: 60_000 });
    expect(cleared.stopped).toEqual([orphan]);
    await exited(orphan);
    expect(alive(elsewhere)).toBe(true);
    expect(alive(ours)).toBe(true);
    expect(await locksLeft()).toEqual([]);
  });

  it('git’s error keeps its fatal line when a hint follows it', async () => {
    const repo = join(root, 'repo');
    await mkdir(repo);
    await runGit(['init', '--quiet'], { cwd: repo, env: env() });
    await writeFile(join(repo, '.git', 'index.lock'), '');
    await writeFile(join(repo, 'f'), 'x');
    await expect(runGit(['add', 'f'], { cwd: repo, env: env() })).rejects.toThrow(
      /git add failed \(exit 128\): fatal: Unable to create '.*index\.lock': File exists\.$/,
    );
  });
});
