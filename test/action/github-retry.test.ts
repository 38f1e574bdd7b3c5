/**
 * The GitHub port's retry, for answers GitHub may really give: `Retry-After` as seconds or as an
 * HTTP date, garbage in it, a secondary rate limit (403 with `Retry-After`), a plain 403 or 404
 * (never retried), and GitHub answering 5xx forever (a bounded number of tries).
 */
import { describe, expect, it } from 'vitest';
import { GITHUB_RETRY, withRetry } from '../../src/action/github.js';

const failure = (status: number, retryAfter?: string) =>
  Object.assign(new Error(`HTTP ${status}`), {
    status,
    response: { headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } },
  });

/** Fails with `errors` in turn, then answers 'ok'; records the waits. */
const attempt = async (errors: Error[], now = 0) => {
  const waits: number[] = [];
  let calls = 0;
  const result = await withRetry(
    async () => {
      const error = errors[calls];
      calls += 1;
      if (error) throw error;
      return 'ok';
    },
    async (ms) => void waits.push(ms),
    () => now,
  ).catch((error: unknown) => error as Error);
  return { result, waits, calls };
};

describe('retrying GitHub', () => {
  it('waits what Retry-After says, as seconds or as an HTTP date', async () => {
    expect((await attempt([failure(503, '7')])).waits).toEqual([7_000]);
    const now = Date.parse('2026-11-27T10:00:00Z');
    expect((await attempt([failure(429, 'Fri, 27 Nov 2026 10:00:30 GMT')], now)).waits).toEqual([30_000]);
  });

  it('reads garbage or a negative Retry-After as none: the usual growing pause', async () => {
    const { waits, result } = await attempt([failure(502, 'soon'), failure(502, '-5')]);
    expect(waits).toEqual([GITHUB_RETRY.firstPauseMs, GITHUB_RETRY.firstPauseMs * 2]);
    expect(result).toBe('ok');
  });

  it('retries a secondary rate limit (403 with Retry-After), never a plain 403 or a 404', async () => {
    expect((await attempt([failure(403, '2')])).result).toBe('ok');
    for (const status of [403, 404, 422]) {
      const { calls, waits } = await attempt([failure(status)]);
      expect({ status, calls, waits }).toEqual({ status, calls: 1, waits: [] });
    }
  });

  it('GitHub failing forever: a bounded number of tries, then the last failure', async () => {
    const forever = Array.from({ length: 100 }, () => failure(500));
    const { calls, result } = await attempt(forever);
    expect(calls).toBe(GITHUB_RETRY.attempts);
    expect((result as Error).message).toBe('HTTP 500');
  });

  it('a Retry-After longer than a run waits: not waited, and the failure says what GitHub asked', async () => {
    const { waits, result } = await attempt([failure(429, '600')]);
    expect(waits).toEqual([]);
    expect((result as Error).message).toContain('Retry-After 600 s, longer than the 60 s a run waits');
  });
});
