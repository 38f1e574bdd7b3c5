/**
 * What a run reports while it works: the typed events of the engine and of the API client, and
 * the sink they go to. Pure types and two helpers; entrypoints render the events (progress,
 * metrics, logs, annotations). Here, below the API client and the engine, so both can emit them.
 */
import type { Action, Outcome, PlanSummary, StepKind } from './model.js';
import type { RunReason, StageName } from './outcome.js';

/** What a run reports while it works. Entrypoints render it: progress (CLI), metrics and logs (watch), annotations (Action). */
export type EngineEvent =
  | { type: 'reconcile.started'; mode: 'plan' | 'apply'; dir: string; sourceId?: string }
  | { type: 'plan.ready'; summary: PlanSummary; pending: number }
  | {
      type: 'operation.done';
      /** A kind, or `inventory` for a write of the ownership record. */
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
  /** The next request waits this long for the client's own rate (a low `CORTEX_RATE_LIMIT`, a rate lowered by 429s). */
  | { type: 'ratelimit.waiting'; ms: number }
  /** The client has waited this long for an answer (a slow or hung server): what for, how long, which attempt of how many. */
  | {
      type: 'request.waiting';
      operation: string;
      method: string;
      host: string;
      waitedMs: number;
      attempt: number;
      maxAttempts: number;
    }
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
      /** Kept idle between runs by a watcher, which was asked to let it go. */
      idle?: boolean;
      /** Let go for another apply that waited first (its holder name). */
      reservedFor?: string;
    }
  /** This apply took the lease after waiting, or from a holder that is gone or was broken: why it was free. */
  | {
      type: 'lease.taken';
      sourceId: string;
      waitedMs: number;
      /** Whether it waited for another holder (false: free at the first look, taken over from a gone or broken one). */
      waited?: boolean;
      from?: {
        holder: string;
        since?: number;
        until?: number;
        why: 'released' | 'expired' | 'stale' | 'unreadable' | 'broken';
      };
    }
  /** A watcher let the lease it kept between runs go, because other applies (`to`) wait for it. */
  | { type: 'lease.handed'; sourceId: string; to: string }
  /** The lease this apply held was taken by another (`--break-lease`): no further change starts. */
  | { type: 'lease.lost'; sourceId: string; holder: string };

export type EngineEventType = EngineEvent['type'];

export interface EventSink {
  /** Must not throw; an observer never breaks a sync. */
  emit(event: EngineEvent): void;
}

export const NO_EVENTS: EventSink = { emit: () => {} };

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
