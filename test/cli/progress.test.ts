/** The apply's progress as the engine's events drive it, without a terminal and on one. */
import { describe, expect, it } from 'vitest';
import { createApplyProgress, createReadProgress } from '../../src/cli/progress.js';
import type { Clock, EngineEvent } from '../../src/engine/context.js';
import { capture } from './run.js';

const clockAt = (): Clock & { set: (ms: number) => void } => {
  let t = 0;
  return { now: () => t, sleep: () => Promise.resolve(), set: (ms) => (t = ms) };
};

const done = (id: string, outcome: 'ok' | 'failed' | 'skipped' = 'ok'): EngineEvent => ({
  type: 'operation.done',
  kind: 'entity',
  id,
  action: 'create',
  outcome,
  status: outcome === 'ok' ? 200 : outcome === 'failed' ? 400 : null,
  durationMs: 5,
  ...(outcome === 'failed' ? { error: 'create entity failed: HTTP 400: owner not found' } : {}),
});
const request: EngineEvent = {
  type: 'request',
  operation: 'create entity',
  method: 'POST',
  status: 200,
  durationMs: 5,
};

/** A clock whose sleeps resolve when the test moves time past their end. */
const steppedClock = () => {
  let t = 0;
  const slept: number[] = [];
  const sleepers: { until: number; wake: () => void }[] = [];
  const clock: Clock = {
    now: () => t,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        slept.push(ms);
        if (signal?.aborted) return reject(new Error('aborted'));
        signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        sleepers.push({ until: t + ms, wake: resolve });
      }),
  };
  const advance = async (to: number) => {
    t = to;
    for (const s of sleepers.splice(0)) {
      if (s.until <= t) s.wake();
      else sleepers.push(s);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  };
  return { clock, slept, advance };
};

describe('apply progress', () => {
  it('without a terminal: each failure at once, a pause for Retry-After, what a slow answer holds up, an ETA from the rate', () => {
    const out = capture();
    const clock = clockAt();
    const progress = createApplyProgress({ stream: out.stream, tty: false, clock, ratePerMinute: () => 60 });
    progress.emit({
      type: 'plan.ready',
      summary: { create: 10, update: 0, delete: 0, archive: 0, noop: 0 },
      pending: 10,
    });
    progress.start();
    clock.set(1_000);
    progress.emit(request);
    progress.emit(done('a'));
    progress.emit(request);
    progress.emit(done('b', 'failed'));
    progress.emit({ type: 'ratelimit.paused', ms: 30_000 });
    progress.emit({
      type: 'request.waiting',
      operation: 'create entity c',
      method: 'POST',
      host: 'api.example.com',
      waitedMs: 5_000,
      attempt: 2,
      maxAttempts: 5,
    });
    clock.set(12_000);
    progress.emit(request);
    progress.emit(done('c'));
    progress.finish();
    const lines = out.text().trim().split('\n');
    expect(lines).toEqual([
      '[0 s] Applying: 0/10 done, 0 failed, 0 requests',
      '✗ create entity/b failed (HTTP 400): create entity failed: HTTP 400: owner not found',
      'Paused 30 s: the API asked to wait (Retry-After); the apply goes on after.',
      'Waiting 5 s for api.example.com to answer POST create entity c (attempt 2 of 5)…',
      // 10 s after the last line a request makes one due: 8 left at the whole run's pace, the
      // pause still ahead included (2 operations in 12 + 19 s: 124 s), beats the pace of the
      // last minute (48 s, plus 19) and the rate (1.5 requests each at 60 a minute: 12 s, plus 19).
      '[12 s] Applying: 2/10 done, 1 failed, 3 requests, paused 19 s for Retry-After, about 2m 04s left',
      // The last line when the apply ends: 7 left, 3 done in 31 s.
      '[12 s] Applying: 3/10 done, 1 failed, 3 requests, paused 19 s for Retry-After, about 1m 12s left',
    ]);
  });

  it('the time left follows the rate when it is slower than the pace so far', () => {
    const out = capture(true);
    const clock = clockAt();
    const progress = createApplyProgress({ stream: out.stream, tty: true, clock, ratePerMinute: () => 30 });
    progress.emit({
      type: 'plan.ready',
      summary: { create: 100, update: 0, delete: 0, archive: 0, noop: 0 },
      pending: 100,
    });
    progress.start();
    // None before the server has shown its rate (a Retry-After pause, or a full minute).
    clock.set(100);
    progress.emit(request);
    progress.emit(done('e0'));
    expect(out.text()).not.toContain('left');
    for (let i = 1; i < 60; i++) {
      clock.set((i + 1) * 1_000);
      progress.emit(request);
      progress.emit(done(`e${i}`));
    }
    // 40 left at one request each and 30 requests a minute: 80 s, though the pace so far says 40 s.
    expect(out.text()).toMatch(/Applying: 60\/100 done, 0 failed, 60 requests, about 1m 20s left$/);
  });

  it('on a terminal: one line rewritten, failures printed above it', () => {
    const out = capture(true);
    const clock = clockAt();
    const progress = createApplyProgress({ stream: out.stream, tty: true, clock, ratePerMinute: () => 600 });
    progress.emit({
      type: 'plan.ready',
      summary: { create: 2, update: 0, delete: 0, archive: 0, noop: 0 },
      pending: 2,
    });
    progress.start();
    progress.emit(done('a', 'failed'));
    progress.emit(done('b'));
    progress.finish();
    const text = out.text();
    expect(text).toContain('\r\u001b[2K✗ create entity/a failed (HTTP 400)');
    expect(text).toContain('\r\u001b[2KApplying: 2/2 done, 1 failed, 0 requests');
    expect(text.endsWith('\r\u001b[2K')).toBe(true);
  });
});

