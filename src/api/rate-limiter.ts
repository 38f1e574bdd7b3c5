/**
 * The client-wide gate every HTTP attempt passes through: a pause gate (set by a 429's
 * `Retry-After`), a concurrency cap and a token bucket whose rate adapts to the server's 429s
 * (`adaptive-rate.ts`). Waiters are served first in, first out by a single pump, driven by the
 * injected clock, so tests run in virtual time. A waiter can be cancelled (its signal) and the
 * whole gate closed; neither leaves a timer behind.
 */
import { AsyncResource } from 'node:async_hooks';
import { CancelledError } from '../core/errors.js';
import { AbortWatch } from './abort-watch.js';
import { type AdaptiveRate, type AdaptiveRateOptions, afterRateLimited, initialRate, rateAt } from './adaptive-rate.js';

export interface RateLimiterOptions {
  /** Sustained rate; with `adaptive`, the ceiling. */
  requestsPerMinute: number;
  /** Bucket capacity at the full rate: how many requests may start back to back. */
  burst: number;
  /** Max tasks in flight. */
  concurrency: number;
  now: () => number;
  /** Resolves after `ms`; with a signal, rejects as soon as it aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Let the event loop poll I/O once before each start: an answer that already arrived (a 429 the
   * process was too busy to read) closes the gate before the next request goes. Default false.
   */
  pollBeforeStart?: boolean;
  /** Start with one task in flight and open up as answers come (see `window`); default false. */
  slowStart?: boolean;
  /** Learn the server's limit from 429s (`rateLimited`); default false. */
  adaptive?: boolean | Omit<AdaptiveRateOptions, 'maxPerMinute'>;
  /**
   * Told when the next request waits `ms` (a second or more) for a token: the rate, not a
   * `Retry-After` pause, holds the run back (progress keeps its lines coming meanwhile).
   */
  onWait?: (ms: number) => void;
}

interface Waiter {
  start: () => void;
  cancel: (error: CancelledError) => void;
  operation: string;
  signal: AbortSignal | undefined;
  peakFactor: number;
}

