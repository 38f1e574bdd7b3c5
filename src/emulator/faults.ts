/** Fault injection for tests: which fault (if any) hits a request, decided by a seeded PRNG. */
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
  /** `Retry-After` seconds of forced 429s (default 0). */
  retryAfterSeconds?: number;
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
}

const rate = (value: unknown): number => (typeof value === 'number' && value > 0 ? Math.min(1, value) : 0);

/**
 * Decides the faults of the `n`-th API request (1-based). Draws from `random` only for the rates
 * that are set, in a fixed order, so the same seed and the same request sequence repeat exactly.
 */
export const decideFaults = (faults: EmulatorFaults, n: number, random: () => number): FaultDecision => {
  const draw = (r: number): boolean => r > 0 && random() < r;
  const drop = draw(rate(faults.dropConnectionRate));
  const fail = draw(rate(faults.failRate));
  const k = faults.every429 ?? 0;
  const force429 = Number.isInteger(k) && k >= 1 && n % k === 0;
  const loseResponse = draw(rate(faults.lostResponseRate));
  return { drop, fail, force429, loseResponse };
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