describe('the estimate of the time left', () => {
  it('uses the rate the client learned from the server, not the configured one', () => {
    // 1,500 changes, one request each; the client was configured for 1,000 a minute and spent its
    // burst, then the server's 429s taught it 300 a minute. 1,070 are left: 214 s at 300 a minute.
    const out = capture(true);
    const clock = clockAt();
    let learned = 1_000;
    const progress = createApplyProgress({ stream: out.stream, tty: true, clock, ratePerMinute: () => learned });
    progress.emit({
      type: 'plan.ready',
      summary: { create: 1500, update: 0, delete: 0, archive: 0, noop: 0 },
      pending: 1500,
    });
    progress.start();
    for (let i = 0; i < 430; i++) {
      clock.set(Math.round((i * 20_000) / 430));
      progress.emit(request);
      progress.emit(done(`e${i}`));
    }
    clock.set(19_000);
    progress.emit({ type: 'ratelimit.paused', ms: 1_000 });
    learned = 300;
    clock.set(20_000);
    progress.emit(request);
    expect(out.text()).toMatch(/Applying: 430\/1500 done, 0 failed, 431 requests, about 3m 34s left$/);
  });

  it('counts a kind written in bulk as one request for all its changes, not one each', () => {
    // 150 entities (one request each) and 150 dependency edges (one bulk request): after 60
    // entities in a minute, 90 entity requests and one bulk request are left: 91 at 60 a minute.
    const out = capture(true);
    const clock = clockAt();
    const progress = createApplyProgress({
      stream: out.stream,
      tty: true,
      clock,
      ratePerMinute: () => 60,
      bulkKinds: new Set(['dependency']),
    });
    progress.emit({
      type: 'plan.ready',
      summary: { create: 300, update: 0, delete: 0, archive: 0, noop: 0 },
      pending: 300,
    });
    progress.start(
      new Map([
        ['entity', 150],
        ['dependency', 150],
      ]),
    );
    for (let i = 0; i < 60; i++) {
      clock.set((i + 1) * 1_000);
      progress.emit(request);
      progress.emit(done(`e${i}`));
    }
    expect(out.text()).toMatch(/Applying: 60\/300 done, 0 failed, 60 requests, about 1m 31s left$/);
  });

  it('says nothing of time once the run is stopping, and counts the skipped changes without a line per hundred', () => {
    const out = capture();
    const clock = clockAt();
    const stop = new AbortController();
    const progress = createApplyProgress({ stream: out.stream, tty: false, clock, signal: stop.signal });
    progress.emit({
      type: 'plan.ready',
      summary: { create: 500, update: 0, delete: 0, archive: 0, noop: 0 },
      pending: 500,
    });
    progress.start();
    clock.set(1_000);
    progress.emit(request);
    progress.emit(done('a'));
    stop.abort('SIGINT');
    for (let i = 0; i < 499; i++) progress.emit(done(`s${i}`, 'skipped'));
    progress.finish();
    expect(out.text().trim().split('\n')).toEqual([
      '[0 s] Applying: 0/500 done, 0 failed, 0 requests',
      '[1 s] Applying: 1/500 done, 0 failed, 499 not done, 1 request, stopping: changes in flight finish, no new one starts',
    ]);
  });
});

