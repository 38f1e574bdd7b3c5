/**
 * Reading a file a repository controls (a manifest, `cortex-sync.yaml`) or an operator names (a
 * mounted secret), as a regular file only. What is checked is the descriptor actually opened, so
 * nothing swapped in between a check and the read can be read instead:
 * - opened with `O_NONBLOCK` (a FIFO must not hang the run: opening one for reading without a
 *   writer returns at once, and `fstat` then refuses it), `O_NOCTTY`, and `O_NOFOLLOW` for the
 *   path already resolved (a symlink put in its place is refused, not followed);
 * - `fstat` on that descriptor: a regular file, not a directory, device, FIFO or socket;
 * - where that descriptor really is (Linux: `/proc/self/fd/N`; elsewhere the path resolved again
 *   and compared by device and inode) must be inside, or outside, a given folder;
 * - at most `maxBytes` are read, whatever the size said.
 * A failure is a reason in plain words; it never quotes what the file holds.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
  statSync,
} from 'node:fs';
import path from 'node:path';

interface RegularFileOptions {
  /** Refuse a file larger than this (without reading more than one byte past it). */
  maxBytes: number;
  /** The real path of a folder the file must be inside (a manifest root). */
  inside?: string;
  /** The real path of a folder the file must not be inside (a secret must not come from the repository). */
  outside?: string;
  /**
   * `file` is a real path resolved earlier (by discovery): it is opened as it is, and a symlink
   * found there now (swapped in since) is refused rather than resolved again.
   */
  resolved?: boolean;
}

type RegularFileRead =
  | { ok: true; bytes: Buffer; realPath: string }
  | {
      ok: false;
      /** `missing` (nothing there), or why it was not read. */
      code: 'missing' | 'not-regular' | 'outside-root' | 'inside-root' | 'too-large' | 'unreadable';
      /** The size found (`too-large` only). */
      size?: number;
      /** Completes "<name> …": `is a FIFO, not a regular file`, `is a symlink loop`. */
      reason: string;
    };

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | null)?.code;

/** `folder` contains `child` (both real, absolute paths), or is it. */
export const isInsideFolder = (folder: string, child: string): boolean => {
  const rel = path.relative(folder, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** What a non-regular file is, for a message. */
export const fileTypeName = (stat: Stats): string =>
  stat.isDirectory()
    ? 'a directory'
    : stat.isFIFO()
      ? 'a FIFO (named pipe)'
      : stat.isSocket()
        ? 'a socket'
        : stat.isCharacterDevice() || stat.isBlockDevice()
          ? 'a device'
          : stat.isSymbolicLink()
            ? 'a symlink'
            : 'not a regular file';

/** Why a path could not be resolved or opened, without quoting anything. */
export const unreadableReason = (error: unknown): string => {
  switch (errnoOf(error)) {
    case 'ENOENT':
      return 'points at nothing (a dangling symlink)';
    case 'ELOOP':
      return 'is a symlink loop';
    case 'EACCES':
    case 'EPERM':
      return 'cannot be read (permission denied)';
    case 'ENOTDIR':
      return 'points through something that is not a directory';
    case 'EISDIR':
      return 'is a directory, not a file';
    case 'ENXIO':
      return 'is a socket or a device without a reader, not a regular file';
    default:
      return `cannot be read (${errnoOf(error) ?? 'unknown error'})`;
  }
};

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/** Where the open descriptor `fd` really is; undefined when that cannot be told for sure. */
const descriptorPath = (fd: number, opened: string, stat: Stats): string | undefined => {
  try {
    const where = readlinkSync(`/proc/self/fd/${fd}`);
    if (path.isAbsolute(where) && !where.endsWith(' (deleted)')) return where;
  } catch {
    // Not Linux (or no /proc): resolve the path again and make sure it is still the same file.
  }
  try {
    const real = realpathSync.native(opened);
    const now = statSync(real);
    return now.dev === stat.dev && now.ino === stat.ino ? real : undefined;
  } catch {
    return undefined;
  }
};

/** Reads `fd` to its end, or until `limit` bytes; `first` is the size of the first buffer. */
const readAtMost = (fd: number, first: number, limit: number): Buffer => {
  const chunks: Buffer[] = [];
  let total = 0;
  let size = first;
  while (total < limit) {
    const chunk = Buffer.alloc(Math.min(size, limit - total));
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    total += n;
    size = 64 * 1024;
  }
  return Buffer.concat(chunks, total);
};

/**
 * Reads `file` as a regular file under the rules of the module comment. Unless `resolved`, `file`
 * may be a symlink (it is resolved first; a loop or a dangling link is a reason); the resolved path
 * is opened without following a link.
 */
export const readRegularFile = (file: string, options: RegularFileOptions): RegularFileRead => {
  let real = file;
  try {
    if (!options.resolved) real = realpathSync.native(file);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') {
      // A symlink that points at nothing is not "no file": say so.
      try {
        readlinkSync(file);
        return { ok: false, code: 'unreadable', reason: unreadableReason(error) };
      } catch {
        return { ok: false, code: 'missing', reason: 'does not exist' };
      }
    }
    return { ok: false, code: 'unreadable', reason: unreadableReason(error) };
  }
  const placeProblem = (where: string, opened: boolean): RegularFileRead | undefined => {
    if (options.inside !== undefined && !isInsideFolder(options.inside, where)) {
      const reason = opened
        ? 'resolves outside the manifest directory (a folder on its path was replaced by a symlink?)'
        : 'is a symlink that points outside the manifest directory';
      return { ok: false, code: 'outside-root', reason };
    }
    if (options.outside !== undefined && isInsideFolder(options.outside, where))
      return { ok: false, code: 'inside-root', reason: 'is inside the manifest directory' };
    return undefined;
  };
  const early = placeProblem(real, false);
  if (early) return early;

  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS | NO_FOLLOW);
  } catch (error) {
    // The path was resolved a moment ago: a symlink there now was put in its place meanwhile.
    if (errnoOf(error) === 'ENOENT') return { ok: false, code: 'missing', reason: 'was removed while being read' };
    const reason = errnoOf(error) === 'ELOOP' ? 'was replaced by a symlink while being read' : unreadableReason(error);
    return { ok: false, code: 'unreadable', reason };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile())
      return { ok: false, code: 'not-regular', reason: `is ${fileTypeName(stat)}, not a regular file` };
    const where = descriptorPath(fd, real, stat);
    if (where === undefined)
      return { ok: false, code: 'unreadable', reason: 'changed while being opened; it is not read' };
    const late = placeProblem(where, true);
    if (late) return late;
    if (stat.size > options.maxBytes)
      return { ok: false, code: 'too-large', reason: `is ${stat.size.toLocaleString('en-US')} bytes`, size: stat.size };
    const bytes = readAtMost(fd, Math.min(stat.size, options.maxBytes) + 1, options.maxBytes + 1);
    if (bytes.length > options.maxBytes)
      return {
        ok: false,
        code: 'too-large',
        reason: `grew past ${options.maxBytes.toLocaleString('en-US')} bytes while being read`,
        size: bytes.length,
      };
    return { ok: true, bytes, realPath: where };
  } catch (error) {
    return { ok: false, code: 'unreadable', reason: unreadableReason(error) };
  } finally {
    closeSync(fd);
  }
};
