/**
 * Watches a directory tree with one non-recursive `fs.watch` per directory, and reports which
 * entries changed, relative to the root (`/`-separated), without listing a directory again on an
 * event: an event names the entry it is about. Only a `rename` event (an entry created, moved or
 * deleted) costs one `lstat` of that entry: a new directory is walked and watched (every file in it
 * is reported), a gone one has the watchers under it closed. Symlinks are not followed: their own
 * path is reported, the loader judges what they point at.
 *
 * Nothing is dropped silently: an event without a file name, a burst of events near what the
 * system's event queue holds (it drops what overflows, unseen), or anything that could not be
 * watched or examined (an inotify watch limit, a folder that cannot be read), reports `.` (all may
 * have changed), and failures go to `onError`. Directories that could not be watched are tried
 * again by `retry()`; one that comes back reports `.` (what changed meanwhile is unknown).
 */
import { type Dirent, type FSWatcher, type Stats, watch } from 'node:fs';
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface TreeWatcherOptions {
  /** Absolute path of the root (a symlink at the root itself is followed by the system). */
  root: string;
  /** Entry names never watched nor reported, at any depth (`.git`, `node_modules`). */
  skipped: ReadonlySet<string>;
  /** Paths relative to the root that changed; `.` means anything may have changed. */
  onChange: (relPaths: readonly string[]) => void;
  onError: (error: Error) => void;
}

/**
 * Linux's queue of file events per watching process (`fs.inotify.max_queued_events`): events
 * beyond it are dropped, and Node does not say so (libuv ignores the overflow notice).
 */
const eventQueueLimit = async (): Promise<number> => {
  const text = await readFile('/proc/sys/fs/inotify/max_queued_events', 'utf8').catch(() => '');
  const limit = Number.parseInt(text, 10);
  return Number.isSafeInteger(limit) && limit > 0 ? limit : 16384;
};

export interface TreeWatcher {
  /** Tries again the directories that could not be watched or read. */
  retry(): Promise<void>;
  /** Closes every watcher; later events are ignored. */
  close(): void;
}

/** Everything may have changed: the next run reads it all. */
export const EVERYTHING = '.';

const codeOf = (error: unknown): string =>
  (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));

const reasonOf = (error: unknown): string => {
  const code = codeOf(error);
  if (code === 'ENOSPC') return 'the system limit of inotify watches is reached (raise fs.inotify.max_user_watches)';
  if (code === 'EMFILE' || code === 'ENFILE') return 'too many open files';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
};

/** Failures that say the system (not the folder) is out of something: inotify watches, descriptors. */
const SYSTEM_LIMITS: ReadonlySet<string> = new Set(['ENOSPC', 'EMFILE', 'ENFILE']);

const notUtf8 = new Error('its name is not valid UTF-8 (events in it are not seen; a heal run reads it)');

interface Failure {
  rel: string;
  error: unknown;
}

