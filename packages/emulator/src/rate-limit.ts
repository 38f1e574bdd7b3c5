/** A token bucket on an injected clock, and the vendor's 429 problem response (the vendor's "Rate limit response"). */
import type { EmulatorResponse } from './contract.js';

export class TokenBucket {
  private tokens: number;
  private last: number;

  /** `perMinute` tokens refill per minute, up to `burst`; `perMinute` 0 or Infinity disables the limit. */
  constructor(
    private readonly perMinute: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }

  get enabled(): boolean {
    return Number.isFinite(this.perMinute) && this.perMinute > 0;
  }

  /** Takes one token: 0 when granted, else the milliseconds until one is available. */
  take(now: number): number {
    if (!this.enabled) return 0;
    const perMs = this.perMinute / 60_000;
    this.tokens = Math.min(this.burst, this.tokens + Math.max(0, now - this.last) * perMs);
    this.last = Math.max(this.last, now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - this.tokens) / perMs);
  }
}

/**
 * The window a fixed-window limiter opens when it refuses a request: until it closes, every request
 * is refused too. Times are the emulator's clock, in milliseconds.
 */
export class RetryAfterWindow {
  private openUntil = Number.NEGATIVE_INFINITY;

  /** Seconds left (rounded up, at least 1) when `now` is inside an open window, else undefined. */
  remainingSeconds(now: number): number | undefined {
    const left = this.openUntil - now;
    return left > 0 ? Math.max(1, Math.ceil(left / 1000)) : undefined;
  }

  /** Opens a window of `seconds` from `now`. */
  open(now: number, seconds: number): void {
    this.openUntil = now + seconds * 1000;
  }

  reset(): void {
    this.openUntil = Number.NEGATIVE_INFINITY;
  }
}

/** 429, `application/problem+json`, `Retry-After: <seconds>` and the RFC 7807 body with `retryAfter`. */
export const tooManyRequests = (retryAfterSeconds: number): EmulatorResponse => {
  const seconds = Math.max(0, Math.ceil(retryAfterSeconds));
  return {
    status: 429,
    contentType: 'application/problem+json',
    headers: { 'Retry-After': String(seconds) },
    body: {
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit exceeded',
      retryAfter: seconds,
    },
  };
};
