/**
 * The client's rate learned from the server (pure): additive increase, multiplicative decrease,
 * as TCP does with its congestion window. The API's thresholds are not published and may differ per
 * tenant or endpoint, so the configured rate is a ceiling, not a promise:
 * - a 429 that comes while the client is still spending its burst (faster than its rate) lowers
 *   nothing: it says the server's bucket is smaller than the client's, and the client empties its
 *   own; counting what the server accepts starts there;
 * - any other 429 lowers the rate to `decrease` × the rate in force (once per rate-limit window:
 *   the 429s of requests that were already on their way answer the same excess, not a new one);
 * - when the client can say how fast the server accepted requests since an earlier 429 (both 429s
 *   leave the server's bucket empty, so what it accepted in between, over the time the client was
 *   asking, is its rate or less), the rate drops straight to `margin` × that measurement if it is
 *   lower still (against a server at 100/min two or three 429s get there, not eight
 *   multiplications), and returns to it within `recoverySeconds` if it is higher;
 * - while no 429 comes, the rate climbs back linearly, by `increasePerSecond` × the rate set by the
 *   last decrease, every second, up to the ceiling; after a decrease nothing measured it returns to
 *   where it was within `recoverySeconds`, unless a 429 comes first, and that one is measured.
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
  /** The share of a measured server rate the client goes down to; default 0.95. */
  margin?: number;
  /**
   * After a decrease that nothing measured (the first 429 above all: it may only mean that the
   * server's bucket is smaller than the client's burst), the rate returns to where it was within
   * this many seconds unless another 429 comes first; default 10. A server that is really slower
   * answers that next 429 soon, and it is measured.
   */
  recoverySeconds?: number;
}

/** How fast the server accepted requests between the last two 429s (see `afterRateLimited`). */
interface AcceptedRate {
  /** Requests answered without a 429 since the last decrease. */
  accepted: number;
  /** Milliseconds of that time during which the client had requests to send. */
  busyMs: number;
}

/** Fewer answers, or a shorter time, than this tell too little about the server to act on. */
const MIN_ACCEPTED = 3;
const MIN_BUSY_MS = 1000;

export interface AdaptiveRate {
  /** The rate set by the last decrease (or the ceiling at start). */
  basePerMinute: number;
  /** When the increase after the last decrease starts (the end of its `Retry-After` pause). */
  since: number;
  /** 429s answered before this time belong to the last decrease and do not lower the rate again. */
  holdUntil: number;
  /** How many times the rate was lowered. */
  decreases: number;
  /** A 429 has been answered: the server's bucket was empty then, so counting from it measures the server. */
  serverEmptied: boolean;
  /** Changes whenever what the server accepted is to be counted afresh (see `afterRateLimited`). */
  countEpoch: number;
  /** The rate in force before the last decrease when nothing measured it, else `basePerMinute`. */
  recoverToPerMinute: number;
}

interface Settings {
  max: number;
  min: number;
  decrease: number;
  increasePerSecond: number;
  margin: number;
  recoveryMs: number;
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
    margin: Math.min(1, Math.max(0.5, options.margin ?? 0.95)),
    recoveryMs: Math.max(0, options.recoverySeconds ?? 10) * 1000,
  };
};

/** The state of a client that has not seen a 429: at its ceiling. */
export const initialRate = (options: AdaptiveRateOptions, now: number): AdaptiveRate => ({
  basePerMinute: settings(options).max,
  since: now,
  holdUntil: Number.NEGATIVE_INFINITY,
  decreases: 0,
  serverEmptied: false,
  countEpoch: 0,
  recoverToPerMinute: settings(options).max,
});

/** The rate in force at `now`, requests per minute. */
export const rateAt = (state: AdaptiveRate, options: AdaptiveRateOptions, now: number): number => {
  const s = settings(options);
  const elapsedMs = Math.max(0, now - state.since);
  const grown = state.basePerMinute * (1 + (s.increasePerSecond * elapsedMs) / 1000);
  const gap = state.recoverToPerMinute - state.basePerMinute;
  const recovered =
    gap > 0 ? state.basePerMinute + gap * (s.recoveryMs > 0 ? Math.min(1, elapsedMs / s.recoveryMs) : 1) : 0;
  return Math.min(s.max, Math.max(s.min, grown, recovered));
};

/**
 * Does `since` say enough to measure the server by, at a 429 that finds the rate at `state`? Only
 * what was accepted between two 429s means anything: before the first one the server's bucket was
 * full, and what it accepted includes the whole bucket. When it says too little, counting goes on
 * across the decrease: from one 429 to any later one is as good a measurement.
 */
const canMeasure = (state: AdaptiveRate, since: AcceptedRate | undefined): since is AcceptedRate =>
  state.serverEmptied && since !== undefined && since.accepted >= MIN_ACCEPTED && since.busyMs >= MIN_BUSY_MS;

/**
 * The rate, per minute, that `since` says the server accepted. Its bucket held less than one token
 * at both 429s, so the count is off by less than one either way: half a request is added back.
 */
const measuredPerMinute = (state: AdaptiveRate, since: AcceptedRate | undefined): number | undefined =>
  canMeasure(state, since) ? ((since.accepted + 0.5) * 60_000) / since.busyMs : undefined;

/**
 * The state after a 429 answered at `now` that paused the client for `pauseMs`. A 429 that arrives
 * while the last one still holds (its pause, plus `pauseMs` of this one) changes nothing: it
 * answers a request sent before the client knew.
 * - `bursting`: the client was spending saved-up tokens, faster than its rate. The 429 says the
 *   server's bucket is smaller than the client's burst, not that the rate is too high: the rate
 *   stays (the caller empties its bucket), and counting starts.
 * - `since`: what the server accepted since counting started (time the client was idle is left
 *   out: the server's bucket refilled then, so the measurement errs high). The rate is multiplied
 *   by `decrease`, or goes to `margin` × the measurement when that is lower; when the measurement
 *   is higher, the rate returns to it within `recoverySeconds`. When `since` says too little,
 *   counting goes on to the next 429.
 * `countEpoch` changes when the caller is to count afresh.
 */
export const afterRateLimited = (
  state: AdaptiveRate,
  options: AdaptiveRateOptions,
  now: number,
  pauseMs: number,
  since?: AcceptedRate,
  bursting = false,
): AdaptiveRate => {
  if (now < state.holdUntil) return state;
  const s = settings(options);
  const resumes = now + Math.max(0, pauseMs);
  if (bursting) return { ...state, holdUntil: resumes, serverEmptied: true, countEpoch: state.countEpoch + 1 };
  const measured = measuredPerMinute(state, since);
  const inForce = rateAt(state, options, now);
  const multiplied = inForce * s.decrease;
  const lowered = Math.max(s.min, measured === undefined ? multiplied : Math.min(multiplied, measured * s.margin));
  return {
    basePerMinute: lowered,
    since: resumes,
    holdUntil: resumes,
    decreases: state.decreases + 1,
    serverEmptied: true,
    countEpoch: measured !== undefined || !state.serverEmptied ? state.countEpoch + 1 : state.countEpoch,
    // Unmeasured: back to where it was (a slower server answers the next 429 soon). Measured above
    // the multiplied rate: back to `margin` × what the server accepted.
    recoverToPerMinute: measured === undefined ? inForce : Math.max(lowered, Math.min(inForce, measured) * s.margin),
  };
};
