/**
 * The adaptive rate (pure functions, virtual time): a 429 lowers the rate once per window, the
 * rate climbs back while none come, and — simulated against a token-bucket server limited anywhere
 * from 100 to 1,000 requests a minute, the client at its default 1,000 — 429s stay under 5 % and
 * the run ends within 10 % of the time the server's limit allows.
 */
import { describe, expect, it } from 'vitest';
import { type AdaptiveRateOptions, afterRateLimited, initialRate, rateAt } from '../../src/api/adaptive-rate.js';
import { RateLimiter } from '../../src/api/rate-limiter.js';

const OPTIONS: AdaptiveRateOptions = { maxPerMinute: 1000 };

describe('adaptive rate', () => {
  it('starts at the ceiling and lowers the rate by the decrease factor on a 429', () => {
    const start = initialRate(OPTIONS, 0);
    expect(rateAt(start, OPTIONS, 0)).toBe(1000);
    const lowered = afterRateLimited(start, OPTIONS, 10_000, 1000);
    expect(rateAt(lowered, OPTIONS, 11_000)).toBeCloseTo(700);
    expect(lowered.decreases).toBe(1);
  });

  it('counts 429s answered inside the same pause once (they answer requests sent at the old rate)', () => {
    const once = afterRateLimited(initialRate(OPTIONS, 0), OPTIONS, 10_000, 1000);
    const again = afterRateLimited(once, OPTIONS, 10_500, 1000);
    expect(again).toBe(once);
    const later = afterRateLimited(once, OPTIONS, 12_000, 1000);
    expect(later.decreases).toBe(2);
    expect(rateAt(later, OPTIONS, 13_000)).toBeLessThan(rateAt(once, OPTIONS, 12_000));
  });

  it('climbs back linearly while no 429 comes, never above the ceiling nor below the floor', () => {
    let state = initialRate(OPTIONS, 0);
    for (let i = 0; i < 20; i++) state = afterRateLimited(state, OPTIONS, i * 2000, 1000);
    expect(rateAt(state, OPTIONS, 39_000)).toBe(10); // the floor: 1 % of the ceiling
    const once = afterRateLimited(initialRate(OPTIONS, 0), OPTIONS, 0, 1000);
    // Measured: 8 accepted in 4 s of asking = ~127/min, so 0.95 of that, then +1 % of it per second.
    const measured = afterRateLimited(once, OPTIONS, 3000, 1000, { accepted: 8, busyMs: 4000 });
    const base = (0.95 * 8.5 * 60_000) / 4000;
    expect(rateAt(measured, OPTIONS, 4000)).toBeCloseTo(base);
    expect(rateAt(measured, OPTIONS, 14_000)).toBeCloseTo(base * 1.1);
    expect(rateAt(measured, OPTIONS, 10_000_000)).toBe(1000);
  });

  it('after a decrease nothing measured (the first), returns to the rate before it within 10 s unless another 429 comes', () => {
    // A first 429 may only mean the server's bucket is smaller than the client's burst.
    const once = afterRateLimited(initialRate(OPTIONS, 0), OPTIONS, 0, 1000);
    expect(rateAt(once, OPTIONS, 1000)).toBeCloseTo(700);
    expect(rateAt(once, OPTIONS, 6000)).toBeCloseTo(850);
    expect(rateAt(once, OPTIONS, 11_000)).toBe(1000);
  });

  it('after the first 429, drops straight to what the server accepted since the last one', () => {
    const once = afterRateLimited(initialRate(OPTIONS, 0), OPTIONS, 0, 1000);
    // 5 accepted in 3 s of asking: the server's rate is ~110/min; 0.95 of it, not 0.7 × 700.
    const measured = afterRateLimited(once, OPTIONS, 2000, 1000, { accepted: 5, busyMs: 3000 });
    expect(rateAt(measured, OPTIONS, 3000)).toBeCloseTo((0.95 * 5.5 * 60_000) / 3000);
    // A measurement above 0.7 × the rate in force: lowered by 0.7 all the same, then back within
    // 10 s to 0.95 × the lower of the measurement and the rate that was in force.
    const inForce = rateAt(once, OPTIONS, 2000);
    const high = afterRateLimited(once, OPTIONS, 2000, 1000, { accepted: 40, busyMs: 3000 });
    expect(rateAt(high, OPTIONS, 3000)).toBeCloseTo(inForce * 0.7);
    const measuredHigh = (40.5 * 60_000) / 3000;
    expect(rateAt(high, OPTIONS, 13_000)).toBeCloseTo(
      Math.max(inForce * 0.7 * 1.1, 0.95 * Math.min(inForce, measuredHigh)),
    );
  });

  it("a 429 while the client spends its burst lowers nothing (the server's bucket is smaller, not its rate) and starts the count", () => {
    const start = initialRate(OPTIONS, 0);
    const burst = afterRateLimited(start, OPTIONS, 500, 1000, undefined, true);
    expect(rateAt(burst, OPTIONS, 1500)).toBe(1000);
    expect(burst.decreases).toBe(0);
    expect(burst.countEpoch).not.toBe(start.countEpoch);
    // 429s of requests already on their way change nothing.
    expect(afterRateLimited(burst, OPTIONS, 900, 1000)).toBe(burst);
    // The next 429 is measured from that one: 3 accepted in 2 s = ~105/min.
    const next = afterRateLimited(burst, OPTIONS, 2500, 1000, { accepted: 3, busyMs: 2000 });
    expect(rateAt(next, OPTIONS, 3500)).toBeCloseTo((0.95 * 3.5 * 60_000) / 2000);
  });

  it("ignores a measurement before the first 429 (the server's bucket was full) and one too small to tell", () => {
    const first = afterRateLimited(initialRate(OPTIONS, 0), OPTIONS, 0, 1000, { accepted: 5, busyMs: 3000 });
    expect(rateAt(first, OPTIONS, 1000)).toBeCloseTo(700);
    const multiplied = rateAt(first, OPTIONS, 2000) * 0.7;
    const few = afterRateLimited(first, OPTIONS, 2000, 1000, { accepted: 2, busyMs: 3000 });
    expect(rateAt(few, OPTIONS, 3000)).toBeCloseTo(multiplied);
    const short = afterRateLimited(first, OPTIONS, 2000, 1000, { accepted: 5, busyMs: 500 });
    expect(rateAt(short, OPTIONS, 3000)).toBeCloseTo(multiplied);
  });

  it('refuses nonsense settings', () => {
    expect(() => initialRate({ maxPerMinute: 0 }, 0)).toThrow(RangeError);
    expect(() => rateAt(initialRate(OPTIONS, 0), { maxPerMinute: 1000, decrease: 1 }, 0)).toThrow(RangeError);
  });
});