/** Token bucket + pause gate + concurrency cap, shared by every request of one client. */
export class RateLimiter {
  private readonly maxPerMinute: number;
  private readonly burstAtMax: number;
  private readonly concurrency: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly adaptiveOptions: AdaptiveRateOptions | undefined;
  private adaptive: AdaptiveRate | undefined;
  private tokens: number;
  private lastRefill: number;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private inFlightCount = 0;
  private pumping = false;
  private pumpSleep: AbortController | undefined;
  private closed = false;
  /**
   * How many tasks may run now (at most `concurrency`). With slow start it begins at 1, grows by
   * one per task answered without a 429, and falls back to 1 on a 429: after a pause one request
   * goes alone, and a server still refusing (a fixed window reopened, a lower limit than thought)
   * sees one request, not a burst of them.
   */
  private window: number;
  private rateLimitedCount = 0;
  private readonly pollBeforeStart: boolean;
  private readonly onWait: ((ms: number) => void) | undefined;
  private lastStart = Number.NEGATIVE_INFINITY;
  /** Since counting started (the last 429 that measured): requests started, and time with requests waiting. */
  private startedSinceCount = 0;
  /** Requests started since the bucket was last full: what the last burst sent. */
  private startedSinceFull = 0;
  /**
   * The most the bucket may hold, learned from a 429 during a burst: half of what that burst got
   * through (the server's bucket, and what it refilled meanwhile). Unlimited until then.
   */
  private learnedBurst = Infinity;
  private busyMsSinceCount = 0;
  private busyFrom: number | undefined;
  private readonly waiters: Waiter[] = [];
  /** Cancels the waiters of a signal that aborts (one listener per signal). */
  private readonly aborts = new AbortWatch<Waiter>((cancelled) => {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (cancelled.has(this.waiters[i] as Waiter)) this.waiters.splice(i, 1);
    }
    for (const w of cancelled) w.cancel(new CancelledError(w.operation, `${w.operation} cancelled before it was sent`));
    this.noteActivity();
    if (this.waiters.length === 0) this.wakePump();
  });
  /** Total time the gate was closed by `pauseFor` (overlapping pauses counted once). */
  pausedMsTotal = 0;

  constructor(options: RateLimiterOptions) {
    if (!(options.requestsPerMinute > 0)) throw new RangeError('requestsPerMinute must be > 0');
    if (!(options.burst >= 1)) throw new RangeError('burst must be >= 1');
    if (!(options.concurrency >= 1)) throw new RangeError('concurrency must be >= 1');
    this.maxPerMinute = options.requestsPerMinute;
    this.burstAtMax = Math.floor(options.burst);
    this.concurrency = Math.floor(options.concurrency);
    this.now = options.now;
    this.sleep = options.sleep;
    this.window = options.slowStart ? 1 : this.concurrency;
    this.pollBeforeStart = options.pollBeforeStart ?? false;
    this.onWait = options.onWait;
    this.tokens = this.burstAtMax;
    this.lastRefill = this.now();
    if (options.adaptive) {
      const tuning = options.adaptive === true ? {} : options.adaptive;
      this.adaptiveOptions = { ...tuning, maxPerMinute: this.maxPerMinute };
      this.adaptive = initialRate(this.adaptiveOptions, this.lastRefill);
    }
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

  /** The rate in force now, requests per minute (below the ceiling after 429s when adaptive). */
  get currentPerMinute(): number {
    return this.adaptive && this.adaptiveOptions
      ? rateAt(this.adaptive, this.adaptiveOptions, this.now())
      : this.maxPerMinute;
  }

  /** How many times a 429 lowered the rate. */
  get decreases(): number {
    return this.adaptive?.decreases ?? 0;
  }

  /** How many requests may start back to back now (the burst, as learned from 429s when adaptive). */
  get burstCapacity(): number {
    return Math.floor(this.burstNow(this.rateNow()));
  }

  /**
   * Closes the gate for `ms` from now (extends, never shortens, a pause already in force).
   * Returns the milliseconds the pause was extended by (0 when a longer one was already in force).
   */
  pauseFor(ms: number): number {
    const now = this.now();
    const until = now + Math.max(0, ms);
    if (until <= this.pausedUntil) return 0;
    const added = until - Math.max(now, this.pausedUntil);
    this.pausedMsTotal += added;
    this.pausedUntil = until;
    this.wakePump();
    return added;
  }

  /**
   * A 429 told the client to wait `ms`: pause, empty the bucket (the server's is empty: no burst
   * after the pause, one request, then the rate) and, when adaptive, lower the rate. Returns what `pauseFor` returns.
   */
  rateLimited(ms: number): number {
    this.rateLimitedCount++;
    this.window = 1;
    const added = this.pauseFor(ms);
    // Nothing saved up during the pause: one request may go when it ends, the rest at the rate.
    this.refill();
    // Tokens still saved: the client was sending faster than its rate (its burst).
    const bursting = this.tokens > 1;
    this.tokens = Math.min(this.tokens, 1);
    if (bursting && this.adaptive) {
      // The server's bucket is smaller than ours: later bursts (after idle time) stay well inside it.
      const gotThrough = Math.max(0, this.startedSinceFull - this.inFlightCount);
      this.learnedBurst = Math.min(this.learnedBurst, Math.max(1, Math.floor(gotThrough / 2)));
    }
    this.lastRefill = Math.max(this.lastRefill, this.pausedUntil);
    if (this.adaptive && this.adaptiveOptions) {
      this.noteActivity();
      // Those still in flight (this one among them) may yet be refused: not counted as accepted.
      const since = {
        accepted: Math.max(0, this.startedSinceCount - this.inFlightCount),
        busyMs: this.busyMsSinceCount,
      };
      const before = this.adaptive;
      this.adaptive = afterRateLimited(before, this.adaptiveOptions, this.now(), ms, since, bursting);
      if (this.adaptive.countEpoch !== before.countEpoch) {
        // Those in flight now met the same empty bucket: not counted as accepted later.
        this.startedSinceCount = 0;
        this.busyMsSinceCount = 0;
      }
    }
    return added;
  }

  /**
   * Runs `task` once the gate is open, a concurrency slot is free and a token is available. `task`
   * is called synchronously at the moment those hold, so nothing it starts can begin inside a pause.
   * If `signal` aborts first, or the gate is closed, the task never runs and the promise rejects
   * with a `CancelledError`. With a `peakFactor`, the task also starts at least
   * 60,000 / (peakFactor × rate) ms after the one before: the burst is spent at most at that many
   * times the rate. Requests that go out in one instant all meet the server's bucket at once: when
   * it runs dry they are all refused, where paced ones would have cost one 429.
   */
  schedule<T>(task: () => Promise<T>, signal?: AbortSignal, operation = 'request', peakFactor = Infinity): Promise<T> {
    // The task runs in its caller's async context, not in that of the request whose end freed the
    // slot: what it reports is attributed to whoever scheduled it (one client shared by sources).
    const ownTask = AsyncResource.bind(task);
    return new Promise<T>((resolve, reject) => {
      if (this.closed) {
        reject(new CancelledError(operation, `${operation} cancelled: the client is closed`));
        return;
      }
      if (signal?.aborted) {
        reject(new CancelledError(operation, `${operation} cancelled before it was sent`));
        return;
      }
      const waiter: Waiter = {
        operation,
        signal,
        peakFactor: peakFactor > 0 ? peakFactor : Infinity,
        cancel: (error) => {
          this.aborts.remove(waiter);
          reject(error);
        },
        start: () => {
          this.aborts.remove(waiter);
          const refusalsBefore = this.rateLimitedCount;
          this.inFlightCount++;
          this.startedSinceCount++;
          this.startedSinceFull++;
          this.lastStart = this.now();
          let running: Promise<T>;
          try {
            running = ownTask();
          } catch (error) {
            running = Promise.reject(error instanceof Error ? error : new Error(String(error)));
          }
          running.then(resolve, reject).finally(() => {
            this.inFlightCount--;
            this.noteActivity();
            // Answered without a 429 since it started: one more may run at once.
            if (this.rateLimitedCount === refusalsBefore) this.window = Math.min(this.concurrency, this.window + 1);
            void this.pump();
          });
        },
      };
      this.aborts.add(waiter);
      this.waiters.push(waiter);
      this.noteActivity();
      void this.pump();
    });
  }

  /** Rejects every waiter with a `CancelledError` and refuses new ones; running tasks finish. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.cancel(new CancelledError(waiter.operation, `${waiter.operation} cancelled: the client is closed`));
    }
    this.wakePump();
  }

  private rateNow(): number {
    return this.currentPerMinute;
  }

  /**
   * Adds the time since the last call to the busy time if requests were waiting at the gate, and
   * notes whether some are now. Only that time pushed the server: while nothing waits (requests
   * only in flight, or none) its bucket may refill past what the client sends.
   */
  private noteActivity(): void {
    const now = this.now();
    if (this.busyFrom !== undefined) this.busyMsSinceCount += Math.max(0, now - this.busyFrom);
    this.busyFrom = this.waiters.length > 0 ? now : undefined;
  }

  /** Bucket capacity at the rate in force: a lowered rate bursts proportionally less. */
  private burstNow(rate: number): number {
    return Math.max(1, Math.min(this.learnedBurst, (this.burstAtMax * rate) / this.maxPerMinute));
  }

  private refill(): void {
    const now = this.now();
    const rate = this.rateNow();
    const capacity = this.burstNow(rate);
    if (now > this.lastRefill) {
      this.tokens = Math.min(capacity, this.tokens + ((now - this.lastRefill) * rate) / 60_000);
    }
    this.lastRefill = Math.max(this.lastRefill, now);
    if (this.tokens >= capacity) this.startedSinceFull = 0;
  }

  /** How long until the head waiter could start, ignoring concurrency; 0 = now. */
  private waitMs(): number {
    const pause = this.pausedUntil - this.now();
    if (pause > 0) return pause;
    const rate = this.rateNow();
    const peakFactor = this.waiters[0]?.peakFactor ?? Infinity;
    const spacing = 60_000 / (peakFactor * rate);
    // Spacing under a millisecond is no spacing (the clock cannot tell it; a clock that stands still would wait for ever).
    if (spacing >= 1) {
      const gap = this.lastStart + spacing - this.now();
      if (gap > 0) return Math.ceil(gap);
    }
    this.refill();
    if (this.tokens >= 1) return 0;
    return Math.ceil(((1 - this.tokens) * 60_000) / rate);
  }

  private tellWait(ms: number): void {
    try {
      this.onWait?.(ms);
    } catch {
      // An observer must not break a sync.
    }
  }

  /** Ends the pump's current sleep early (a pause changed, the queue emptied, the gate closed). */
  private wakePump(): void {
    this.pumpSleep?.abort();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    let polled = false;
    try {
      while (this.waiters.length > 0 && !this.closed) {
        // A finishing task restarts the pump.
        if (this.inFlightCount >= this.window) return;
        const wait = this.waitMs();
        if (wait > 0) {
          if (wait >= 1_000 && !this.isPaused()) this.tellWait(wait);
          const controller = new AbortController();
          this.pumpSleep = controller;
          try {
            await this.sleep(wait, controller.signal);
          } catch {
            // Woken early: look again.
          } finally {
            this.pumpSleep = undefined;
          }
          continue;
        }
        if (this.pollBeforeStart && !polled) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          polled = true;
          continue;
        }
        polled = false;
        this.tokens -= 1;
        this.waiters.shift()?.start();
        this.noteActivity();
      }
    } finally {
      this.pumping = false;
    }
  }
}