export const watchTree = async (options: TreeWatcherOptions): Promise<TreeWatcher> => {
  const { root, skipped, onChange, onError } = options;
  const watchers = new Map<string, FSWatcher>();
  /** Directories that could not be watched or read → the code of the failure last reported. */
  const unwatched = new Map<string, string>();
  const pending = new Set<string>();
  let draining: Promise<void> | undefined;
  let closed = false;
  // The queue is read whole in one turn of the event loop: a turn that brings about as many events
  // as it holds may have lost some (half of it, to be safe), so everything may have changed.
  const burstLimit = Math.max(1, Math.floor((await eventQueueLimit()) / 2));
  let burst = 0;
  let burstEnd: NodeJS.Immediate | undefined;

  const abs = (rel: string) => (rel === '' ? root : join(root, rel));
  const childOf = (dirRel: string, name: string) => (dirRel === '' ? name : `${dirRel}/${name}`);
  const isUnder = (key: string, rel: string) => rel === '' || key === rel || key.startsWith(`${rel}/`);
  const report = (paths: readonly string[]) => {
    if (!closed && paths.length > 0) onChange(paths.map((path) => (path === '' ? EVERYTHING : path)));
  };

  /** One error for all the failures of a walk (an inotify limit can fail thousands of folders at once). */
  const reportFailures = (failures: readonly Failure[]) => {
    const [first] = failures;
    if (closed || first === undefined) return;
    const where = (rel: string) => (rel === '' ? 'the root' : rel);
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more folders)` : '';
    onError(
      new Error(
        `cannot watch ${where(first.rel)} under ${root}${more}: ${reasonOf(first.error)}; the next run reads everything, and the folder is tried again`,
      ),
    );
    report([EVERYTHING]);
  };

  const closeUnder = (rel: string) => {
    for (const [key, watcher] of watchers)
      if (isUnder(key, rel)) {
        watchers.delete(key);
        watcher.close();
      }
    for (const key of unwatched.keys()) if (isUnder(key, rel)) unwatched.delete(key);
  };

  /** A failure already reported for this folder, when it repeats, is not reported again. */
  const failed = (rel: string, error: unknown, known: ReadonlyMap<string, string>, failures: Failure[]) => {
    const code = codeOf(error);
    unwatched.set(rel, code);
    if (known.get(rel) !== code) failures.push({ rel, error });
  };

  const onEvent = (dirRel: string, event: string, name: string | null) => {
    if (closed) return;
    burst += 1;
    burstEnd ??= setImmediate(() => {
      burstEnd = undefined;
      burst = 0;
    });
    if (burst === burstLimit) report([EVERYTHING]);
    // No name, or one that did not decode: which entry changed is unknown.
    if (!name || name.includes('\uFFFD')) return report([EVERYTHING]);
    if (skipped.has(name)) return;
    const rel = childOf(dirRel, name);
    // A content change needs no look; a folder that could not be watched is tried again.
    if (event === 'change' && !unwatched.has(rel)) return report([rel]);
    pending.add(rel);
    draining ??= drain();
  };

  const stopWatching = (rel: string, watcher: FSWatcher, error: Error) => {
    if (closed || watchers.get(rel) !== watcher) return;
    watchers.delete(rel);
    watcher.close();
    const failures: Failure[] = [];
    failed(rel, error, new Map(), failures);
    reportFailures(failures);
  };

  /**
   * A folder gone (or no longer a folder) while it was being watched or listed: a change like any
   * other, looked at again (the next look reports it gone, or watches what is there now).
   */
  const vanished = (rel: string, error: unknown): boolean => {
    const code = codeOf(error);
    if (rel === '' || (code !== 'ENOENT' && code !== 'ENOTDIR')) return false;
    pending.add(rel);
    draining ??= drain();
    return true;
  };

  /** Watches `rel` and everything below it; collects the files found into `found`. */
  const walk = async (
    rel: string,
    found: string[],
    known: ReadonlyMap<string, string>,
    failures: Failure[],
  ): Promise<void> => {
    if (closed) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(abs(rel), { persistent: true }, (event, name) => onEvent(rel, event, name));
    } catch (error) {
      if (!vanished(rel, error)) failed(rel, error, known, failures);
      return;
    }
    if (closed) {
      watcher.close();
      return;
    }
    watchers.set(rel, watcher);
    watcher.on('error', (error) => stopWatching(rel, watcher, error));
    // Watched before listed: an entry created meanwhile is listed, or reported by the watcher.
    let entries: Dirent[];
    try {
      entries = await readdir(abs(rel), { withFileTypes: true });
    } catch (error) {
      if (!vanished(rel, error)) failed(rel, error, known, failures);
      return;
    }
    for (const entry of entries) {
      if (skipped.has(entry.name)) continue;
      const child = childOf(rel, entry.name);
      // A name that is not UTF-8 reads with U+FFFD: no path of that spelling reaches the folder.
      if (entry.isDirectory() && entry.name.includes('\uFFFD')) failed(child, notUtf8, known, failures);
      else if (entry.isDirectory()) await walk(child, found, known, failures);
      else found.push(child);
    }
  };

  /** What a `rename` event named, looked at once: new, gone, or replaced. */
  const examine = async (rel: string) => {
    const known = new Map([...unwatched].filter(([key]) => isUnder(key, rel)));
    let stats: Stats;
    try {
      // The root may be a symlink (a sidecar's checkout): it is the folder behind it that is watched.
      stats = await (rel === '' ? stat : lstat)(abs(rel));
    } catch (error) {
      const code = codeOf(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return reportFailures([{ rel, error }]);
      closeUnder(rel);
      return report([rel]);
    }
    if (closed) return;
    // Whatever was watched at this path may be another folder now (or a file, or a symlink).
    closeUnder(rel);
    if (!stats.isDirectory()) return report([rel]);
    const found = [rel];
    const failures: Failure[] = [];
    const before = known.get(rel);
    await walk(rel, found, known, failures);
    const now = unwatched.get(rel);
    // Back after a failure: what changed meanwhile is unknown. The same failure again: nothing new.
    if (before !== undefined && now === undefined) report([EVERYTHING]);
    else if (before === undefined || now !== before) report(found);
    reportFailures(failures);
  };

  const drain = async () => {
    try {
      for (let next = first(pending); next !== undefined && !closed; next = first(pending)) {
        pending.delete(next);
        await examine(next).catch((error: unknown) => reportFailures([{ rel: next ?? '', error }]));
      }
    } finally {
      draining = undefined;
    }
  };

  const failures: Failure[] = [];
  await walk('', [], new Map(), failures);
  reportFailures(failures);

  return {
    retry: async () => {
      for (const [rel, code] of [...unwatched]) {
        if (closed) return;
        if (unwatched.get(rel) !== code) continue;
        pending.add(rel);
        draining ??= drain();
        await draining;
        // A limit of the whole system still reached: the other folders would fail alike, at a cost
        // (a look, a watch, a scan of the watchers) each, every check; the next check tries again.
        if (SYSTEM_LIMITS.has(code) && unwatched.get(rel) === code) return;
      }
    },
    close: () => {
      closed = true;
      clearImmediate(burstEnd);
      pending.clear();
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
      unwatched.clear();
    },
  };
};

const first = <T>(set: ReadonlySet<T>): T | undefined => {
  for (const value of set) return value;
  return undefined;
};
