/**
 * The adaptive rate (pure functions, virtual time): a 429 lowers the rate once per window, the
 * rate climbs back while none come, and — simulated against a token-bucket server limited anywhere
 * from 100 to 1,000 requests a minute, the client at its default 1,000 — 429s stay under 5 % and
 * the run ends within 10 % of the time the server's limit allows.
 */
import { describe, expect, it } from 'vitest';
import { type AdaptiveRateOptions, afterRateLimited, initialRate, rateAt } from '../../src/api/adaptive-rate.js';

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
    expect(rateAt(once, OPTIONS, 1000)).toBeCloseTo(700);
    expect(rateAt(once, OPTIONS, 11_000)).toBeCloseTo(770); // +1 % of 700 per second
    expect(rateAt(once, OPTIONS, 600_000)).toBe(1000);
  });

  it('refuses nonsense settings', () => {
    expect(() => initialRate({ maxPerMinute: 0 }, 0)).toThrow(RangeError);
    expect(() => rateAt(initialRate(OPTIONS, 0), { maxPerMinute: 1000, decrease: 1 }, 0)).toThrow(RangeError);
  });
});

/**
 * A client as the rate limiter is (token bucket at the adaptive rate, burst a quarter of the rate,
 * 8 in flight, a 429 pauses it for Retry-After and leaves one token for when the pause ends) against a server's token bucket (burst 10 s of its rate), 10 ms
 * round trips, in virtual time.
 */
const simulate = (serverPerMinute: number, requests: number) => {
  const serverBurst = serverPerMinute / 6;
  const perMs = (perMinute: number) => perMinute / 60_000;
  let serverTokens = serverBurst;
  let serverLast = 0;
  const serverTake = (at: number): number => {
    serverTokens = Math.min(serverBurst, serverTokens + (at - serverLast) * perMs(serverPerMinute));
    serverLast = at;
    if (serverTokens >= 1) {
      serverTokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - serverTokens) / perMs(serverPerMinute) / 1000)) * 1000;
  };
  let state = initialRate(OPTIONS, 0);
  let t = 0;
  let tokens = 250;
  let last = 0;
  let pausedUntil = 0;
  let ok = 0;
  let refused = 0;
  const slots = Array.from({ length: 8 }, () => 0);
  const answers: { at: number; retryMs: number }[] = [];
  const rate = () => rateAt(state, OPTIONS, t);
  const refill = () => {
    if (t > last) tokens = Math.min(Math.max(1, rate() / 4), tokens + (t - last) * perMs(rate()));
    last = Math.max(last, t);
  };
  while (ok < requests) {
    refill();
    slots.sort((a, b) => a - b);
    let next = Math.max(t, pausedUntil, slots[0] as number);
    if (tokens < 1) next = Math.max(next, t + (1 - tokens) / perMs(rate()));
    answers.sort((a, b) => a.at - b.at);
    const answer = answers[0];
    if (answer && answer.at <= next) {
      answers.shift();
      t = Math.max(t, answer.at);
      refill();
      pausedUntil = Math.max(pausedUntil, t + answer.retryMs);
      state = afterRateLimited(state, OPTIONS, t, answer.retryMs);
      tokens = Math.min(tokens, 1);
      last = Math.max(last, pausedUntil);
      continue;
    }
    t = next;
    refill();
    tokens -= 1;
    slots[0] = t + 10;
    const retryMs = serverTake(t + 5);
    if (retryMs > 0) {
      refused++;
      answers.push({ at: t + 10, retryMs });
    } else ok++;
  }
  const idealMs = Math.max(
    ((requests - serverBurst) / serverPerMinute) * 60_000,
    ((requests - 250) / OPTIONS.maxPerMinute) * 60_000,
  );
  return { refusedShare: refused / (ok + refused), timeToIdeal: t / idealMs };
};

describe('adaptive rate against a server with a lower limit (simulated)', () => {
  for (const serverPerMinute of [100, 300, 600, 1000]) {
    it(`${serverPerMinute}/min: under 5 % 429s, within 10 % of the ideal time`, () => {
      const { refusedShare, timeToIdeal } = simulate(serverPerMinute, 2000);
      expect(refusedShare).toBeLessThan(0.05);
      expect(timeToIdeal).toBeLessThan(1.1);
    });
  }
});
