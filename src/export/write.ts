/**
 * Writing `export`'s files: every target is checked before anything is written (an existing file
 * is refused without `--force`, and then nothing at all is written), and each file is written
 * atomically: to a temporary file beside it, then moved into place (`link` without `--force`, so
 * a file that appeared meanwhile is never replaced; `rename` with it).
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { countOf } from '../core/plural.js';

export interface FileToWrite {
  /** Relative to the output directory, `/` separators. */
  path: string;
  text: string;
}

const exists = async (path: string): Promise<boolean> => {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
};

/** File operations at once: enough to keep the file system's thread pool busy. */
const FILE_CONCURRENCY = 16;

/** Runs `fn` on every item, at most `FILE_CONCURRENCY` at once; results in the items' order. */
const eachConcurrently = async <T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(FILE_CONCURRENCY, items.length) }, worker));
  return results;
};

/** The targets that already exist (relative paths), in order. */
export const existingTargets = async (outDir: string, files: readonly FileToWrite[]): Promise<string[]> => {
  const found = await eachConcurrently(files, (file) => exists(join(outDir, file.path)));
  return files.filter((_, i) => found[i]).map((file) => file.path);
};

/** Writes one file atomically (see the module comment). */
const writeAtomically = async (target: string, text: string, force: boolean): Promise<void> => {
  const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, text, { flag: 'wx' });
  try {
    if (force) {
      await rename(temp, target);
      return;
    }
    await link(temp, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new ConfigError(`${target} appeared while exporting; nothing was overwritten (pass --force to replace it)`);
    }
    throw error;
  } finally {
    await rm(temp, { force: true });
  }
};

/**
 * Writes every file under `outDir`. Without `force`, refuses (a `ConfigError`, nothing written)
 * when any target exists already.
 */
export const writeExportFiles = async (
  outDir: string,
  files: readonly FileToWrite[],
  force: boolean,
): Promise<void> => {
  if (!force) {
    const existing = await existingTargets(outDir, files);
    if (existing.length > 0) {
      const shown = existing.slice(0, 5).join(', ');
      const more = existing.length > 5 ? ` and ${existing.length - 5} more` : '';
      throw new ConfigError(
        `${countOf(existing.length, 'file')} to export ${existing.length === 1 ? 'exists' : 'exist'} already in ${outDir}: ${shown}${more}. Nothing was written; pass --force to replace ${existing.length === 1 ? 'it' : 'them'}`,
      );
    }
  }
  // Folders first (once each), then the files side by side.
  const folders = [...new Set(files.map((file) => dirname(join(outDir, file.path))))];
  for (const folder of folders) await mkdir(folder, { recursive: true });
  await eachConcurrently(files, (file) => writeAtomically(join(outDir, file.path), file.text, force));
};
