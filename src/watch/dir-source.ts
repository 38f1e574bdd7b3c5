/**
 * A local directory as the source (development, or a git-sync sidecar writing into a shared
 * volume): chokidar reports changes, debounced so that a checkout touching many files is one run.
 *
 * The root itself is checked every `rootCheckMs`: a root moved away, deleted, or swapped for
 * another folder (a sidecar flipping a symlink) stops the file watcher, which cannot follow it;
 * when a folder is back at the path, the watcher is armed again on it and a run starts. While the
 * root is missing, a run fails (and is retried) instead of reading nothing.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import { SKIPPED_DIRECTORIES } from '../source/discover.js';
import type { Source, SourceSnapshot, SourceTrigger } from './source.js';

export interface DirSourceOptions {
  dir: string;
  /** Quiet time after the last change before a run starts; default 300 ms. */
  debounceMs?: number;
  /** How often the root's identity is checked; default 1 s. */
  rootCheckMs?: number;
}

const isSkipped = (root: string, path: string): boolean => {
  if (path === root) return false;
  const rel = path.slice(root.length + 1);
  return rel.split(/[\\/]/).some((segment) => SKIPPED_DIRECTORIES.has(segment));
};

/** The folder now at `root` (device and inode, symlinks followed), or undefined when there is none. */
const identityOf = async (root: string): Promise<string | undefined> => {
  const found = await stat(root).catch(() => undefined);
  return found?.isDirectory() ? `${found.dev}:${found.ino}` : undefined;
};

export const createDirSource = (options: DirSourceOptions): Source => {
  const root = resolve(options.dir);
  const debounceMs = options.debounceMs ?? 300;
  let watcher: FSWatcher | undefined;
  let watched: string | undefined;
  let timer: NodeJS.Timeout | undefined;
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
      const noted = (path: string) => {
        if (path.startsWith(`${root}/`))
          changed.add(
            path
              .slice(root.length + 1)
              .split('\\')
              .join('/'),
          );
        clearTimeout(timer);
        timer = setTimeout(() => onChange('file-change'), debounceMs);
      };
      /** (Re)starts the file watcher on the folder now at the root. */
      const arm = async (identity: string | undefined) => {
        const previous = watcher;
        watcher = undefined;
        watched = identity;
        await previous?.close();
        if (identity === undefined || closed) return;
        const started = watch(root, { ignoreInitial: true, ignored: (path: string) => isSkipped(root, path) });
        watcher = started;
        started.on('add', noted).on('change', noted).on('unlink', noted).on('addDir', noted).on('unlinkDir', noted);
        started.on('error', (error: unknown) => onError(error instanceof Error ? error : new Error(String(error))));
        await new Promise<void>((ready) => started.once('ready', ready));
      };
      let checking = false;
      const checkRoot = async () => {
        if (checking || closed) return;
        checking = true;
        try {
          const identity = await identityOf(root);
          if (identity === watched) return;
          await arm(identity);
          if (identity === undefined) {
            onError(new Error(`the directory ${root} is gone; watching for it to come back`));
          } else {
            // Everything under the root may differ: the next run reads it all.
            changed.add('.');
            clearTimeout(timer);
            onChange('file-change');
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
    close: async () => {
      closed = true;
      clearTimeout(timer);
      clearInterval(rootTimer);
      rootTimer = undefined;
      const current = watcher;
      watcher = undefined;
      await current?.close();
    },
  };
};
