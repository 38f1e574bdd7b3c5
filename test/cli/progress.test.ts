/** The apply's progress as the engine's events drive it, without a terminal and on one. */
import { describe, expect, it } from 'vitest';
import { createApplyProgress } from '../../src/cli/progress.js';
import type { Clock, EngineEvent } from '../../src/engine/context.js';
import { capture } from './run.js';

const clockAt = (): Clock & { set: (ms: number) => void } => {
  let t = 0;
  return { now: () => t, sleep: () => Promise.resolve(), set: (ms) => (t = ms) };
};

const done = (id: string, outcome: 'ok' | 'failed' = 'ok'): EngineEvent => ({
  type: 'operation.done',
  kind: 'entity',
  id,
  action: 'create',
  outcome,
  status: outcome === 'ok' ? 200 : 400,
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

describe('apply progress', () => {
  it('without a terminal: each failure at once, a pause for Retry-After, what a slow answer holds up, an ETA from the rate budget', () => {
    const out = capture();
    const clock = clockAt();
    const progress = createApplyProgress({ stream: out.stream, tty: false, clock, requestsPerMinute: 60 });
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
    });
    clock.set(12_000);
    progress.emit(request);
    progress.emit(done('c'));
    progress.finish();
    const lines = out.text().trim().split('\n');
    expect(lines).toEqual([
      '[0 s] Applying: 0/10 done, 0 failed, 0 requests',
      '✗ create entity/b failed (HTTP 400): create entity failed: HTTP 400: owner not found',
      'Paused 30 s: the API asked to wait (Retry-After).',
      'Waiting 5 s for api.example.com to answer POST create entity c…',
      // 10 s after the last line a request makes one due: 8 left, 6 s per operation so far (48 s)
      // beats the budget (1.5 requests each at 60 a minute: 12 s).
      '[12 s] Applying: 2/10 done, 1 failed, 3 requests, paused 19 s for Retry-After, about 48 s left',
      // The last line when the apply ends.
      '[12 s] Applying: 3/10 done, 1 failed, 3 requests, paused 19 s for Retry-After, about 28 s left',
    ]);
  });

  it('the time left follows the rate budget when it is slower than the pace so far', () => {
    const out = capture(true);
    const clock = clockAt();
    const progress = createApplyProgress({ stream: out.stream, tty: true, clock, requestsPerMinute: 60 });
    progress.emit({
      type: 'plan.ready',
      summary: { create: 100, update: 0, delete: 0, archive: 0, noop: 0 },
      pending: 100,
    });
    progress.start();
    clock.set(100);
    progress.emit(request);
    progress.emit(done('a'));
    // 99 left at one request each and 60 requests a minute: 99 s, though the first took 0.1 s.
    expect(out.text()).toMatch(/Applying: 1\/100 done, 0 failed, 1 requests, about 1m 39s left$/);
  });

  it('on a terminal: one line rewritten, failures printed above it', () => {
    const out = capture(true);
    const clock = clockAt();
    const progress = createApplyProgress({ stream: out.stream, tty: true, clock, requestsPerMinute: 600 });
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
