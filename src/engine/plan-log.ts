/**
 * The plan log: JSON Lines, one line per API operation of an apply (the README, "The plan and the plan log"), plus one line
 * per change skipped (something it depends on failed, or the run was stopped first).
 */
import { createWriteStream, rmdirSync, rmSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, CortexSyncError } from '../core/errors.js';
import type { PlanLogEntry } from '../core/model.js';
import { openForAppendNoFollow } from './no-follow-path.js';

export interface PlanLogSink {
  write(entry: PlanLogEntry): void;
  close(): Promise<void>;
}

/** A plan log in a file, with what the run wrote into it. */
export interface FilePlanLog extends PlanLogSink {
  readonly file: string;
  /** Write requests (not reads) logged so far, per `kind/id` they were made for. */
  writesByObject(): ReadonlyMap<string, number>;
  /** After `close`: whether the file holds lines of this run (a run that only read leaves none). */
  kept(): boolean;
}

const isRead = (entry: PlanLogEntry): boolean => entry.method === 'GET';

/** A plan log that could not be written (a full disk, a removed mount): by the time it shows, the run's requests were sent. */
const writeFailure = (file: string, error: Error): CortexSyncError =>
  new CortexSyncError(
    'APPLY_FAILED',
    `could not write the plan log ${file} (${error.message}): the requests of this run were sent, but its log of them is incomplete`,
    { cause: error },
  );

/**
 * Appends entries to `file` (created with its folders), never through a symlink: below `under`
 * (the working directory) when `file` is inside it, every folder on the way must be a real one
 * (`no-follow-path.ts`). The file is opened at once, so a path that cannot be written fails here
 * — before the apply sends anything — as a `ConfigError` naming the path.
 * Reads are held back until the run logs something else (a write, a failure, a skipped change):
 * a run that only read (no changes, a refused plan, a lease it never got) leaves no plan log,
 * and no folder it created for one.
 */
export const openPlanLog = (file: string, options: { under?: string } = {}): FilePlanLog => {
  let fd: number;
  let existed: boolean;
  let createdDir: string | undefined;
  try {
    ({ fd, existed, createdFolder: createdDir } = openForAppendNoFollow(file, options.under, 'the plan log'));
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`cannot open the plan log ${file}: ${(error as Error).message}`, { cause: error });
  }
  const stream: WriteStream = createWriteStream(file, { fd, encoding: 'utf8' });
  let failure: Error | undefined;
  stream.on('error', (error) => {
    failure ??= error;
  });
  const heldReads: PlanLogEntry[] = [];
  let recorded = false;
  let kept = false;
  const writes = new Map<string, number>();
  let closing: Promise<void> | undefined;
  const append = (entry: PlanLogEntry): void => {
    // A read made while applying (a lookup before a write) is marked as one: `action` names the
    // change it serves, not what the request did.
    const line = isRead(entry) ? { ...entry, read: true } : entry;
    if (!failure) stream.write(`${JSON.stringify(line)}\n`);
  };
  return {
    file,
    write: (entry) => {
      if (isRead(entry) && !recorded) {
        heldReads.push(entry);
        return;
      }
      if (entry.method !== null && !isRead(entry)) {
        const key = `${entry.kind}/${entry.id}`;
        writes.set(key, (writes.get(key) ?? 0) + 1);
      }
      if (!recorded) {
        recorded = true;
        for (const read of heldReads.splice(0)) append(read);
      }
      append(entry);
    },
    writesByObject: () => writes,
    kept: () => kept,
    close: () =>
      (closing ??= new Promise<void>((resolve, reject) => {
        if (failure) return reject(writeFailure(file, failure));
        stream.end((err?: Error | null) => {
          if (err) return reject(writeFailure(file, err));
          kept = recorded;
          if (!recorded && !existed) {
            rmSync(file, { force: true });
            if (createdDir !== undefined) removeEmptyDirs(createdDir, dirname(file));
          }
          resolve();
        });
      })),
  };
};

/** Removes `leaf` and its parents up to `top` (the first folder `mkdir` made), while they are empty. */
const removeEmptyDirs = (top: string, leaf: string): void => {
  for (let dir = leaf; ; dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
    if (dir === top || dirname(dir) === dir) return;
  }
};

/** Keeps entries in memory (tests, the watcher). */
export const memoryPlanLog = (): PlanLogSink & { entries: PlanLogEntry[] } => {
  const entries: PlanLogEntry[] = [];
  return { entries, write: (entry) => entries.push(entry), close: async () => {} };
};
