/**
 * Pure retry decisions: whether a failed attempt may be retried, and how long to wait first.
 * No IO, no clock: callers pass everything in (including `random` for jitter and `nowMs` for an
 * HTTP-date `Retry-After`).
 */
import type { HttpMethod } from './types.js';

/** Why an attempt failed without an HTTP status. */
export type AttemptErrorKind = 'network' | 'timeout';

/** Base and cap of the exponential backoff used for 5xx, timeouts and network errors. */
const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 20_000;
/** Base and cap of the backoff for a 429 that names no `Retry-After`. */
const RATE_LIMIT_BACKOFF_BASE_MS = 1_000;
const RATE_LIMIT_BACKOFF_CAP_MS = 60_000;

/** GET/PUT/DELETE are idempotent by HTTP semantics; POST/PATCH are not (POST /initiatives creates a new one each call). */
export const isIdempotentByDefault = (method: HttpMethod): boolean =>
  method === 'GET' || method === 'PUT' || method === 'DELETE';

export interface RetryQuestion {
  method: HttpMethod;
  /** Explicit override from `ApiRequest.idempotent`; the method's default when absent. */
  idempotent?: boolean;
  /** The HTTP status of the attempt, absent for network errors and timeouts. */
  status?: number;
  errorKind?: AttemptErrorKind;
  /** The attempt that just failed, 1-based. */
  attempt: number;
  maxAttempts: number;
}

/**
 * May the attempt be retried?
 * - never once `attempt >= maxAttempts`;
 * - 429: always, whatever the verb (the server did not process the request);
 * - network error, timeout, 5xx (but not 501 Not Implemented / 505 HTTP Version Not Supported,
 *   which will not change on a retry): only when the request is idempotent;
 * - any other status: no.
 */
export const shouldRetry = (q: RetryQuestion): boolean => {
  if (q.attempt >= q.maxAttempts) return false;
  if (q.status === 429) return true;
  const idempotent = q.idempotent ?? isIdempotentByDefault(q.method);
  if (q.status === undefined) return q.errorKind !== undefined && idempotent;
  if (q.status >= 500 && q.status <= 599 && q.status !== 501 && q.status !== 505) return idempotent;
  return false;
};

interface DelayQuestion {
  /** Status of the failed attempt (absent for network errors and timeouts). */
  status?: number;
  /** Lower-case response headers. */
  headers?: Record<string, string>;
  /** Parsed response body (a 429 problem+json may carry `retryAfter` seconds). */
  body?: unknown;
  /** The attempt that just failed, 1-based. */
  attempt: number;
  /** Uniform in [0, 1). */
  random: () => number;
  /** Current time, for a `Retry-After` given as an HTTP date. */
  nowMs?: number;
}

/**
 * Parses a `Retry-After` value: non-negative (possibly fractional) seconds, or an HTTP date.
 * Returns milliseconds, or undefined when absent or unreadable.
 */
export const parseRetryAfterMs = (value: string | undefined, nowMs?: number): number | undefined => {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date) || nowMs === undefined) return undefined;
  return Math.max(0, date - nowMs);
};

const bodyRetryAfterMs = (body: unknown): number | undefined => {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as { retryAfter?: unknown }).retryAfter;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.ceil(value * 1000);
  if (typeof value === 'string') return parseRetryAfterMs(value);
  return undefined;
};

/** Exponential backoff with full jitter: uniform in [0, min(cap, base·2^(attempt-1))). */
const fullJitterBackoffMs = (attempt: number, random: () => number, baseMs: number, capMs: number): number => {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
};

/**
 * How long to wait before the next attempt.
 * - 429: the `Retry-After` header; else the body's `retryAfter`; else an exponential backoff
 *   (1 s, 2 s, 4 s … capped at 60 s) plus up to 1 s of jitter — never close to zero, since the
 *   server just said "too many".
 * - a 503 with `Retry-After`: that (capped at 20 s), for this request only.
 * - anything else: exponential backoff with full jitter (base 250 ms, cap 20 s).
 */
export const retryDelayMs = (q: DelayQuestion): number => {
  if (q.status === 429) {
    const hinted = parseRetryAfterMs(q.headers?.['retry-after'], q.nowMs) ?? bodyRetryAfterMs(q.body);
    if (hinted !== undefined) return hinted;
    const exp = Math.min(RATE_LIMIT_BACKOFF_CAP_MS, RATE_LIMIT_BACKOFF_BASE_MS * 2 ** Math.max(0, q.attempt - 1));
    return exp + Math.floor(q.random() * 1000);
  }
  if (q.status === 503) {
    const hinted = parseRetryAfterMs(q.headers?.['retry-after'], q.nowMs);
    if (hinted !== undefined) return Math.min(hinted, BACKOFF_CAP_MS);
  }
  return fullJitterBackoffMs(q.attempt, q.random, BACKOFF_BASE_MS, BACKOFF_CAP_MS);
};
