/**
 * One watcher per source folder: a lock file created atomically (a complete record hard-linked
 * into place, so it is never seen half-written), refreshed by a heartbeat, and released on stop.
 *
 * A lock left by a process that is gone is taken over; nothing here compares one machine's clock
 * with another's. On the same machine and pid namespace the holder is judged by its pid *and*
 * its start time (a reused pid is another process). Elsewhere (another host or container sharing
 * the folder), or where /proc cannot tell, the lock is watched: a heartbeat that does not change
 * for `staleAfterMs` of this process's own time means the holder is gone. A takeover moves the
 * stale file aside first and removes it only if it is still the record judged stale, so two
 * contenders cannot both win; a holder that finds another record in its place stops.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CortexSyncError } from '../core/errors.js';
import { printable } from '../core/printable.js';
import type { Clock } from '../engine/context.js';
import type { ProcessIdentity, ProcessProbe } from './process-identity.js';

const FORMAT = 'cortex-sync-watch-lock/1';
export const LOCK_FILE = 'watch.lock';

export interface LockRecord extends ProcessIdentity {
  format: typeof FORMAT;
  token: string;
  /** What the holder follows (no credentials). */
  source: string;
  /** When the holder took the lock, by its own clock: shown to humans, never compared. */
  since: string;
  beat: number;
}

interface SourceLockOptions {
  /** The source's folder (created, private to this user, when missing). */
  folder: string;
  source: string;
  probe: ProcessProbe;
  clock: Clock;
  /** Default 5 s. */
  heartbeatMs?: number;
  /** How long a lock that cannot be judged by its pid must stay unchanged to count as abandoned; default 60 s. */
  staleAfterMs?: number;
  signal?: AbortSignal;
  /** Called once when the holder cannot be judged by pid and its heartbeat is being watched. */
  onWatching?: (holder: LockRecord, ms: number) => void;
  /** Called when another record has replaced this one: this process no longer holds the folder. */
  onLost?: (holder: LockRecord | undefined) => void;
}

export interface SourceLock {
  file: string;
  /** Stops the heartbeat and removes the lock if it is still this process's. */
  release(): Promise<void>;
}

/** The folder or its lock cannot be used: held by a running watcher, or not what it should be. */
class SourceLockError extends CortexSyncError {
  constructor(message: string) {
    super('CONFIG', message);
    this.name = 'SourceLockError';
  }
}

/** `pid 41 on host build-7 since 2025-05-01T10:00:00Z, following …`. */
export const describeHolder = (r: LockRecord): string => {
  const shown = (s: string) => printable(s.slice(0, 200));
  return `pid ${r.pid} on host ${shown(r.hostname)} since ${shown(r.since)}, following ${shown(r.source)}`;
};

type Seen = { kind: 'none' } | { kind: 'record'; text: string; record: LockRecord };

const parseRecord = (text: string): LockRecord | undefined => {
  try {
    const value = JSON.parse(text) as Partial<LockRecord> | null;
    if (
      value?.format === FORMAT &&
      typeof value.token === 'string' &&
      Number.isInteger(value.pid) &&
      typeof value.hostname === 'string' &&
      typeof value.since === 'string' &&
      typeof value.source === 'string'
    )
      return value as LockRecord;
  } catch {
    // Not JSON: not a lock this program wrote.
  }
  return undefined;
};

/** The lock file's text without following a symlink; a file that is not ours to read is an error. */
const readLock = async (file: string): Promise<Seen> => {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'none' };
    const why = code === 'ELOOP' ? 'it is a symbolic link' : `it cannot be read (${code ?? 'error'})`;
    throw new SourceLockError(`the lock ${file} is unusable: ${why}; remove it if no watcher uses this folder`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > 64 * 1024)
      throw new SourceLockError(`the lock ${file} is not a lock file; remove it if no watcher uses this folder`);
    const text = await handle.readFile('utf8');
    const record = parseRecord(text);
    if (!record)
      throw new SourceLockError(
        `the lock ${file} holds no lock record of this program; remove it if no watcher uses this folder`,
      );
    return { kind: 'record', text, record };
  } finally {
    await handle.close();
  }
};

const ensureFolder = async (folder: string, uid: number | undefined): Promise<void> => {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const stat = await lstat(folder);
  if (stat.isSymbolicLink() || !stat.isDirectory())
    throw new SourceLockError(`${folder} is not a folder (a symbolic link or a file is in its place)`);
  if (uid !== undefined && stat.uid !== uid)
    throw new SourceLockError(`${folder} belongs to another user (uid ${stat.uid}); this watcher runs as uid ${uid}`);
};

type Self = Awaited<ReturnType<SourceLockOptions['probe']['self']>>;
type SeenRecord = Extract<Seen, { kind: 'record' }>;

/** One watcher contending for the lock file: its token, its record, its heartbeat once it holds it. */
class Contender {
  readonly file: string;
  private readonly token = randomUUID();
  private readonly since: string;
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private beat = 0;

