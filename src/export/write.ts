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

/** The targets that already exist (relative paths), in order. */
export const existingTargets = async (outDir: string, files: readonly FileToWrite[]): Promise<string[]> => {
  const found: string[] = [];
  for (const file of files) if (await exists(join(outDir, file.path))) found.push(file.path);
  return found;
};

/** Writes one file atomically (see the module comment). */
const writeAtomically = async (target: string, text: string, force: boolean): Promise<void> => {
  await mkdir(dirname(target), { recursive: true });
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
        `${existing.length} file(s) to export exist already in ${outDir}: ${shown}${more}. Nothing was written; pass --force to replace them`,
      );
    }
  }
  for (const file of files) await writeAtomically(join(outDir, file.path), file.text, force);
};
