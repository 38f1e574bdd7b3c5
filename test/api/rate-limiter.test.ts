import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/api/rate-limiter.js';
import { CancelledError } from '../../src/core/errors.js';
import { virtualClock } from './helpers.js';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

describe('RateLimiter', () => {
  it('lets a burst through at once, then one request per token interval', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 60, burst: 2, concurrency: 10, ...clock });
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 5 }, () => limiter.schedule(async () => starts.push(clock.now()))));
    expect(starts).toEqual([0, 0, 1000, 2000, 3000]);
  });

  it('says how long a request waits for its token when the wait is a second or more (progress reports it)', async () => {
    const clock = virtualClock(0);
    const waits: number[] = [];
    const limiter = new RateLimiter({
      requestsPerMinute: 2,
      burst: 1,
      concurrency: 10,
      ...clock,
      onWait: (ms) => waits.push(ms),
    });
    await Promise.all(Array.from({ length: 3 }, () => limiter.schedule(() => Promise.resolve())));
    expect(waits).toEqual([30_000, 30_000]);
    expect(clock.now()).toBe(60_000);
  });

  it('with a peak factor, a task spends the burst at that many times the rate; without one, at once', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 600, burst: 4, concurrency: 10, ...clock });
    const unpaced: number[] = [];
    await Promise.all(Array.from({ length: 2 }, () => limiter.schedule(async () => unpaced.push(clock.now()))));
    expect(unpaced).toEqual([0, 0]);
    await clock.sleep(10_000);
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, () =>
        limiter.schedule(async () => starts.push(clock.now() - 10_000), undefined, 'write', 3),
      ),
    );
    // 600/min is a token every 100 ms; the burst of 4 goes at 1,800/min (34 ms apart), then the rate.
    expect(starts.slice(0, 5)).toEqual([0, 34, 68, 102, 136]);
    expect(starts[5]).toBeGreaterThanOrEqual(200);
    expect(starts[5]).toBeLessThan(210);
  });

  it('never runs more tasks at once than the concurrency cap, and serves them in order', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 1e6, burst: 100, concurrency: 3, ...clock });
    const gates = Array.from({ length: 7 }, deferred);
    const order: number[] = [];
    let running = 0;
    let maxRunning = 0;
    const all = gates.map((gate, i) =>
      limiter.schedule(async () => {
        order.push(i);
        running++;
        maxRunning = Math.max(maxRunning, running);
        await gate.promise;
        running--;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([0, 1, 2]);
    expect(limiter.queued).toBe(4);
    for (const gate of gates) gate.resolve();
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(maxRunning).toBe(3);
  });

  it('holds every queued and new task until a pause ends', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 1e6, burst: 100, concurrency: 1, ...clock });
    const starts: number[] = [];
    const first = deferred();
    const a = limiter.schedule(async () => {
      starts.push(clock.now());
      await first.promise;
    });
    const queued = limiter.schedule(async () => starts.push(clock.now()));
    limiter.pauseFor(1000);
    expect(limiter.isPaused()).toBe(true);
    first.resolve();
    const fresh = limiter.schedule(async () => starts.push(clock.now()));
    await Promise.all([a, queued, fresh]);
    expect(starts).toEqual([0, 1000, 1000]);
    expect(limiter.pausedMsTotal).toBe(1000);
  });

  it('extends a pause but never shortens it', () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 1000, burst: 1, concurrency: 1, ...clock });
    limiter.pauseFor(2000);
    limiter.pauseFor(500);
    void clock.sleep(1999);
    expect(limiter.isPaused()).toBe(true);
    limiter.pauseFor(1000);
    void clock.sleep(1000);
    expect(limiter.isPaused()).toBe(false);
    expect(limiter.pausedMsTotal).toBe(2999);
  });

  it('propagates a task failure and frees its slot', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 1e6, burst: 10, concurrency: 1, ...clock });
    await expect(limiter.schedule(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.schedule(async () => 'next')).resolves.toBe('next');
    expect(limiter.inFlight).toBe(0);
  });

  it('with slow start, runs one task first, then one more per answer, and falls back to one after a 429', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 1e6, burst: 100, concurrency: 4, slowStart: true, ...clock });
    let running = 0;
    const peaks: number[] = [];
    const task = (refuse = false) =>
      limiter.schedule(async () => {
        running++;
        peaks.push(running);
        await new Promise((r) => setImmediate(r));
        if (refuse) limiter.rateLimited(0);
        running--;
      });
    await Promise.all(Array.from({ length: 10 }, () => task()));
    expect(peaks.slice(0, 3)).toEqual([1, 1, 2]);
    expect(Math.max(...peaks)).toBe(4);
    peaks.length = 0;
    await task(true);
    await Promise.all(Array.from({ length: 3 }, () => task()));
    expect(peaks).toEqual([1, 1, 1, 2]);
  });

  it('a waiter whose signal aborts is rejected with a CancelledError and its task never runs', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 1e6, burst: 100, concurrency: 1, ...clock });
    const first = deferred();
    const running = limiter.schedule(() => first.promise);
    const controller = new AbortController();
    let ran = false;
    const waiting = limiter.schedule(
      async () => {
        ran = true;
      },
      controller.signal,
      'list things',
    );
    expect(limiter.queued).toBe(1);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
    await expect(waiting).rejects.toThrow('list things cancelled before it was sent');
    expect(limiter.queued).toBe(0);
    first.resolve();
    await running;
    expect(ran).toBe(false);
  });

  it('puts one abort listener on a signal however many waiters share it, and removes it when they are gone', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 1e6, burst: 100, concurrency: 1, ...clock });
    const first = deferred();
    const running = limiter.schedule(() => first.promise);
    const run = new AbortController();
    const queued = Array.from({ length: 1500 }, (_, i) => limiter.schedule(async () => i, run.signal, `read ${i}`));
    // Node warns of a leak past 10 listeners on one signal (a 1,500-entity apply queued 1,500).
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    run.abort();
    const settled = await Promise.allSettled(queued);
    expect(settled.every((r) => r.status === 'rejected' && r.reason instanceof CancelledError)).toBe(true);
    expect(limiter.queued).toBe(0);
    first.resolve();
    await running;
    const again = new AbortController();
    await Promise.all(Array.from({ length: 20 }, () => limiter.schedule(async () => 'ok', again.signal)));
    expect(getEventListeners(again.signal, 'abort')).toHaveLength(0);
  });

  it('close() rejects every waiter and refuses new tasks; a running task finishes', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 1e6, burst: 100, concurrency: 1, ...clock });
    const first = deferred();
    const running = limiter.schedule(async () => {
      await first.promise;
      return 'done';
    });
    const waiting = limiter.schedule(async () => 'never');
    limiter.close();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
    await expect(limiter.schedule(async () => 'late')).rejects.toThrow(/closed/);
    first.resolve();
    await expect(running).resolves.toBe('done');
  });

  it('when adaptive, a 429 during a burst caps later bursts at half of what that burst got through', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({
      requestsPerMinute: 6000,
      burst: 1500,
      concurrency: 10,
      adaptive: true,
      ...clock,
    });
    expect(limiter.burstCapacity).toBe(1500);
    await Promise.all(Array.from({ length: 40 }, () => limiter.schedule(async () => 'sent')));
    limiter.rateLimited(1000); // the server's bucket ran dry after 40
    expect(limiter.burstCapacity).toBe(20);
    await clock.sleep(60_000); // idle: the bucket fills up again, to the learned size only
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 25 }, () => limiter.schedule(async () => starts.push(clock.now()))));
    expect(starts.filter((t) => t === starts[0])).toHaveLength(20);
    expect(limiter.decreases).toBe(0);
  });

  it('when adaptive, a 429 during the burst only empties the bucket; one after it lowers the rate', async () => {
    const clock = virtualClock(0);
    const limiter = new RateLimiter({ requestsPerMinute: 600, burst: 10, concurrency: 10, adaptive: true, ...clock });
    expect(limiter.currentPerMinute).toBe(600);
    await limiter.schedule(async () => 'sent');
    limiter.rateLimited(1000); // 9 tokens still saved: the server's bucket is smaller than ours
    expect(limiter.decreases).toBe(0);
    expect(limiter.currentPerMinute).toBe(600);
    const afterPause: number[] = [];
    await Promise.all(Array.from({ length: 3 }, () => limiter.schedule(async () => afterPause.push(clock.now()))));
    // No burst after the pause: one at once, then a token every 100 ms.
    expect(afterPause[0]).toBeGreaterThanOrEqual(1000);
    expect((afterPause[2] as number) - (afterPause[0] as number)).toBeGreaterThanOrEqual(199);
    const refusedAt = clock.now();
    limiter.rateLimited(1000); // sent at the rate, nothing saved: this one says the rate is too high
    expect(limiter.decreases).toBe(1);
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 3 }, () => limiter.schedule(async () => starts.push(clock.now()))));
    // Paused 1 s, then 420/min: a token every ~143 ms, none saved up.
    expect(starts[0]).toBeGreaterThanOrEqual(refusedAt + 1000);
    expect((starts[2] as number) - (starts[1] as number)).toBeGreaterThanOrEqual(140);
  });
});
