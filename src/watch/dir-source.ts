/**
 * A local directory as the source (development, or a git-sync sidecar writing into a shared
 * volume): chokidar reports changes, debounced so that a checkout touching many files is one run.
 */
import { resolve } from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import { SKIPPED_DIRECTORIES } from '../source/discover.js';
import type { Source, SourceSnapshot, SourceTrigger } from './source.js';

export interface DirSourceOptions {
  dir: string;
  /** Quiet time after the last change before a run starts; default 300 ms. */
  debounceMs?: number;
}

const isSkipped = (root: string, path: string): boolean => {
  if (path === root) return false;
  const rel = path.slice(root.length + 1);
  return rel.split(/[\\/]/).some((segment) => SKIPPED_DIRECTORIES.has(segment));
};

export const createDirSource = (options: DirSourceOptions): Source => {
  const root = resolve(options.dir);
  const debounceMs = options.debounceMs ?? 300;
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let changed = new Set<string>();

  const snapshot = (): SourceSnapshot => {
    const files = [...changed];
    changed = new Set();
    return { dir: root, revision: 'local', changedFiles: files };
  };

  return {
    description: root,
    sync: async () => snapshot(),
    watch: async (onChange: (trigger: SourceTrigger) => void, onError: (error: Error) => void) => {
      if (watcher) return;
      watcher = watch(root, { ignoreInitial: true, ignored: (path: string) => isSkipped(root, path) });
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
      watcher.on('add', noted).on('change', noted).on('unlink', noted).on('addDir', noted).on('unlinkDir', noted);
      watcher.on('error', (error: unknown) => onError(error instanceof Error ? error : new Error(String(error))));
      const started = watcher;
      await new Promise<void>((ready) => started.once('ready', ready));
    },
    close: async () => {
      clearTimeout(timer);
      const current = watcher;
      watcher = undefined;
      await current?.close();
    },
  };
};