describe('the reads of a plan', () => {
  it('say a Retry-After pause at once and a line at least every 10 s while it waits', async () => {
    const out = capture();
    let t = 0;
    const slept: number[] = [];
    let wake: (() => void) | undefined;
    const clock: Clock = {
      now: () => t,
      // The test moves time: each sleep resolves when the test says so.
      sleep: (ms) => {
        slept.push(ms);
        return new Promise<void>((resolve) => (wake = resolve));
      },
    };
    let sent = 3;
    const reading = createReadProgress({ stream: out.stream, clock });
    reading.start(() => ({ requestsSent: sent }));
    t = 2_000;
    reading.emit({ type: 'ratelimit.paused', ms: 55_000 });
    expect(out.text()).toBe('Paused 55 s: the API asked to wait (Retry-After); reading goes on after.\n');
    const advance = async (to: number) => {
      t = to;
      wake?.();
      await new Promise((resolve) => setTimeout(resolve, 5));
    };
    await advance(12_000);
    await advance(22_000);
    sent = 9;
    await advance(32_500);
    reading.finish();
    await advance(60_000);
    expect(out.text().trim().split('\n').slice(1)).toEqual([
      '[12 s] Reading the workspace: 3 requests so far; paused 45 s more for Retry-After',
      '[22 s] Reading the workspace: 3 requests so far; paused 35 s more for Retry-After',
      '[33 s] Reading the workspace: 9 requests so far; paused 25 s more for Retry-After',
    ]);
    expect(slept.every((ms) => ms <= 10_000)).toBe(true);
  });

  it("a line at least every 10 s while a request waits for the client's rate limit (a low CORTEX_RATE_LIMIT)", async () => {
    const out = capture();
    const time = steppedClock();
    const reading = createReadProgress({ stream: out.stream, clock: time.clock });
    reading.start(() => ({ requestsSent: 1 }));
    reading.emit({ type: 'ratelimit.waiting', ms: 30_000 });
    await time.advance(10_000);
    await time.advance(20_000);
    await time.advance(30_000);
    reading.finish();
    await time.advance(40_000);
    expect(out.text().trim().split('\n')).toEqual([
      '[10 s] Reading the workspace: 1 request so far; the next request waits 20 s more for the rate limit',
      '[20 s] Reading the workspace: 1 request so far; the next request waits 10 s more for the rate limit',
      '[30 s] Reading the workspace: 1 request so far',
    ]);
    expect(time.slept.every((ms) => ms <= 10_000)).toBe(true);
  });
});

describe('an apply slowed by the rate limiter', () => {
  it('without a terminal: a line at least every 10 s through a Retry-After pause and a wait for the rate limit', async () => {
    const out = capture();
    const time = steppedClock();
    const progress = createApplyProgress({ stream: out.stream, tty: false, clock: time.clock });
    progress.emit({
      type: 'plan.ready',
      summary: { create: 3, update: 0, delete: 0, archive: 0, noop: 0 },
      pending: 3,
    });
    progress.start();
    progress.emit(request);
    progress.emit(done('a'));
    progress.emit({ type: 'ratelimit.paused', ms: 25_000 });
    await time.advance(10_000);
    await time.advance(20_000);
    await time.advance(25_000);
    progress.emit(request);
    progress.emit(done('b'));
    progress.emit({ type: 'ratelimit.waiting', ms: 20_000 });
    await time.advance(35_000);
    await time.advance(45_000);
    progress.finish();
    await time.advance(60_000);
    expect(out.text().trim().split('\n')).toEqual([
      '[0 s] Applying: 0/3 done, 0 failed, 0 requests',
      'Paused 25 s: the API asked to wait (Retry-After); the apply goes on after.',
      '[10 s] Applying: 1/3 done, 0 failed, 1 request, paused 15 s for Retry-After, about 50 s left',
      '[20 s] Applying: 1/3 done, 0 failed, 1 request, paused 5 s for Retry-After, about 50 s left',
      '[35 s] Applying: 2/3 done, 0 failed, 2 requests, the next request waits 10 s for the rate limit, about 18 s left',
      '[45 s] Applying: 2/3 done, 0 failed, 2 requests, about 23 s left',
    ]);
    expect(time.slept.every((ms) => ms <= 10_000)).toBe(true);
  });
});
