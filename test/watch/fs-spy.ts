/**
 * Counts (and can fail) the file system calls a directory watcher makes, whatever library makes
 * them: `node:fs`'s `watch` and `node:fs/promises`'s `lstat`, `stat` and `readdir` are replaced on
 * the module objects and `syncBuiltinESMExports` hands the replacements to every ESM importer.
 */
import fs, { type FSWatcher } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

type Listener = (event: string, filename: string | null) => void;

export interface FsSpy {
  /** Every path passed to each call, in order. */
  calls: { lstat: string[]; stat: string[]; readdir: string[]; watch: string[] };
  /** The watchers opened, by path (the newest per path). */
  watchers: Map<string, FSWatcher>;
  /** When set and it returns an error for a path, `fs.watch` on it throws that error. */
  failWatch?: (path: string) => Error | undefined;
  /** How many calls so far were about `dir` or a path below it. */
  callsUnder(dir: string): { lstat: number; stat: number; readdir: number; watch: number };
  /** Forgets the calls so far. */
  reset(): void;
  restore(): void;
}

export const spyOnFs = (): FsSpy => {
  const promises = fs.promises as unknown as Record<'lstat' | 'stat' | 'readdir', (...args: unknown[]) => unknown>;
  const original = { lstat: promises.lstat, stat: promises.stat, readdir: promises.readdir, watch: fs.watch };
  const spy: FsSpy = {
    calls: { lstat: [], stat: [], readdir: [], watch: [] },
    watchers: new Map(),
    callsUnder: (dir) => {
      const count = (paths: string[]) => paths.filter((p) => p === dir || p.startsWith(`${dir}/`)).length;
      const { lstat, stat, readdir, watch } = spy.calls;
      return { lstat: count(lstat), stat: count(stat), readdir: count(readdir), watch: count(watch) };
    },
    reset: () => {
      for (const list of Object.values(spy.calls)) list.length = 0;
    },
    restore: () => {
      promises.lstat = original.lstat;
      promises.stat = original.stat;
      promises.readdir = original.readdir;
      fs.watch = original.watch;
      syncBuiltinESMExports();
    },
  };
  for (const name of ['lstat', 'stat', 'readdir'] as const) {
    const call = original[name];
    promises[name] = (...args: unknown[]) => {
      spy.calls[name].push(String(args[0]));
      return call(...args);
    };
  }
  fs.watch = ((path: string, options: unknown, listener?: Listener) => {
    spy.calls.watch.push(String(path));
    const failure = spy.failWatch?.(String(path));
    if (failure) throw failure;
    const watcher = (original.watch as (p: string, o: unknown, l?: Listener) => FSWatcher)(path, options, listener);
    spy.watchers.set(String(path), watcher);
    return watcher;
  }) as typeof fs.watch;
  syncBuiltinESMExports();
  return spy;
};

/** An error as the system reports it (`code` set). */
export const systemError = (code: string, message: string): Error => Object.assign(new Error(message), { code });