/**
 * Discrete-event virtual time: `sleep` resolves when `run` advances the clock to it, in order, after
 * letting every task react to the previous event. A sleep whose signal aborts is dropped.
 */
const eventClock = () => {
  let t = 0;
  let timers: { at: number; seq: number; wake: () => void }[] = [];
  let seq = 0;
  const settle = async () => {
    for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r));
  };
  return {
    now: () => t,
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        const timer = { at: t + Math.max(0, ms), seq: seq++, wake: resolve };
        timers.push(timer);
        signal?.addEventListener(
          'abort',
          () => {
            timers = timers.filter((x) => x !== timer);
            reject(new Error('woken'));
          },
          { once: true },
        );
      }),
    /** Advances time event by event until `done()` holds. */
    run: async (done: () => boolean) => {
      await settle();
      while (!done()) {
        timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
        const next = timers.shift();
        if (!next) throw new Error('stalled: nothing to wake');
        t = Math.max(t, next.at);
        next.wake();
        await settle();
      }
    },
  };
};

/**
 * The client's rate limiter, set as the API client sets it for writes (1,000/min, burst 250 at 10× the rate,
 * 8 in flight, slow start, adaptive), against a server's token bucket (burst 10 s of its rate,
 * `Retry-After` in whole seconds), 10 ms round trips, in virtual time. A refused request is sent again.
 */
const simulate = async (serverPerMinute: number, requests: number) => {
  const clock = eventClock();
  const limiter = new RateLimiter({
    requestsPerMinute: 1000,
    burst: 250,
    concurrency: 8,
    slowStart: true,
    adaptive: true,
    now: clock.now,
    sleep: clock.sleep,
  });
  const serverBurst = serverPerMinute / 6;
  const perMs = serverPerMinute / 60_000;
  let serverTokens = serverBurst;
  let serverLast = 0;
  const serverTake = (at: number): number => {
    serverTokens = Math.min(serverBurst, serverTokens + (at - serverLast) * perMs);
    serverLast = at;
    if (serverTokens >= 1) {
      serverTokens -= 1;
      return 0;
    }
    return Math.ceil((1 - serverTokens) / perMs / 1000) * 1000;
  };
  let ok = 0;
  let refused = 0;
  const ratesAfterDecrease: number[] = [];
  const send = (): Promise<void> =>
    limiter.schedule(
      async () => {
        const retryMs = serverTake(clock.now() + 5);
        await clock.sleep(10);
        if (retryMs > 0) {
          refused++;
          const before = limiter.decreases;
          limiter.rateLimited(retryMs);
          if (limiter.decreases > before) ratesAfterDecrease.push(limiter.currentPerMinute);
          void send();
        } else ok++;
      },
      undefined,
      'write',
      10,
    );
  for (let i = 0; i < requests; i++) void send();
  await clock.run(() => ok === requests);
  const idealMs = Math.max(((requests - serverBurst) / serverPerMinute) * 60_000, ((requests - 250) / 1000) * 60_000);
  return { refusedShare: refused / (ok + refused), timeToIdeal: clock.now() / idealMs, ratesAfterDecrease };
};

describe('the rate limiter against a server with a lower limit (simulated)', () => {
  for (const serverPerMinute of [100, 300, 600, 1000]) {
    it(`${serverPerMinute}/min: under 5 % 429s, within 10 % of the ideal time`, async () => {
      const { refusedShare, timeToIdeal } = await simulate(serverPerMinute, 2000);
      expect(refusedShare).toBeLessThan(0.05);
      expect(timeToIdeal).toBeLessThan(1.1);
    });
  }

  it('is under a server at 100/min after four decreases: it measures the server, where 0.7⁴ would leave it at 240/min', async () => {
    const { ratesAfterDecrease, refusedShare } = await simulate(100, 200);
    expect(ratesAfterDecrease[3]).toBeLessThanOrEqual(100);
    expect(ratesAfterDecrease[3]).toBeGreaterThan(50);
    expect(refusedShare).toBeLessThan(0.05);
  });
});
