/**
 * The plan log: JSON Lines, one line per API operation of an apply (interface.md), plus one line
 * per change skipped because something it depends on failed.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { PlanLogEntry } from '../core/model.js';

export interface PlanLogSink {
  write(entry: PlanLogEntry): void;
  close(): Promise<void>;
}

/** Appends entries to `file` (created with its directory). */
export const openPlanLog = (file: string): PlanLogSink => {
  mkdirSync(dirname(file), { recursive: true });
  const stream: WriteStream = createWriteStream(file, { flags: 'a', encoding: 'utf8' });
  return {
    write: (entry) => {
      stream.write(`${JSON.stringify(entry)}\n`);
    },
    close: () =>
      new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve()))),
  };
};

/** Keeps entries in memory (tests, the watcher). */
export const memoryPlanLog = (): PlanLogSink & { entries: PlanLogEntry[] } => {
  const entries: PlanLogEntry[] = [];
  return { entries, write: (entry) => entries.push(entry), close: async () => {} };
};
