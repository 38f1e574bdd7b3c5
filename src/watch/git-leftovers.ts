/**
 * What a git command killed mid-way leaves in a checkout: its lock files (`index.lock`,
 * `shallow.lock`, `refs/…/main.lock`), and, when the watcher itself was killed (`kill -9`, an OOM
 * kill), the git processes it started, still running in process groups of their own. A lock left
 * behind makes every later `git fetch` or `git checkout` fail with "File exists", forever.
 *
 * The checkout is the source folder's alone, and the caller holds that folder's lock: no other
 * watcher uses it. So a git process still working in it is an orphan of a watcher that is gone,
 * and once those are stopped, every lock file under `.git` is stale. Orphans are found through
 * Linux's /proc (a process's working directory and command name); where /proc cannot be read,
 * nothing is killed and a lock file is removed only once it is older than `staleLockMs` (longer
 * than any git command of ours may run).
 */
import { readdir, readFile, readlink, realpath, stat, unlink } from 'node:fs/promises';
import { join, sep } from 'node:path';

export interface GitLeftovers {
  /** Orphaned git processes stopped (their pids). */
  stopped: number[];
  /** Lock files removed, relative to the checkout. */
  removed: string[];
}

interface ClearLeftoversOptions {
  /** Process groups of this process's own git commands, running now: never stopped. */
  ownGroups: ReadonlySet<number>;
  /** Where /proc cannot tell, a lock file older than this is taken as stale. */
  staleLockMs: number;
  /** How long to wait for the orphans to go after SIGKILL; default 5 s. */
  waitMs?: number;
  /** Wall-clock ms (file times are wall-clock); injectable for tests. */
  now?: () => number;
}

/** `/proc/<pid>/stat`: command name, state and process group (the name may hold any byte). */
const statOf = async (pid: number): Promise<{ comm: string; state: string; pgrp: number } | undefined> => {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const rest = text.slice(close + 2).split(' ');
  const pgrp = Number(rest[2]);
  if (open < 0 || close < open || rest[0] === undefined || !Number.isSafeInteger(pgrp)) return undefined;
  return { comm: text.slice(open + 1, close), state: rest[0], pgrp };
};

const isInside = (path: string, folder: string): boolean => path === folder || path.startsWith(`${folder}${sep}`);

/**
 * The git processes (command name `git` or `git-…`: `git-remote-https` too) whose working
 * directory is in `folder`, with their process groups; undefined when /proc cannot be read.
 */
const gitProcessesIn = async (
  folder: string,
  ownGroups: ReadonlySet<number>,
): Promise<Map<number, number> | undefined> => {
  const entries = await readdir('/proc').catch(() => undefined);
  if (entries === undefined) return undefined;
  const found = new Map<number, number>();
  for (const entry of entries) {
    const pid = Number(entry);
    if (!/^\d+$/.test(entry) || pid === process.pid) continue;
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => undefined);
    if (cwd === undefined || !isInside(cwd, folder)) continue;
    const info = await statOf(pid);
    if (info === undefined || info.state === 'Z' || !/^git(-|$)/.test(info.comm) || ownGroups.has(info.pgrp)) continue;
    found.set(pid, info.pgrp);
  }
  return found;
};

const running = async (pid: number): Promise<boolean> => {
  const info = await statOf(pid);
  return info !== undefined && info.state !== 'Z';
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stops the orphans (each one's whole group: what it started goes too) and waits for them to go. */
const stopOrphans = async (orphans: ReadonlyMap<number, number>, waitMs: number): Promise<boolean> => {
  const ownGroup = await statOf(process.pid).then((info) => info?.pgrp);
  for (const [pid, pgrp] of orphans) {
    try {
      // Never this process's own group; a git started detached leads a group of its own.
      if (pgrp > 1 && pgrp !== ownGroup) process.kill(-pgrp, 'SIGKILL');
      else process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already, or not ours to stop: waited for below.
    }
  }
  const until = Date.now() + waitMs;
  for (;;) {
    const left = [];
    for (const pid of orphans.keys()) if (await running(pid)) left.push(pid);
    if (left.length === 0) return true;
    if (Date.now() >= until) return false;
    await sleep(50);
  }
};

/** Every `*.lock` file under `.git` (objects excluded: git keeps no lock files there). */
const lockFiles = async (gitDir: string): Promise<string[]> => {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!(dir === gitDir && entry.name === 'objects')) await walk(path);
      } else if (entry.isFile() && entry.name.endsWith('.lock')) out.push(path);
    }
  };
  await walk(gitDir);
  return out;
};

/** Stops orphaned git processes working in `checkout` and removes the lock files they or a killed git left. */
export const clearGitLeftovers = async (checkout: string, options: ClearLeftoversOptions): Promise<GitLeftovers> => {
  const folder = await realpath(checkout).catch(() => undefined);
  if (folder === undefined) return { stopped: [], removed: [] };
  const orphans = await gitProcessesIn(folder, options.ownGroups);
  // An orphan that would not go may still hold its locks: leave them (git then says which file).
  const gone = orphans === undefined || orphans.size === 0 || (await stopOrphans(orphans, options.waitMs ?? 5000));
  const removed: string[] = [];
  if (!gone) return { stopped: [], removed };
  const now = options.now ?? Date.now;
  for (const file of await lockFiles(join(folder, '.git'))) {
    if (orphans === undefined) {
      const modified = await stat(file).then(
        (s) => s.mtimeMs,
        () => undefined,
      );
      if (modified === undefined || now() - modified < options.staleLockMs) continue;
    }
    await unlink(file).then(
      () =>
        removed.push(
          file
            .slice(folder.length + 1)
            .split(sep)
            .join('/'),
        ),
      () => undefined,
    );
  }
  return { stopped: [...(orphans?.keys() ?? [])], removed };
};
