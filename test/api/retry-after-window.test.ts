/**
 * A whole `apply` of the examples repository against a fixed-window limiter (the emulator's
 * `windowed429`: every 5th request is refused with `Retry-After: 1`, and so is every request that
 * arrives while that window is open). The client must start nothing inside an open window, except
 * requests already on their way when the 429 was answered. On an idle machine 50 ms covers those;
 * the test allows 150 ms because test workers share two cores, and a request the client had sent
 * before the 429 reached it was seen arriving up to 100 ms later there (a new connection under
 * load). The benchmark counts with 50 ms.
 */
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/emulator/server.js';
import { API_KEY, cli, removeDir, tempDir } from '../cli/run.js';
import { type EmulatorProcess, startEmulatorProcess } from './emulator-process.js';

const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples');
const IN_FLIGHT_ALLOWANCE_MS = 150;

/**
 * Requests that arrived inside a window after the 429 that opened it had been answered (+ the
 * allowance), each with how long after that answer it arrived.
 */
const startedInsideWindows = (log: readonly RequestLogEntry[], windowMs: number): string[] => {
  const windows = log
    .filter((r) => r.fault === 'forced-429')
    .map((r) => ({ answered: r.ts + r.durationMs, to: r.ts + windowMs }));
  return log.flatMap((r) => {
    const hit = windows.find((w) => r.ts > w.answered + IN_FLIGHT_ALLOWANCE_MS && r.ts < w.to);
    return hit ? [`${r.method} ${r.path} ${r.status}, ${Math.round(r.ts - hit.answered)} ms after the 429`] : [];
  });
};

let emulator: EmulatorProcess;
let dir: string;
let work: string;
beforeEach(async () => {
  work = await tempDir();
  emulator = await startEmulatorProcess({ apiKey: API_KEY, faults: { windowed429: 5 }, outDir: work });
  dir = await tempDir();
  await cp(EXAMPLES, dir, { recursive: true });
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(dir);
  await removeDir(work);
});

it('an apply of the examples starts no request inside an open Retry-After window', async () => {
  const run = await cli(['apply', '--dir', dir], {
    cwd: dir,
    env: { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: API_KEY },
  });
  const log = await emulator.requests();
  expect(run.stderr).not.toMatch(/error|failed:/i);
  expect(run.code).toBe(0);
  const opened = log.filter((r) => r.fault === 'forced-429').length;
  expect(opened).toBeGreaterThan(3);
  expect(startedInsideWindows(log, 1000), `${log.length} requests, ${opened} windows`).toEqual([]);
}, 120_000);
