/**
 * Files a runtime writes where a repository may have put something first (the CLI's plan log under
 * `.cortex-sync/` of the working directory, `export --out`'s files): never through a symlink.
 * Below an anchor the operator chose (the working directory; `--out`), every folder on the way
 * must be a real folder and the file itself absent or a regular file; folders are created one
 * level at a time and checked again, and the file is opened with `O_NOFOLLOW` (and `O_NONBLOCK`,
 * so a FIFO cannot hang the run), then checked by its descriptor: what was opened is a regular
 * file (or a character device such as /dev/null, which only an operator names) at the place
 * intended. A refusal names the path and writes nothing.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { openSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { fileTypeName } from '../source/regular-file.js';

/** The folders from the anchor down to `relPath`'s folder: `a`, `a/b` for `a/b/c.yaml` (`/` separators). */
export const foldersOf = (relPath: string): string[] => {
  const parts = relPath.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
};

/** Why what `lstat` found at a folder of the way may not be written into, or undefined; `writer` completes "… writes only into real folders". */
export const folderProblem = (found: Stats, writer = 'cortex-sync'): string | undefined =>
  found.isSymbolicLink()
    ? `is a symlink; ${writer} writes only into real folders`
    : !found.isDirectory()
      ? `is ${found.isFile() ? 'a regular file' : fileTypeName(found)}, not a folder`
      : undefined;

/** Why what `lstat` (or `fstat`) found at a target may not be written, or undefined; `writer` completes "… never writes through one". */
export const targetProblem = (found: Stats, devices: boolean, writer = 'cortex-sync'): string | undefined =>
  found.isSymbolicLink()
    ? `is a symlink; ${writer} never writes through one`
    : found.isFile() || (devices && found.isCharacterDevice())
      ? undefined
      : `is ${fileTypeName(found)}, not a regular file`;

const lstatOrNothing = (path: string): Stats | undefined => {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
};

const isBelow = (folder: string, path: string): boolean => {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

interface OpenedForAppend {
  fd: number;
  /** The first folder this call created (removed again when the caller leaves nothing in it), if any. */
  createdFolder?: string;
  /** Whether the file was there before. */
  existed: boolean;
}

const OPEN_APPEND =
  constants.O_WRONLY |
  constants.O_APPEND |
  constants.O_CREAT |
  (constants.O_NOFOLLOW ?? 0) |
  (constants.O_NONBLOCK ?? 0) |
  (constants.O_NOCTTY ?? 0);

/**
 * Opens `file` for appending (created with its folders), never through a symlink: below `anchor`
 * when `file` is inside it (the working directory), else below `file`'s own folder (a path the
 * operator gave outside it). `what` names the file in a refusal (`the plan log`).
 */
export const openForAppendNoFollow = (file: string, anchor: string | undefined, what: string): OpenedForAppend => {
  const base = anchor !== undefined && isBelow(anchor, file) ? anchor : dirname(file);
  const refuse = (path: string, problem: string): never => {
    throw new ConfigError(`cannot open ${what} ${file}: ${path} ${problem}; nothing was written`);
  };
  let createdFolder: string | undefined;
  if (lstatOrNothing(base) === undefined) {
    // The operator's own folder (outside the working directory): made as asked.
    createdFolder = mkdirSync(base, { recursive: true });
  }
  const realBase = realpathSync.native(base);
  const relPath = relative(base, file).split(sep).join('/');
  for (const folder of foldersOf(relPath)) {
    const shown = join(base, folder);
    const path = join(realBase, folder);
    let found = lstatOrNothing(path);
    if (found === undefined) {
      try {
        mkdirSync(path);
        createdFolder ??= path;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      found = lstatSync(path);
    }
    const problem = folderProblem(found);
    if (problem !== undefined) refuse(shown, problem);
  }
  const target = join(realBase, relPath);
  const before = lstatOrNothing(target);
  if (before !== undefined) {
    const problem = targetProblem(before, true);
    if (problem !== undefined) refuse(file, problem);
  }
  let fd: number;
  try {
    fd = openSync(target, OPEN_APPEND, 0o666);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return refuse(file, 'is a symlink; cortex-sync never writes through one');
    if (code === 'ENXIO') return refuse(file, 'is a FIFO (named pipe), not a regular file');
    throw error;
  }
  const opened = fstatSync(fd);
  const problem = targetProblem(opened, true);
  const where = opened.isFile() ? descriptorPath(fd) : target;
  if (problem !== undefined || (where !== undefined && where !== target)) {
    closeSync(fd);
    refuse(file, problem ?? 'was replaced while being opened (a folder on its way became a symlink?)');
  }
  return { fd, existed: before !== undefined, ...(createdFolder !== undefined ? { createdFolder } : {}) };
};

/** Where an open descriptor is (Linux: `/proc/self/fd/N`); undefined where that cannot be told. */
const descriptorPath = (fd: number): string | undefined => {
  try {
    const where = readlinkSync(`/proc/self/fd/${fd}`);
    return isAbsolute(where) ? where : undefined;
  } catch {
    return undefined;
  }
};
