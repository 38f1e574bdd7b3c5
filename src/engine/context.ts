/**
 * The one context every runtime hands the engine: the API client, the clock, a cancellation
 * signal and an event sink. Nothing below an entrypoint reads `process.*` or keeps global state;
 * what a run needs comes through here.
 */
import type { ApiClient } from '../api/types.js';
import type { Action, Outcome, PlanSummary, StepKind } from '../core/model.js';
import type { RunReason, StageName } from '../core/outcome.js';

/** The one source of time: `now()` for stamps and durations, `sleep()` for every wait (cancellable). */
export interface Clock {
  now: () => number;
  /** Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Milliseconds on a clock that never jumps (not set by NTP or a user), for how long something
   * was observed; only differences mean anything. Absent (test clocks): `now()` stands in.
   */
  monotonic?: () => number;
}

/** The clock's monotonic reading, or its `now()` when it has none. */
export const monotonicNow = (clock: Clock): number => (clock.monotonic ?? clock.now)();

/** What a run reports while it works. Entrypoints render it: progress (CLI), metrics and logs (watch), annotations (Action). */
export type EngineEvent =
  | { type: 'reconcile.started'; mode: 'plan' | 'apply'; dir: string; sourceId?: string }
  | { type: 'plan.ready'; summary: PlanSummary; pending: number }
  | {
      type: 'operation.done';
      /** One of the six kinds, or `inventory` for a write of the ownership record. */
      kind: StepKind;
      id: string;
      action: Action;
      outcome: Outcome;
      status: number | null;
      durationMs: number;
      error?: string;
    }
  | {
      type: 'request';
      operation: string;
      method: string;
      status: number | null;
      durationMs: number;
      retryInMs?: number;
    }
  | { type: 'ratelimit.paused'; ms: number }
  /** The client has waited this long for an answer (a slow or hung server): what for, and how long. */
  | { type: 'request.waiting'; operation: string; method: string; host: string; waitedMs: number }
  /** A stage of `reconcile` ended (`core/outcome.ts` `STAGES`); `underLease`: run again once the apply lease was held. */
  | { type: 'stage.done'; stage: StageName; durationMs: number; underLease: boolean; ok: boolean }
  /** `status`: the run's outcome (`error` or `interrupted` when it threw); `reason`: why (`core/outcome.ts`). */
  | { type: 'reconcile.done'; status: string; reason: RunReason; durationMs: number }
  /**
   * Another apply holds the source's lease: at once when first seen, then at least every 10 s.
   * Times are the server's (ms since the epoch); `untilBelieved` is false when the record claims
   * an expiry further ahead than a lease lasts (it is then judged by whether it is renewed).
   */
  | {
      type: 'lease.waiting';
      sourceId: string;
      holder: string;
      since?: number;
      until?: number;
      untilBelieved: boolean;
      waitedMs: number;
      waitLimitMs: number;
    }
  /** This apply took the lease after waiting or from another holder: why it was free. */
  | {
      type: 'lease.taken';
      sourceId: string;
      waitedMs: number;
      from?: {
        holder: string;
        since?: number;
        until?: number;
        why: 'released' | 'expired' | 'stale' | 'unreadable' | 'broken';
      };
    }
  /** The lease this apply held was taken by another (`--break-lease`): no further change starts. */
  | { type: 'lease.lost'; sourceId: string; holder: string };

export type EngineEventType = EngineEvent['type'];

export interface EventSink {
  /** Must not throw; an observer never breaks a sync. */
  emit(event: EngineEvent): void;
}

export interface EngineContext {
  client: ApiClient;
  clock: Clock;
  /** Aborting cancels every wait (rate limiter, Retry-After, backoff) and stops new operations; in-flight writes finish or time out. */
  signal: AbortSignal;
  events: EventSink;
}

export const NO_EVENTS: EventSink = { emit: () => {} };

/** The real clock: `Date.now` and a `setTimeout` sleep that an abort ends at once (no timer left behind). */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** A sink that forwards to several (each guarded: one throwing observer does not stop the others). */
export const fanOut = (...sinks: EventSink[]): EventSink => ({
  emit: (event) => {
    for (const sink of sinks) {
      try {
        sink.emit(event);
      } catch {
        // An observer must not break a sync.
      }
    }
  },
});

/** A context for `client` with the system clock, no observer and a signal nobody aborts, unless given. */
export const createEngineContext = (
  client: ApiClient,
  parts: Partial<Omit<EngineContext, 'client'>> = {},
): EngineContext => ({
  client,
  clock: parts.clock ?? systemClock,
  signal: parts.signal ?? new AbortController().signal,
  events: parts.events ?? NO_EVENTS,
});