  constructor(
    private readonly options: SourceLockOptions,
    private readonly me: Self,
  ) {
    this.heartbeatMs = options.heartbeatMs ?? 5000;
    this.staleAfterMs = options.staleAfterMs ?? 60_000;
    this.file = join(options.folder, LOCK_FILE);
    this.since = new Date(options.clock.now()).toISOString();
  }

  private recordText(): string {
    const { token, since, beat, me } = this;
    const record = { format: FORMAT, token, source: this.options.source, since, beat, ...me } satisfies LockRecord;
    return `${JSON.stringify(record)}\n`;
  }

  /** A complete file written beside the lock, then linked (create) or renamed (replace) into place. */
  private async staged(place: (temp: string) => Promise<void>): Promise<void> {
    const temp = join(this.options.folder, `${LOCK_FILE}.${this.token}.${this.beat}.tmp`);
    await writeFile(temp, this.recordText(), { flag: 'wx', mode: 0o600 });
    try {
      await place(temp);
    } finally {
      await unlink(temp).catch(() => {});
    }
  }

  /** Creates the lock file; false when one is there already. */
  async create(): Promise<boolean> {
    try {
      await this.staged((temp) => link(temp, this.file));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return false;
    }
  }

  /** Whether the holder is gone: by pid where that is meaningful, else by watching its heartbeat. */
  async abandoned(seen: SeenRecord): Promise<boolean> {
    const { me, options, staleAfterMs } = this;
    const r = seen.record;
    const comparable =
      r.hostname === me.hostname &&
      r.bootId !== undefined &&
      r.bootId === me.bootId &&
      r.pidNamespace !== undefined &&
      r.pidNamespace === me.pidNamespace;
    if (comparable) {
      const state = await options.probe.state(r.pid);
      if (!state.running) return true;
      if (r.startTicks !== undefined && state.startTicks !== undefined) return r.startTicks !== state.startTicks;
    }
    options.onWatching?.(r, staleAfterMs);
    // Elapsed time is counted in the waits themselves (timers), never read from the wall clock,
    // which may jump while we watch.
    const step = Math.min(this.heartbeatMs, staleAfterMs);
    for (let waited = 0; waited < staleAfterMs; waited += step) {
      await options.clock.sleep(step, options.signal);
      const again = await readLock(this.file);
      if (again.kind === 'none' || again.text !== seen.text) return false;
    }
    return true;
  }

  /** Moves the stale file aside; removes it only if it is still the record judged stale. */
  async takeOver(seen: SeenRecord): Promise<void> {
    const aside = join(this.options.folder, `${LOCK_FILE}.${this.token}.stale`);
    try {
      await rename(this.file, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    const moved = await readLock(aside).catch(() => ({ kind: 'none' }) as const);
    if (moved.kind === 'record' && moved.text !== seen.text) {
      // Another contender's fresh lock: put it back (unless a third one has taken the place).
      await link(aside, this.file).catch(() => {});
    }
    await unlink(aside).catch(() => {});
  }

  /** The lock held: a heartbeat refreshes the record until `release`, or until another record takes its place. */
  hold(): SourceLock {
    const { file, token, options } = this;
    let stopped = false;
    let beating: Promise<void> = Promise.resolve();
    /** Refreshes the record, or stops (and says so) when another record has taken its place. */
    const refresh = async () => {
      let now = await readLock(file).catch(() => undefined);
      if (stopped || now === undefined) return;
      if (now.kind === 'none') {
        // Removed from under us (a cleaner of old files, a hand): put it back unless another took the place.
        const back = await this.staged((temp) => link(temp, file)).then(
          () => true,
          () => false,
        );
        if (back) return;
        now = await readLock(file).catch(() => undefined);
        if (now === undefined) return;
      }
      if (now.kind === 'none' || now.record.token !== token) {
        stopped = true;
        clearInterval(heartbeat);
        options.onLost?.(now.kind === 'record' ? now.record : undefined);
        return;
      }
      this.beat += 1;
      await this.staged((temp) => rename(temp, file)).catch(() => {});
    };
    const heartbeat = setInterval(() => {
      beating = beating.then(refresh);
    }, this.heartbeatMs);
    heartbeat.unref?.();
    return {
      file,
      release: async () => {
        stopped = true;
        clearInterval(heartbeat);
        await beating;
        const now = await readLock(file).catch(() => undefined);
        if (now?.kind === 'record' && now.record.token === token) await unlink(file).catch(() => {});
      },
    };
  }
}

export const acquireSourceLock = async (options: SourceLockOptions): Promise<SourceLock> => {
  const me = await options.probe.self();
  await ensureFolder(options.folder, me.uid);
  const contender = new Contender(options, me);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (await contender.create()) return contender.hold();
    const seen = await readLock(contender.file);
    if (seen.kind === 'none') continue;
    if (!(await contender.abandoned(seen))) {
      throw new SourceLockError(
        `another watcher is using ${options.folder}: ${describeHolder(seen.record)}; stop it, or give this one another --cache-dir`,
      );
    }
    await contender.takeOver(seen);
  }
  throw new SourceLockError(`could not take the lock ${contender.file}: other watchers keep taking it; stop them`);
};
