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

interface TreeWatcherOptions {
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

/** The watched tree: its watchers, the folders that could not be watched, the looks pending. */
class WatchedTree {
  private readonly watchers = new Map<string, FSWatcher>();
  /** Directories that could not be watched or read → the code of the failure last reported. */
  private readonly unwatched = new Map<string, string>();
  private readonly pending = new Set<string>();
  private draining: Promise<void> | undefined;
  private closed = false;
  private burst = 0;
  private burstEnd: NodeJS.Immediate | undefined;

  constructor(
    private readonly options: TreeWatcherOptions,
    /** Events in one turn of the event loop past which some may have been lost. */
    private readonly burstLimit: number,
  ) {}

  private abs(rel: string): string {
    return rel === '' ? this.options.root : join(this.options.root, rel);
  }

  private report(paths: readonly string[]): void {
    if (!this.closed && paths.length > 0) this.options.onChange(paths.map((path) => (path === '' ? EVERYTHING : path)));
  }

  /** One error for all the failures of a walk (an inotify limit can fail thousands of folders at once). */
  private reportFailures(failures: readonly Failure[]): void {
    const [first] = failures;
    if (this.closed || first === undefined) return;
    const where = (rel: string) => (rel === '' ? 'the root' : rel);
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more folders)` : '';
    this.options.onError(
      new Error(
        `cannot watch ${where(first.rel)} under ${this.options.root}${more}: ${reasonOf(first.error)}; the next run reads everything, and the folder is tried again`,
      ),
    );
    this.report([EVERYTHING]);
  }

  private closeUnder(rel: string): void {
    for (const [key, watcher] of this.watchers)
      if (isUnder(key, rel)) {
        this.watchers.delete(key);
        watcher.close();
      }
    for (const key of this.unwatched.keys()) if (isUnder(key, rel)) this.unwatched.delete(key);
  }

  /** A failure already reported for this folder, when it repeats, is not reported again. */
  private failed(rel: string, error: unknown, known: ReadonlyMap<string, string>, failures: Failure[]): void {
    const code = codeOf(error);
    this.unwatched.set(rel, code);
    if (known.get(rel) !== code) failures.push({ rel, error });
  }

  /** `rel` looked at again soon (one look at a time, in order). */
  private look(rel: string): void {
    this.pending.add(rel);
    this.draining ??= this.drain();
  }

  private onEvent(dirRel: string, event: string, name: string | null): void {
    if (this.closed) return;
    this.burst += 1;
    this.burstEnd ??= setImmediate(() => {
      this.burstEnd = undefined;
      this.burst = 0;
    });
    if (this.burst === this.burstLimit) this.report([EVERYTHING]);
    // No name, or one that did not decode: which entry changed is unknown.
    if (!name || name.includes('\uFFFD')) return this.report([EVERYTHING]);
    if (this.options.skipped.has(name)) return;
    const rel = childOf(dirRel, name);
    // A content change needs no look; a folder that could not be watched is tried again.
    if (event === 'change' && !this.unwatched.has(rel)) return this.report([rel]);
    this.look(rel);
  }

  private stopWatching(rel: string, watcher: FSWatcher, error: Error): void {
    if (this.closed || this.watchers.get(rel) !== watcher) return;
    this.watchers.delete(rel);
    watcher.close();
    const failures: Failure[] = [];
    this.failed(rel, error, new Map(), failures);
    this.reportFailures(failures);
  }

  /**
   * A folder gone (or no longer a folder) while it was being watched or listed: a change like any
   * other, looked at again (the next look reports it gone, or watches what is there now).
   */
  private vanished(rel: string, error: unknown): boolean {
    const code = codeOf(error);
    if (rel === '' || (code !== 'ENOENT' && code !== 'ENOTDIR')) return false;
    this.look(rel);
    return true;
  }

  /** Watches `rel` and everything below it; collects the files found into `found`. */
  private async walk(rel: string, found: string[], known: ReadonlyMap<string, string>, failures: Failure[]) {
    if (this.closed) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(this.abs(rel), { persistent: true }, (event, name) => this.onEvent(rel, event, name));
    } catch (error) {
      if (!this.vanished(rel, error)) this.failed(rel, error, known, failures);
      return;
    }
    if (this.closed) {
      watcher.close();
      return;
    }
    this.watchers.set(rel, watcher);
    watcher.on('error', (error) => this.stopWatching(rel, watcher, error));
    // Watched before listed: an entry created meanwhile is listed, or reported by the watcher.
    let entries: Dirent[];
    try {
      entries = await readdir(this.abs(rel), { withFileTypes: true });
    } catch (error) {
      if (!this.vanished(rel, error)) this.failed(rel, error, known, failures);
      return;
    }
    for (const entry of entries) {
      if (this.options.skipped.has(entry.name)) continue;
      const child = childOf(rel, entry.name);
      // A name that is not UTF-8 reads with U+FFFD: no path of that spelling reaches the folder.
      if (entry.isDirectory() && entry.name.includes('\uFFFD')) this.failed(child, notUtf8, known, failures);
      else if (entry.isDirectory()) await this.walk(child, found, known, failures);
      else found.push(child);
    }
  }

  /** What a `rename` event named, looked at once: new, gone, or replaced. */
  private async examine(rel: string): Promise<void> {
    const known = new Map([...this.unwatched].filter(([key]) => isUnder(key, rel)));
    let stats: Stats;
    try {
      // The root may be a symlink (a sidecar's checkout): it is the folder behind it that is watched.
      stats = await (rel === '' ? stat : lstat)(this.abs(rel));
    } catch (error) {
      const code = codeOf(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return this.reportFailures([{ rel, error }]);
      this.closeUnder(rel);
      return this.report([rel]);
    }
    if (this.closed) return;
    // Whatever was watched at this path may be another folder now (or a file, or a symlink).
    this.closeUnder(rel);
    if (!stats.isDirectory()) return this.report([rel]);
    const found = [rel];
    const failures: Failure[] = [];
    const before = known.get(rel);
    await this.walk(rel, found, known, failures);
    const now = this.unwatched.get(rel);
    // Back after a failure: what changed meanwhile is unknown. The same failure again: nothing new.
    if (before !== undefined && now === undefined) this.report([EVERYTHING]);
    else if (before === undefined || now !== before) this.report(found);
    this.reportFailures(failures);
  }

  private async drain(): Promise<void> {
    try {
      for (let next = first(this.pending); next !== undefined && !this.closed; next = first(this.pending)) {
        this.pending.delete(next);
        await this.examine(next).catch((error: unknown) => this.reportFailures([{ rel: next ?? '', error }]));
      }
    } finally {
      this.draining = undefined;
    }
  }

  /** The first walk from the root. */
  async start(): Promise<void> {
    const failures: Failure[] = [];
    await this.walk('', [], new Map(), failures);
    this.reportFailures(failures);
  }

  async retry(): Promise<void> {
    for (const [rel, code] of [...this.unwatched]) {
      if (this.closed) return;
      if (this.unwatched.get(rel) !== code) continue;
      this.look(rel);
      await this.draining;
      // A limit of the whole system still reached: the other folders would fail alike, at a cost
      // (a look, a watch, a scan of the watchers) each, every check; the next check tries again.
      if (SYSTEM_LIMITS.has(code) && this.unwatched.get(rel) === code) return;
    }
  }

  close(): void {
    this.closed = true;
    clearImmediate(this.burstEnd);
    this.pending.clear();
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    this.unwatched.clear();
  }
}

const childOf = (dirRel: string, name: string) => (dirRel === '' ? name : `${dirRel}/${name}`);
const isUnder = (key: string, rel: string) => rel === '' || key === rel || key.startsWith(`${rel}/`);

export const watchTree = async (options: TreeWatcherOptions): Promise<TreeWatcher> => {
  // The queue is read whole in one turn of the event loop: a turn that brings about as many events
  // as it holds may have lost some (half of it, to be safe), so everything may have changed.
  const burstLimit = Math.max(1, Math.floor((await eventQueueLimit()) / 2));
  const tree = new WatchedTree(options, burstLimit);
  await tree.start();
  return {
    retry: () => tree.retry(),
    close: () => tree.close(),
  };
};

const first = <T>(set: ReadonlySet<T>): T | undefined => {
  for (const value of set) return value;
  return undefined;
};
