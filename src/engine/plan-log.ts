/**
 * The plan log: JSON Lines, one line per API operation of an apply (interface.md), plus one line
 * per change skipped because something it depends on failed.
 */
import { createWriteStream, existsSync, mkdirSync, openSync, rmSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../core/errors.js';
import type { PlanLogEntry } from '../core/model.js';

export interface PlanLogSink {
  write(entry: PlanLogEntry): void;
  close(): Promise<void>;
}

/**
 * Appends entries to `file` (created with its directory). The file is opened at once, so a path
 * that cannot be written fails here — before the apply sends anything — as a `ConfigError`.
 */
export const openPlanLog = (file: string): PlanLogSink => {
  let fd: number;
  /** A run that wrote nothing (no-op, refused, failed to start) leaves no empty log behind. */
  const existed = existsSync(file);
  let written = 0;
  try {
    mkdirSync(dirname(file), { recursive: true });
    fd = openSync(file, 'a');
  } catch (error) {
    throw new ConfigError(`cannot open the plan log ${file}: ${(error as Error).message}`, { cause: error });
  }
  const stream: WriteStream = createWriteStream(file, { fd, encoding: 'utf8' });
  let failure: Error | undefined;
  stream.on('error', (error) => {
    failure ??= error;
  });
  return {
    write: (entry) => {
      written += 1;
      // A read made while applying (a lookup before a write) is marked as one: `action` names the
      // change it serves, not what the request did.
      const line = entry.method === 'GET' ? { ...entry, read: true } : entry;
      if (!failure) stream.write(`${JSON.stringify(line)}\n`);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (failure) return reject(failure);
        stream.end((err?: Error | null) => {
          if (err) return reject(err);
          if (written === 0 && !existed) rmSync(file, { force: true });
          resolve();
        });
      }),
  };
};

/** Keeps entries in memory (tests, the watcher). */
export const memoryPlanLog = (): PlanLogSink & { entries: PlanLogEntry[] } => {
  const entries: PlanLogEntry[] = [];
  return { entries, write: (entry) => entries.push(entry), close: async () => {} };
};
