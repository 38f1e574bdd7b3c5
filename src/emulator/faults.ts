/** Fault injection for tests: which fault (if any) hits a request, decided by a seeded PRNG. */
import type { RetryAfterWindow } from './rate-limit.js';
import { isObject } from './util.js';

export interface EmulatorFaults {
  /** Fraction (0–1) of requests answered 503 without being processed. */
  failRate?: number;
  /** Fraction of requests that ARE processed, after which the socket is destroyed without a response. */
  lostResponseRate?: number;
  /** Delay before every request is handled, in milliseconds. */
  latencyMs?: number;
  /** Force a 429 on every k-th API request (k ≥ 1). */
  every429?: number;
  /** `Retry-After` seconds of forced 429s (default 0; 1 for `windowed429`). */
  retryAfterSeconds?: number;
  /**
   * A fixed-window limiter: every k-th API request (k ≥ 1) is answered 429 with `Retry-After:
   * retryAfterSeconds` (default 1) and opens that window; every request that arrives while it is
   * open is answered 429 too, with the seconds left. A client that starts requests inside the
   * window only prolongs its own refusals.
   */
  windowed429?: number;
  /** Fraction of requests whose socket is destroyed before processing. */
  dropConnectionRate?: number;
  /**
   * Refuse every request matching a method and a path (exact, or a prefix ending in `*`) with this
   * status and message, in the vendor's error shape, without processing it. For tests of how a
   * client handles one refused operation among many (e.g. an entity type the API will not create).
   */
  reject?: RejectRule[];
}

export interface RejectRule {
  method: string;
  path: string;
  /** Only requests whose body contains this text. */
  bodyIncludes?: string;
  status: number;
  message: string;
}

/** The first reject rule matching this request, if any. */
export const matchReject = (
  faults: EmulatorFaults,
  method: string,
  path: string,
  body: string,
): RejectRule | undefined =>
  faults.reject?.find(
    (rule) =>
      rule.method.toUpperCase() === method &&
      (rule.path.endsWith('*') ? path.startsWith(rule.path.slice(0, -1)) : path === rule.path) &&
      (rule.bodyIncludes === undefined || body.includes(rule.bodyIncludes)),
  );

/** What happens to one request. */
export interface FaultDecision {
  drop: boolean;
  fail: boolean;
  force429: boolean;
  loseResponse: boolean;
  /** For a forced 429: its `Retry-After` seconds, when the fault mode decides them. */
  retryAfterSeconds?: number;
  /** The request arrived inside an open `windowed429` window. */
  insideWindow?: boolean;
}

/** The fixed window of `windowed429` and the arrival time of the request being decided. */
export interface WindowClock {
  window: RetryAfterWindow;
  now: number;
}

/** The `windowed429` decision: refused inside an open window, or the k-th request opening one. */
const decideWindow = (
  faults: EmulatorFaults,
  n: number,
  clock: WindowClock | undefined,
): Pick<FaultDecision, 'retryAfterSeconds' | 'insideWindow'> | undefined => {
  const k = faults.windowed429 ?? 0;
  if (clock === undefined || !Number.isInteger(k) || k < 1) return undefined;
  const left = clock.window.remainingSeconds(clock.now);
  if (left !== undefined) return { retryAfterSeconds: left, insideWindow: true };
  if (n % k !== 0) return undefined;
  const seconds = faults.retryAfterSeconds ?? 1;
  clock.window.open(clock.now, seconds);
  return { retryAfterSeconds: seconds };
};

const rate = (value: unknown): number => (typeof value === 'number' && value > 0 ? Math.min(1, value) : 0);

/**
 * Decides the faults of the `n`-th API request (1-based). Draws from `random` only for the rates
 * that are set, in a fixed order, so the same seed and the same request sequence repeat exactly.
 */
export const decideFaults = (
  faults: EmulatorFaults,
  n: number,
  random: () => number,
  windowClock?: WindowClock,
): FaultDecision => {
  const draw = (r: number): boolean => r > 0 && random() < r;
  const drop = draw(rate(faults.dropConnectionRate));
  const fail = draw(rate(faults.failRate));
  const k = faults.every429 ?? 0;
  const windowed = decideWindow(faults, n, windowClock);
  const force429 = (Number.isInteger(k) && k >= 1 && n % k === 0) || windowed !== undefined;
  const loseResponse = draw(rate(faults.lostResponseRate));
  return { drop, fail, force429, loseResponse, ...windowed };
};

/** Reads a faults object from untrusted JSON; unknown keys and non-numbers are ignored. */
export const parseFaults = (value: unknown): EmulatorFaults => {
  if (!isObject(value)) return {};
  const out: EmulatorFaults = {};
  for (const key of [
    'failRate',
    'lostResponseRate',
    'latencyMs',
    'every429',
    'windowed429',
    'retryAfterSeconds',
    'dropConnectionRate',
  ] as const) {
    const v = value[key];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[key] = v;
  }
  if (Array.isArray(value.reject)) {
    out.reject = value.reject.filter(
      (r): r is RejectRule =>
        isObject(r) &&
        typeof r.method === 'string' &&
        typeof r.path === 'string' &&
        typeof r.status === 'number' &&
        typeof r.message === 'string' &&
        (r.bodyIncludes === undefined || typeof r.bodyIncludes === 'string'),
    );
  }
  return out;
};
