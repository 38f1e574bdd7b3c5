/**
 * A local directory as the source (development, or a git-sync sidecar writing into a shared
 * volume): `tree-watcher.ts` reports which files changed (one `fs.watch` per folder), debounced so
 * that a checkout touching many files is one run.
 *
 * The root itself is checked every `rootCheckMs`: a root moved away, deleted, or swapped for
 * another folder (a sidecar flipping a symlink) stops the file watcher, which cannot follow it;
 * when a folder is back at the path, the watcher is armed again on it and a run starts. While the
 * root is missing, a run fails (and is retried) instead of reading nothing.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { SKIPPED_DIRECTORIES } from '../source/discover.js';
import type { Source, SourceSnapshot, SourceTrigger } from './source.js';
import { EVERYTHING, type TreeWatcher, watchTree } from './tree-watcher.js';

interface DirSourceOptions {
  dir: string;
  /** Quiet time after the last change before a run starts; default 300 ms. */
  debounceMs?: number;
  /**
   * The longest a change waits for that quiet: files that never stop changing (a tool rewriting
   * one every 0.1 s) hold no other change back beyond it; default 3 s.
   */
  maxWaitMs?: number;
  /** How often the root's identity is checked; default 1 s. */
  rootCheckMs?: number;
}

/** The folder now at `root` (device and inode, symlinks followed), or undefined when there is none. */
const identityOf = async (root: string): Promise<string | undefined> => {
  const found = await stat(root).catch(() => undefined);
  return found?.isDirectory() ? `${found.dev}:${found.ino}` : undefined;
};

/** The longest a change waits for the files to be quiet. */
const DEFAULT_MAX_WAIT_MS = 3000;

export const createDirSource = (options: DirSourceOptions): Source => {
  const root = resolve(options.dir);
  const debounceMs = options.debounceMs ?? 300;
  const maxWaitMs = Math.max(debounceMs, options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
  let watcher: TreeWatcher | undefined;
  let watched: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** Set while changes wait for quiet: ends the wait at `maxWaitMs` from the first of them. */
  let maxTimer: NodeJS.Timeout | undefined;
  let cutByMaxWait = 0;
  let lastCutAt: string | undefined;
  let rootTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let changed = new Set<string>();

  const snapshot = (): SourceSnapshot => {
    const files = [...changed];
    changed = new Set();
    return { dir: root, revision: 'local', changedFiles: files };
  };

  return {
    description: root,
    sync: async () => {
      if ((await identityOf(root)) === undefined)
        throw new Error(`the directory ${root} is missing (moved or deleted?): nothing is applied until it is back`);
      return snapshot();
    },
    watch: async (onChange: (trigger: SourceTrigger) => void, onError: (error: Error) => void) => {
      if (watcher || rootTimer) return;
      const fire = (cut: boolean) => {
        clearTimeout(timer);
        clearTimeout(maxTimer);
        timer = undefined;
        maxTimer = undefined;
        if (cut) {
          cutByMaxWait += 1;
          lastCutAt = new Date().toISOString();
        }
        onChange('file-change');
      };
      const noted = (paths: readonly string[]) => {
        for (const path of paths) changed.add(path);
        clearTimeout(timer);
        timer = setTimeout(() => fire(false), debounceMs);
        maxTimer ??= setTimeout(() => fire(true), maxWaitMs);
      };
      /** (Re)starts the file watcher on the folder now at the root. */
      const arm = async (identity: string | undefined) => {
        watcher?.close();
        watcher = undefined;
        watched = identity;
        if (identity === undefined || closed) return;
        const started = await watchTree({ root, skipped: SKIPPED_DIRECTORIES, onChange: noted, onError });
        if (closed) started.close();
        else watcher = started;
      };
      let checking = false;
      const checkRoot = async () => {
        if (checking || closed) return;
        checking = true;
        try {
          const identity = await identityOf(root);
          if (identity === watched) return await watcher?.retry();
          await arm(identity);
          if (identity === undefined) {
            onError(new Error(`the directory ${root} is gone; watching for it to come back`));
          } else {
            // Everything under the root may differ: the next run reads it all.
            changed.add(EVERYTHING);
            fire(false);
          }
        } finally {
          checking = false;
        }
      };
      await arm(await identityOf(root));
      rootTimer = setInterval(() => {
        void checkRoot().catch((error: unknown) => onError(error instanceof Error ? error : new Error(String(error))));
      }, options.rootCheckMs ?? 1000);
      rootTimer.unref?.();
    },
    state: () => ({
      debounceMs,
      maxWaitMs,
      cutByMaxWait,
      ...(lastCutAt !== undefined ? { lastCutAt } : {}),
    }),
    close: () => {
      closed = true;
      clearTimeout(timer);
      clearTimeout(maxTimer);
      clearInterval(rootTimer);
      rootTimer = undefined;
      watcher?.close();
      watcher = undefined;
      return Promise.resolve();
    },
  };
};
