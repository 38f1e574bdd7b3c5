/**
 * The source folder's lock: a live holder keeps it; a holder that is gone (killed, its pid reused
 * by another process, or silent on another host) loses it to the next watcher; a forged,
 * unreadable or symlinked lock is refused with the file named; two contenders for a stale lock
 * never both win; a holder whose record was replaced is told.
 */
import { spawn } from 'node:child_process';
import { access, mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../src/engine/context.js';
import { type ProcessIdentity, type ProcessProbe, systemProcessProbe } from '../../src/watch/process-identity.js';
import { acquireSourceLock, LOCK_FILE, type LockRecord, type SourceLock } from '../../src/watch/source-lock.js';
import { removeDir, sleep, tempDir } from './harness.js';

let root: string;
let folder: string;
const held: SourceLock[] = [];

beforeEach(async () => {
  root = await tempDir();
  folder = join(root, 'cache', 'source-1');
});
afterEach(async () => {
  for (const lock of held.splice(0)) await lock.release();
  await removeDir(root);
});

const acquire = async (
  options: {
    probe?: ProcessProbe;
    staleAfterMs?: number;
    onLost?: () => void;
    onWatching?: () => void;
    clock?: Clock;
  } = {},
) => {
  const lock = await acquireSourceLock({
    folder,
    source: 'https://git.example/catalog.git#main',
    probe: options.probe ?? systemProcessProbe,
    clock: options.clock ?? systemClock,
    heartbeatMs: 50,
    staleAfterMs: options.staleAfterMs ?? 400,
    ...(options.onLost ? { onLost: options.onLost } : {}),
    ...(options.onWatching ? { onWatching: options.onWatching } : {}),
  });
  held.push(lock);
  return lock;
};

/** A lock record as another watcher would have written it. */
const plant = async (identity: Partial<ProcessIdentity>, extra: Partial<LockRecord> = {}): Promise<string> => {
  const me = await systemProcessProbe.self();
  const record = {
    format: 'cortex-sync-watch-lock/1',
    token: 'planted',
    source: 'https://git.example/catalog.git#main',
    since: '2020-01-01T00:00:00.000Z',
    beat: 0,
    ...me,
    ...identity,
    ...extra,
  };
  await mkdir(folder, { recursive: true });
  const text = `${JSON.stringify(record)}\n`;
  await writeFile(join(folder, LOCK_FILE), text);
  return text;
};

const deadPid = async (): Promise<number> => {
  const child = spawn(process.execPath, ['-e', '0']);
  const pid = child.pid ?? 0;
  await new Promise((resolve) => child.once('exit', resolve));
  return pid;
};

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

const holderToken = async () =>
  (JSON.parse(await readFile(join(folder, LOCK_FILE), 'utf8')) as { token: string }).token;

describe('the source lock', () => {
  it('is refused to a second holder while the first runs, and free once released', async () => {
    const first = await acquire();
    await expect(acquire()).rejects.toThrow(`pid ${process.pid} on host`);
    await first.release();
    held.splice(held.indexOf(first), 1);
    await acquire();
  });

  it('is taken over at once from a process that is gone (killed), judged by pid on this machine', async () => {
    await plant({ pid: await deadPid() });
    let watched = false;
    await acquire({
      staleAfterMs: 60_000,
      onWatching: () => {
        watched = true;
      },
    });
    // At once: judged by its pid, without watching its heartbeat for the stale time.
    expect(watched).toBe(false);
    expect(await holderToken()).not.toBe('planted');
  });

  it('is taken over from a pid now used by another process (its start time differs)', async () => {
    await plant({ pid: process.pid, startTicks: '1' });
    await acquire({ staleAfterMs: 60_000 });
    expect(await holderToken()).not.toBe('planted');
  });

  it('from another host: kept while its heartbeat moves, taken over once it stayed still (by our own elapsed time)', async () => {
    const text = await plant({ hostname: 'elsewhere', pid: 1 }, { since: '2999-01-01T00:00:00.000Z' });
    // The waits of the contender are where time passes: a live holder elsewhere renews its record
    // during each of them (written beside the lock and renamed into place, as a real holder does);
    // a gone one does not. No real timer races the contender's looks.
    let beat = 0;
    let alive = true;
    let slept = 0;
    const clock: Clock = {
      now: () => Date.now(),
      sleep: async (ms) => {
        slept += ms;
        if (!alive) return;
        beat += 1;
        const temp = join(folder, `${LOCK_FILE}.beat-${beat}`);
        await writeFile(temp, text.replace('"beat":0', `"beat":${beat}`));
        await rename(temp, join(folder, LOCK_FILE));
      },
    };
    await expect(acquire({ staleAfterMs: 400, clock })).rejects.toThrow('pid 1 on host elsewhere since 2999-01-01');
    alive = false;
    slept = 0;
    await acquire({ staleAfterMs: 400, clock });
    expect(slept).toBeGreaterThanOrEqual(400);
    expect(await holderToken()).not.toBe('planted');
  });

  it('refuses a lock it did not write, a folder in its place, or a symlink, naming the file', async () => {
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, LOCK_FILE), 'garbage');
    await expect(acquire()).rejects.toThrow(`${join(folder, LOCK_FILE)} holds no lock record`);
    await removeDir(join(folder, LOCK_FILE));
    await mkdir(join(folder, LOCK_FILE));
    await expect(acquire()).rejects.toThrow(`${join(folder, LOCK_FILE)} is not a lock file`);
    await removeDir(join(folder, LOCK_FILE));
    await writeFile(join(root, 'elsewhere'), '');
    await symlink(join(root, 'elsewhere'), join(folder, LOCK_FILE));
    await expect(acquire()).rejects.toThrow('it is a symbolic link');
  });

  it('refuses a source folder that is a symlink', async () => {
    await mkdir(join(root, 'cache'), { recursive: true });
    await mkdir(join(root, 'other'));
    await symlink(join(root, 'other'), folder);
    await expect(acquire()).rejects.toThrow(`${folder} is not a folder`);
  });

  it('two contenders for one stale lock: exactly one wins', async () => {
    await plant({ pid: await deadPid() });
    const results = await Promise.allSettled([acquire(), acquire(), acquire()]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toContain('another watcher');
  });

  it('puts its lock back when the file is removed from under it (a cleaner of old files)', async () => {
    let lost = false;
    await acquire({
      onLost: () => {
        lost = true;
      },
    });
    const mine = await holderToken();
    await removeDir(join(folder, LOCK_FILE));
    // Its next heartbeat puts it back, however late that comes on a busy machine.
    while (!(await exists(join(folder, LOCK_FILE)))) await sleep(20);
    expect(await holderToken()).toBe(mine);
    expect(lost).toBe(false);
    await expect(acquire()).rejects.toThrow('another watcher');
  });

  it('tells a holder whose record was replaced that it lost the folder', async () => {
    let told: () => void = () => {};
    const lost = new Promise<void>((resolve) => {
      told = resolve;
    });
    await acquire({ onLost: () => told() });
    await plant({ pid: 1, hostname: 'elsewhere' });
    // Its next heartbeat sees the other record and says so (the test's own timeout bounds the wait).
    await lost;
    expect(await holderToken()).toBe('planted');
  });
});
