/**
 * The watcher's plan log is appended to run after run; before a run opens it, a log that reached
 * its size is rotated: `plan-log.jsonl` → `.1` → `.2` … up to `keep` old files, the oldest
 * removed. Renames and removals act on the names themselves: a symlink planted at a rotated name is
 * replaced (or removed), never written through, and a writer still holding the file open keeps
 * writing into the renamed file, so no line is lost.
 */
import { lstat, rename, unlink } from 'node:fs/promises';

export const DEFAULT_PLAN_LOG_MAX_BYTES = 10 * 1024 * 1024;
export const DEFAULT_PLAN_LOG_KEEP = 5;

export interface PlanLogRotation {
  /** Rotate once the file holds this many bytes. */
  maxBytes: number;
  /** Old files kept (`.1` newest); 0 = the full log is removed. */
  keep: number;
}

const missing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/** Rotates `file` when it is a regular file of at least `maxBytes`; true when it did. */
export const rotatePlanLog = async (file: string, rotation: PlanLogRotation): Promise<boolean> => {
  const found = await lstat(file).catch((error: unknown) => {
    if (missing(error)) return undefined;
    throw error;
  });
  if (!found?.isFile() || found.size < rotation.maxBytes) return false;
  const named = (n: number) => (n === 0 ? file : `${file}.${n}`);
  await unlink(named(rotation.keep)).catch((error: unknown) => {
    if (!missing(error)) throw error;
  });
  for (let n = rotation.keep - 1; n >= 0; n -= 1) {
    await rename(named(n), named(n + 1)).catch((error: unknown) => {
      if (!missing(error)) throw error;
    });
  }
  return true;
};

/** `10M`, `512K`, `1G` or a number of bytes → bytes; throws saying what it expects. */
export const parseSize = (text: string): number => {
  const match = /^(\d+)\s*([KMG]?)i?B?$/i.exec(text.trim());
  const unit = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[(match?.[2] ?? '').toUpperCase()];
  const n = match && unit !== undefined ? Number(match[1]) * unit : NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`expected a size such as 10M, 512K or a number of bytes, got '${text}'`);
  return n;
};
