/**
 * The one context every runtime hands the engine: the API client, the clock, a cancellation
 * signal and an event sink. Nothing below an entrypoint reads `process.*` or keeps global state;
 * what a run needs comes through here.
 */
import type { ApiClient } from '../api/types.js';
import type { Action, Outcome, PlanSummary, StepKind } from '../core/model.js';

/** The one source of time: `now()` for stamps and durations, `sleep()` for every wait (cancellable). */
export interface Clock {
  now: () => number;
  /** Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

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
  | { type: 'reconcile.done'; status: string; durationMs: number };

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
