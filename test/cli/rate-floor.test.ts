/**
 * `cortex-sync.yaml` is the repository's (a pull request writes it): it may lower the client's
 * request rate only down to a floor, never slow every read to a crawl. Below the floor is an error
 * naming the file, the line and the floor; the operator's `CORTEX_RATE_LIMIT` may still go lower.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/engine/context.js';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let emulator: RunningEmulator;
let dir: string;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());
beforeEach(async () => {
  dir = await tempDir();
  await writeFiles(dir, { '.cortex/catalog/svc.yaml': serviceYaml('svc') });
});
afterEach(() => removeDir(dir));

const withFile = (body: string) => writeFiles(dir, { 'cortex-sync.yaml': `sourceId: rate-floor\n${body}\n` });

describe('requestsPerMinute in cortex-sync.yaml', () => {
  it('under the floor: validate fails naming the file, the line and the floor', async () => {
    await withFile('requestsPerMinute: 1');
    const run = await cli(['validate', '--dir', '.'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cortex-sync\.yaml:2.*requestsPerMinute.*at least 60/);
    expect(run.stderr).toContain('CORTEX_RATE_LIMIT');
  });

  it('under the floor: plan refuses before it reads anything', async () => {
    await withFile('requestsPerMinute: 1');
    const run = await cli(['plan', '--dir', '.'], { cwd: dir, emulator });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cortex-sync\.yaml:2.*requestsPerMinute.*at least 60/);
    expect(run.stdout).not.toContain('+ create');
  });

  it.each([
    ['0', 'requestsPerMinute: 0'],
    ['a negative number', 'requestsPerMinute: -5'],
    ['a fraction', 'requestsPerMinute: 59.5'],
    ['a string', "requestsPerMinute: '1'"],
  ])('%s is an error naming the line', async (_, body) => {
    await withFile(body);
    const run = await cli(['validate', '--dir', '.'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cortex-sync\.yaml:2.*requestsPerMinute/);
  });

  it('at the floor, and a large value, are accepted', async () => {
    for (const value of ['60', '100000']) {
      await withFile(`requestsPerMinute: ${value}`);
      const run = await cli(['plan', '--dir', '.'], { cwd: dir, emulator });
      expect(run.stderr).not.toMatch(/requestsPerMinute/);
      expect(run.code).toBe(0);
    }
  });

  it("the operator's CORTEX_RATE_LIMIT may go under the floor; the file's value is then not used", async () => {
    await withFile('requestsPerMinute: 1');
    const run = await cli(['plan', '--dir', '.'], { cwd: dir, emulator, env: { CORTEX_RATE_LIMIT: '30' } });
    // The file is still wrong (the repository proposed a crawl): said, and refused.
    expect(run.code).toBe(1);
    await withFile('requestsPerMinute: 120');
    const low = await cli(['plan', '--dir', '.'], { cwd: dir, emulator, env: { CORTEX_RATE_LIMIT: '30' } });
    expect(low.stderr).not.toMatch(/requestsPerMinute/);
    expect(low.code).toBe(0);
  });
});

/**
 * Virtual time for a whole CLI run: every sleep waits for its deadline, and time jumps to the
 * earliest deadline only while something sleeps (real I/O to the emulator happens in between).
 */
const schedulerClock = () => {
  let t = 0;
  const sleepers: { until: number; wake: () => void }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const drive = () => {
    timer = undefined;
    sleepers.sort((a, b) => a.until - b.until);
    const next = sleepers.shift();
    if (!next) return;
    t = Math.max(t, next.until);
    next.wake();
    if (sleepers.length > 0) timer ??= setTimeout(drive, 2);
  };
  const clock: Clock = {
    now: () => t,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(new Error('aborted'));
        const sleeper = { until: t + ms, wake: resolve };
        signal?.addEventListener(
          'abort',
          () => {
            const i = sleepers.indexOf(sleeper);
            if (i >= 0) sleepers.splice(i, 1);
            reject(new Error('aborted'));
          },
          { once: true },
        );
        sleepers.push(sleeper);
        timer ??= setTimeout(drive, 2);
      }),
  };
  return clock;
};

describe('a plan slowed by a low operator rate', () => {
  it('prints a line at least every 10 s while its requests wait for the rate', async () => {
    const run = await cli(['plan', '--dir', '.'], {
      cwd: dir,
      emulator,
      env: { CORTEX_RATE_LIMIT: '2', CORTEX_SYNC_SOURCE_ID: 'rate-floor' },
      clock: schedulerClock(),
    });
    expect(run.code).toBe(0);
    const stamps = [...run.stderr.matchAll(/^\[(?:(\d+)m )?(\d+) ?s\] Reading the workspace/gm)].map(
      (m) => Number(m[1] ?? 0) * 60 + Number(m[2]),
    );
    expect(stamps.length).toBeGreaterThan(2);
    const gaps = stamps.slice(1).map((s, i) => s - (stamps[i] ?? 0));
    expect(Math.max(stamps[0] ?? 0, ...gaps)).toBeLessThanOrEqual(10);
    expect(run.stderr).toContain('for the rate limit');
  });
});
