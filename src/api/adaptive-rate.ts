/**
 * The client's rate learned from the server (pure): additive increase, multiplicative decrease,
 * as TCP does with its congestion window. The API's thresholds are not published and may differ per
 * tenant or endpoint, so the configured rate is a ceiling, not a promise:
 * - each 429 lowers the rate to `decrease` × the rate in force (once per rate-limit window: the
 *   429s of requests that were already on their way answer the same excess, not a new one);
 * - while no 429 comes, the rate climbs back linearly, by `increasePerSecond` × the rate set by the
 *   last decrease, every second, up to the ceiling.
 * No clock and no IO: every function takes the time it is asked about.
 */

export interface AdaptiveRateOptions {
  /** The configured rate: where the client starts and the most it ever sends. */
  maxPerMinute: number;
  /** The least it ever sends; default 1/100 of the ceiling, at least 1. */
  minPerMinute?: number;
  /** Factor applied on a 429; default 0.7. */
  decrease?: number;
  /** Growth per second without a 429, as a share of the rate after the last decrease; default 0.01. */
  increasePerSecond?: number;
}

export interface AdaptiveRate {
  /** The rate set by the last decrease (or the ceiling at start). */
  basePerMinute: number;
  /** When the increase after the last decrease starts (the end of its `Retry-After` pause). */
  since: number;
  /** 429s answered before this time belong to the last decrease and do not lower the rate again. */
  holdUntil: number;
  /** How many times the rate was lowered. */
  decreases: number;
}

interface Settings {
  max: number;
  min: number;
  decrease: number;
  increasePerSecond: number;
}

const settings = (options: AdaptiveRateOptions): Settings => {
  const max = options.maxPerMinute;
  if (!(max > 0)) throw new RangeError('maxPerMinute must be > 0');
  const decrease = options.decrease ?? 0.7;
  if (!(decrease > 0 && decrease < 1)) throw new RangeError('decrease must be in (0, 1)');
  return {
    max,
    min: Math.min(max, options.minPerMinute ?? Math.max(1, max / 100)),
    decrease,
    increasePerSecond: Math.max(0, options.increasePerSecond ?? 0.01),
  };
};

/** The state of a client that has not seen a 429: at its ceiling. */
export const initialRate = (options: AdaptiveRateOptions, now: number): AdaptiveRate => ({
  basePerMinute: settings(options).max,
  since: now,
  holdUntil: Number.NEGATIVE_INFINITY,
  decreases: 0,
});

/** The rate in force at `now`, requests per minute. */
export const rateAt = (state: AdaptiveRate, options: AdaptiveRateOptions, now: number): number => {
  const s = settings(options);
  const elapsedSeconds = Math.max(0, now - state.since) / 1000;
  const grown = state.basePerMinute * (1 + s.increasePerSecond * elapsedSeconds);
  return Math.min(s.max, Math.max(s.min, grown));
};

/**
 * The state after a 429 answered at `now` that paused the client for `pauseMs`. A 429 that arrives
 * while the last decrease still holds (its pause, plus `pauseMs` of this one) changes nothing.
 */
export const afterRateLimited = (
  state: AdaptiveRate,
  options: AdaptiveRateOptions,
  now: number,
  pauseMs: number,
): AdaptiveRate => {
  if (now < state.holdUntil) return state;
  const s = settings(options);
  const lowered = Math.max(s.min, rateAt(state, options, now) * s.decrease);
  const resumes = now + Math.max(0, pauseMs);
  return { basePerMinute: lowered, since: resumes, holdUntil: resumes, decreases: state.decreases + 1 };
};
