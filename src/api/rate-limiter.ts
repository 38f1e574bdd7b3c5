/**
 * The client-wide gate every HTTP attempt passes through: a pause gate (set by a 429's
 * `Retry-After`), a concurrency cap and a token bucket. Waiters are served first in, first out by a
 * single pump, driven by the injected clock and sleep, so tests run in virtual time.
 */

export interface RateLimiterOptions {
  /** Sustained rate. */
  requestsPerMinute: number;
  /** Bucket capacity: how many requests may start back to back. */
  burst: number;
  /** Max tasks in flight. */
  concurrency: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

interface Waiter {
  start: () => void;
}

/** Token bucket + pause gate + concurrency cap, shared by every request of one client. */
export class RateLimiter {
  private readonly ratePerMs: number;
  private readonly burst: number;
  private readonly concurrency: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private tokens: number;
  private lastRefill: number;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private inFlightCount = 0;
  private pumping = false;
  private readonly waiters: Waiter[] = [];
  /** Total time the gate was closed by `pauseFor` (overlapping pauses counted once). */
  pausedMsTotal = 0;

  constructor(options: RateLimiterOptions) {
    if (!(options.requestsPerMinute > 0)) throw new RangeError('requestsPerMinute must be > 0');
    if (!(options.burst >= 1)) throw new RangeError('burst must be >= 1');
    if (!(options.concurrency >= 1)) throw new RangeError('concurrency must be >= 1');
    this.ratePerMs = options.requestsPerMinute / 60_000;
    this.burst = Math.floor(options.burst);
    this.concurrency = Math.floor(options.concurrency);
    this.now = options.now;
    this.sleep = options.sleep;
    this.tokens = this.burst;
    this.lastRefill = this.now();
  }

  /** Is the gate closed right now (inside a `Retry-After` window)? */
  isPaused(): boolean {
    return this.now() < this.pausedUntil;
  }

  /** Tasks currently running. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Tasks waiting for the gate. */
  get queued(): number {
    return this.waiters.length;
  }

  /** Closes the gate for `ms` from now (extends, never shortens, a pause already in force). */
  pauseFor(ms: number): void {
    const now = this.now();
    const until = now + Math.max(0, ms);
    if (until <= this.pausedUntil) return;
    this.pausedMsTotal += until - Math.max(now, this.pausedUntil);
    this.pausedUntil = until;
  }

  /**
   * Runs `task` once the gate is open, a concurrency slot is free and a token is available. `task`
   * is called synchronously at the moment those hold, so nothing it starts can begin inside a pause.
   */
  schedule<T>(task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiters.push({
        start: () => {
          this.inFlightCount++;
          let running: Promise<T>;
          try {
            running = task();
          } catch (error) {
            running = Promise.reject(error);
          }
          running.then(resolve, reject).finally(() => {
            this.inFlightCount--;
            void this.pump();
          });
        },
      });
      void this.pump();
    });
  }

  private refill(): void {
    const now = this.now();
    if (now > this.lastRefill) {
      this.tokens = Math.min(this.burst, this.tokens + (now - this.lastRefill) * this.ratePerMs);
    }
    this.lastRefill = Math.max(this.lastRefill, now);
  }

  /** How long until the head waiter could start, ignoring concurrency; 0 = now. */
  private waitMs(): number {
    const pause = this.pausedUntil - this.now();
    if (pause > 0) return pause;
    this.refill();
    if (this.tokens >= 1) return 0;
    return Math.ceil((1 - this.tokens) / this.ratePerMs);
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.waiters.length > 0) {
        if (this.inFlightCount >= this.concurrency) return; // a finishing task restarts the pump
        const wait = this.waitMs();
        if (wait > 0) {
          await this.sleep(wait);
          continue;
        }
        this.tokens -= 1;
        this.waiters.shift()?.start();
      }
    } finally {
      this.pumping = false;
    }
  }
}
