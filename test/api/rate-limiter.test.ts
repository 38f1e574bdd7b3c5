import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/api/rate-limiter.js';
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
    clock.sleep(1999);
    expect(limiter.isPaused()).toBe(true);
    limiter.pauseFor(1000);
    clock.sleep(1000);
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
});
