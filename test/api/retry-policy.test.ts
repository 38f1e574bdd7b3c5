import { describe, expect, it } from 'vitest';
import { parseRetryAfterMs, retryDelayMs, shouldRetry } from '../../src/api/retry-policy.js';
import type { HttpMethod } from '../../src/api/types.js';

const ask = (method: HttpMethod, extra: { status?: number; errorKind?: 'network' | 'timeout'; idempotent?: boolean }) =>
  shouldRetry({ method, attempt: 1, maxAttempts: 5, ...extra });

describe('shouldRetry', () => {
  it('retries a 429 for every verb, idempotent or not', () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      expect(ask(method, { status: 429 })).toBe(true);
      expect(ask(method, { status: 429, idempotent: false })).toBe(true);
    }
  });

  it('retries 5xx, timeouts and network errors only for idempotent requests', () => {
    for (const failure of [
      { status: 500 },
      { status: 502 },
      { status: 503 },
      { status: 504 },
      { errorKind: 'timeout' as const },
      { errorKind: 'network' as const },
    ]) {
      expect(ask('GET', failure)).toBe(true);
      expect(ask('PUT', failure)).toBe(true);
      expect(ask('DELETE', failure)).toBe(true);
      expect(ask('POST', failure)).toBe(false);
      expect(ask('PATCH', failure)).toBe(false);
      expect(ask('POST', { ...failure, idempotent: true })).toBe(true);
      expect(ask('GET', { ...failure, idempotent: false })).toBe(false);
    }
  });

  it('does not retry other 4xx, nor 501/505', () => {
    for (const status of [400, 401, 403, 404, 409, 422, 501, 505]) expect(ask('GET', { status })).toBe(false);
  });

  it('stops at maxAttempts, even for a 429', () => {
    expect(shouldRetry({ method: 'GET', status: 429, attempt: 4, maxAttempts: 5 })).toBe(true);
    expect(shouldRetry({ method: 'GET', status: 429, attempt: 5, maxAttempts: 5 })).toBe(false);
    expect(shouldRetry({ method: 'GET', status: 503, attempt: 1, maxAttempts: 1 })).toBe(false);
  });
});

describe('retryDelayMs', () => {
  const random = () => 0.5;

  it('takes a 429 wait from Retry-After, then the body, then a backoff that is never near zero', () => {
    expect(
      retryDelayMs({ status: 429, headers: { 'retry-after': '1' }, body: { retryAfter: 9 }, attempt: 1, random }),
    ).toBe(1000);
    expect(retryDelayMs({ status: 429, headers: { 'retry-after': '0' }, attempt: 1, random })).toBe(0);
    expect(retryDelayMs({ status: 429, headers: {}, body: { retryAfter: 17 }, attempt: 1, random })).toBe(17_000);
    expect(
      retryDelayMs({ status: 429, headers: { 'retry-after': 'soon' }, body: { retryAfter: 2 }, attempt: 1, random }),
    ).toBe(2000);
    const zeroJitter = () => 0;
    expect(retryDelayMs({ status: 429, attempt: 1, random: zeroJitter })).toBe(1000);
    expect(retryDelayMs({ status: 429, attempt: 3, random: zeroJitter })).toBe(4000);
    expect(retryDelayMs({ status: 429, attempt: 30, random: zeroJitter })).toBe(60_000);
  });

  it('uses exponential backoff with full jitter for other failures', () => {
    const ceilings = [1, 2, 3, 4, 5].map((attempt) => retryDelayMs({ status: 503, attempt, random: () => 0.999999 }));
    expect(ceilings).toEqual([249, 499, 999, 1999, 3999]);
    expect(retryDelayMs({ attempt: 3, random: () => 0 })).toBe(0);
    expect(retryDelayMs({ attempt: 3, random: () => 0.5 })).toBe(500);
    expect(retryDelayMs({ attempt: 40, random: () => 0.5 })).toBe(10_000);
  });

  it('honours Retry-After on a 503 (capped) but not on a 500', () => {
    expect(retryDelayMs({ status: 503, headers: { 'retry-after': '3' }, attempt: 1, random })).toBe(3000);
    expect(retryDelayMs({ status: 503, headers: { 'retry-after': '3600' }, attempt: 1, random })).toBe(20_000);
    expect(retryDelayMs({ status: 500, headers: { 'retry-after': '3' }, attempt: 1, random })).toBe(125);
  });
});

describe('parseRetryAfterMs', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfterMs('2')).toBe(2000);
    expect(parseRetryAfterMs(' 1.5 ')).toBe(1500);
    expect(parseRetryAfterMs(undefined)).toBeUndefined();
    expect(parseRetryAfterMs('-1')).toBeUndefined();
    const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
    expect(parseRetryAfterMs('Wed, 21 Oct 2026 07:28:05 GMT', now)).toBe(5000);
    expect(parseRetryAfterMs('Wed, 21 Oct 2026 07:27:00 GMT', now)).toBe(0);
  });
});
