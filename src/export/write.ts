/**
 * Writing `export`'s files. Writes never leave `--out`:
 * - `--out` itself is the operator's choice and is resolved to its real path once; below it,
 *   every folder on the way to a file must be a real folder (a symlinked folder is refused, not
 *   followed) and every target must be absent or a regular file (a symlinked, FIFO or device
 *   target is refused, even with `--force`); a path that is absolute or climbs with `..` is refused;
 * - all of that is checked for every file before anything is written, and an existing file is
 *   refused without `--force`: then nothing at all is written;
 * - folders are created one level at a time and checked again after creation (never `mkdir -p`
 *   through a link), and each file is written atomically: to a temporary file beside it (`wx`:
 *   never through an existing name), whose real path is checked to be inside `--out`, then moved
 *   into place (`link` without `--force`, so a file that appeared meanwhile is never replaced;
 *   `rename` with it, which replaces a name, never writes through a link).
 * A file marked `generated` (the JSON Schemas export writes beside the manifests: cortex-sync's
 * own, not a person's) is written only when missing or different, and then replaced without
 * `--force`; the same checks hold for it (a symlink in its place is refused, never read through).
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { link, lstat, mkdir, open, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { countOf } from '../core/plural.js';
import { folderProblem, foldersOf, targetProblem } from '../engine/no-follow-path.js';
import { isInsideFolder } from '../source/regular-file.js';

interface FileToWrite {
  /** Relative to the output directory, `/` separators. */
  path: string;
  text: string;
  /** cortex-sync's own file (see the module comment): skipped when the same, replaced when not. */
  generated?: boolean;
}

/** File operations at once: enough to keep the file system's thread pool busy. */
const FILE_CONCURRENCY = 16;

/** Runs `fn` on every item, at most `FILE_CONCURRENCY` at once; results in the items' order. */
const eachConcurrently = async <T, R>(
  items: readonly T[],
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(FILE_CONCURRENCY, items.length) }, worker));
  return results;
};

const lstatOrNothing = async (path: string): Promise<Stats | undefined> => {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
};

/** Why `relPath` may not be written (a path that leaves `--out`, a link on the way), or undefined; `existing` when it exists. */
const checkTarget = async (
  realOut: string | undefined,
  relPath: string,
): Promise<{ problem?: string; existing?: boolean }> => {
  const normal = posix.normalize(relPath);
  if (posix.isAbsolute(relPath) || normal !== relPath || normal.split('/').some((p) => p === '..' || p === ''))
    return { problem: `${relPath} is not a plain relative path` };
  if (realOut === undefined) return {};
  for (const folder of foldersOf(relPath)) {
    const found = await lstatOrNothing(join(realOut, folder));
    if (found === undefined) return {};
    const problem = folderProblem(found, 'export');
    if (problem !== undefined) return { problem: `${folder} ${problem}` };
  }
  const target = await lstatOrNothing(join(realOut, relPath));
  if (target === undefined) return {};
  const problem = targetProblem(target, false, 'export');
  return problem !== undefined ? { problem: `${relPath} ${problem}` } : { existing: true };
};

/** Creates `relDir` under `realOut` one level at a time, refusing a link or a non-folder on the way. */
const createFolders = async (realOut: string, relDir: string): Promise<void> => {
  for (const folder of relDir === '.' ? [] : foldersOf(`${relDir}/x`)) {
    const path = join(realOut, folder);
    await mkdir(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    const found = await lstat(path);
    if (found.isSymbolicLink() || !found.isDirectory())
      throw new ConfigError(`${folder} became a symlink or a file while exporting; stopped writing`);
  }
};

/** Writes one file atomically (see the module comment). */
const writeAtomically = async (realOut: string, relPath: string, text: string, force: boolean): Promise<void> => {
  const target = join(realOut, relPath);
  const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, text, { flag: 'wx' });
  try {
    const where = await realpath(temp);
    if (!isInsideFolder(realOut, where) || dirname(where) !== dirname(target))
      throw new ConfigError(`a folder of ${relPath} was replaced by a symlink while exporting; stopped writing`);
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

/** Whether the regular file at `path` holds exactly `text` (opened without following a link). */
const holds = async (path: string, text: string): Promise<boolean> => {
  const want = Buffer.from(text, 'utf8');
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size !== want.length) return false;
    const got = Buffer.alloc(want.length);
    const { bytesRead } = await handle.read(got, 0, want.length, 0);
    return bytesRead === want.length && got.equals(want);
  } finally {
    await handle.close();
  }
};

const listed = (paths: readonly string[]): string => {
  const shown = paths.slice(0, 5).join(', ');
  return `${shown}${paths.length > 5 ? ` and ${paths.length - 5} more` : ''}`;
};

/**
 * Writes every file under `outDir` (see the module comment). Refuses with a `ConfigError`, before
 * anything is written, a target that would leave `outDir`, and, without `force`, any target that
 * exists already.
 */
export const writeExportFiles = async (
  outDir: string,
  files: readonly FileToWrite[],
  force: boolean,
): Promise<void> => {
  const before = await realpath(outDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  const checked = await eachConcurrently(files, (file) => checkTarget(before, file.path));
  const refused = checked.flatMap((c) => (c.problem !== undefined ? [c.problem] : []));
  // Files under one symlinked or FIFO folder share its reason: each reason is said once.
  if (refused.length > 0)
    throw new ConfigError(
      `${countOf(refused.length, 'file')} to export cannot be written safely into ${outDir}: ${listed([...new Set(refused)])}. Nothing was written`,
    );
  const isThere = (i: number): boolean => checked[i]?.existing === true;
  // cortex-sync's own files that hold what would be written already are left as they are.
  const same = await eachConcurrently(files, async (file, i) =>
    file.generated === true && before !== undefined && isThere(i) ? holds(join(before, file.path), file.text) : false,
  );
  const existing = files.filter((f, i) => isThere(i) && f.generated !== true).map((f) => f.path);
  if (!force && existing.length > 0)
    throw new ConfigError(
      `${countOf(existing.length, 'file')} to export ${existing.length === 1 ? 'exists' : 'exist'} already in ${outDir}: ${listed(existing)}. Nothing was written; pass --force to replace ${existing.length === 1 ? 'it' : 'them'}`,
    );
  const toWrite = files.filter((_, i) => same[i] !== true);
  await mkdir(outDir, { recursive: true });
  const realOut = await realpath(outDir);
  if (before !== undefined && realOut !== before)
    throw new ConfigError(`${outDir} was replaced while exporting; nothing was written`);
  // Folders first (once each), then the files side by side.
  for (const folder of [...new Set(toWrite.map((file) => posix.dirname(file.path)))])
    await createFolders(realOut, folder);
  await eachConcurrently(toWrite, (file) =>
    writeAtomically(realOut, file.path, file.text, force || file.generated === true),
  );
};
