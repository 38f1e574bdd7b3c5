/**
 * What a user sees around the plan: the plan first, the confirmation on a terminal, progress
 * while an apply works, every diagnostic in the machine outputs, and the managed objects whose
 * manifests are gone. All against the emulator on 127.0.0.1.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../src/engine/context.js';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { ANSI, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());

/**
 * A clock the test owns: `now()` moves by `stepMs` per call and by nothing else (a sleep waits
 * at most 200 ms of real time, so periodic work such as a lease renewal stays periodic).
 */
const fakeClock = (stepMs: number): Clock => {
  let t = 1_700_000_000_000;
  return {
    now: () => (t += stepMs),
    sleep: (ms, signal) => systemClock.sleep(Math.min(ms, 200), signal),
  };
};

const services = (prefix: string, n: number) =>
  writeFiles(
    dir,
    Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`${prefix}-${i}/cortex.yaml`, serviceYaml(`${prefix}-${i}`)]),
    ),
  );

const writes = (since: number) => emulator.requests.slice(since).filter((r) => r.method !== 'GET');

/** `[1m 05s] Applying: 37/120 done, …` → elapsed seconds and operations done. */
const progressLines = (stderr: string) =>
  [...stderr.matchAll(/^\[(?:(\d+)m )?(\d+) ?s\] Applying: (\d+)\/(\d+) done, (\d+) failed/gm)].map((m) => ({
    seconds: Number(m[1] ?? 0) * 60 + Number(m[2]),
    done: Number(m[3]),
    total: Number(m[4]),
  }));

describe('apply progress without a terminal', () => {
  it('a line every 100 operations while the clock stands still, and a last one at the end', async () => {
    await services('progress-ops', 230);
    const run = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'progress-ops', CORTEX_RATE_LIMIT: '100000' },
      clock: fakeClock(0),
    });
    expect(run.code).toBe(0);
    // The plan comes first on stdout, the report after it.
    expect(run.stdout.indexOf('+ create entity/progress-ops-0')).toBeLessThan(run.stdout.indexOf('Apply complete'));
    const lines = progressLines(run.stderr);
    const total = lines[0]?.total ?? 0;
    expect(total).toBeGreaterThanOrEqual(230);
    expect(lines.map((l) => l.done)).toEqual([0, 100, 200, total]);
    expect(run.stderr).not.toMatch(ANSI);
  }, 60_000);

  it('a line once 10 s of the run clock have passed, even before 100 operations', async () => {
    await services('progress-time', 60);
    const run = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'progress-time', CORTEX_RATE_LIMIT: '100000' },
      clock: fakeClock(50),
    });
    expect(run.code).toBe(0);
    const lines = progressLines(run.stderr);
    expect(lines.length).toBeGreaterThan(2);
    for (const [i, line] of lines.entries()) {
      if (i === 0 || i === lines.length - 1) continue;
      const before = lines[i - 1]!;
      // Each line is due: 10 s of clock time, or 100 operations, since the one before.
      expect(line.seconds - before.seconds >= 10 || line.done - before.done >= 100).toBe(true);
    }
    expect(lines.at(-1)).toMatchObject({ done: lines[0]!.total });
  }, 60_000);
});

describe('apply progress on a terminal', () => {
  it('one line rewritten in place, cleared before the report', async () => {
    await services('progress-tty', 5);
    const run = await cli(['apply', '--auto-approve', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'progress-tty', NO_COLOR: '1' },
      tty: true,
    });
    expect(run.code).toBe(0);
    const updates = run.stderr.split('\r\u001b[2K').filter((s) => s.startsWith('Applying:'));
    expect(updates.length).toBeGreaterThan(2);
    expect(updates.at(-1)).toMatch(/^Applying: (\d+)\/\1 done, 0 failed, \d+ requests$/);
    // Never a new line between updates: the terminal shows one line.
    expect(updates.slice(0, -1).every((u) => !u.includes('\n'))).toBe(true);
    expect(run.stderr.endsWith('\r\u001b[2K')).toBe(true);
  });
});

describe('apply confirmation on a terminal', () => {
  it('yes: shows the plan, asks, then applies', async () => {
    await services('confirm-yes', 1);
    const before = emulator.requests.length;
    const run = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'confirm-yes', NO_COLOR: '1' },
      tty: true,
      input: 'yes\n',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('+ create entity/confirm-yes-0');
    expect(run.stderr).toContain("Only 'yes' will be accepted");
    expect(run.stdout).toContain('Apply complete');
    expect(writes(before).length).toBeGreaterThan(0);
  });

  it('no: shows the plan, applies nothing, exit 1', async () => {
    await services('confirm-no', 1);
    const run = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'confirm-no' },
      tty: true,
      input: 'no\n',
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('create entity/confirm-no-0');
    expect(run.stderr).toMatch(
      /Apply cancelled: no change was applied; the only writes were \d+ requests? to the apply lease record/,
    );
    // Nothing was applied: the next plan still creates the service.
    const after = await cli(['plan', '--output', 'json'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'confirm-no' },
    });
    expect(JSON.parse(after.stdout)).toMatchObject({ summary: { create: 1 } });
  });

  it('--auto-approve on a terminal, or no terminal at all: no question, the apply proceeds', async () => {
    await services('confirm-skip', 1);
    const approved = await cli(['apply', '--auto-approve', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'confirm-skip' },
      tty: true,
    });
    expect(approved.code).toBe(0);
    expect(approved.stderr).not.toContain('Do you want to perform these actions?');
    await services('confirm-skip-more', 1);
    const piped = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'confirm-skip' },
    });
    expect(piped.code).toBe(0);
    expect(piped.stderr).not.toContain('Do you want to perform these actions?');
    expect(piped.stdout).toContain('Apply complete');
  });
});
