/**
 * What the watcher remembers of its runs: the last ten (for `/status`), and what `/readyz` says.
 * Readiness means "can serve" (webhooks, metrics, status), as with Flux and Argo CD: a broken
 * commit is reported on `/status` and in metrics, never by taking the pod out of its Service,
 * which would stop the webhook of the fixing push from reaching it.
 */
import type { PlanSummary } from '../core/model.js';
import type { ReadReport, RunReason } from '../core/outcome.js';
import type { RunnerState, Trigger } from './runner.js';

/** `deferred`: removals wait for a second look after the settle time; nothing was written. */
export type RunResult = 'applied' | 'deferred' | 'partial' | 'invalid' | 'refused' | 'failed' | 'interrupted';

/**
 * Why, as a stable code: the run report's (`core/outcome.ts`), or the watcher's own when the run
 * never reached the engine or was held back: `source-failed` (the checkout could not be fetched or
 * read), `invalid-config` (the revision's settings), `removals-settling` (a deferred run), `drift-held`
 * (a heal run's drift proposed as a pull request or reported, `--on-drift`).
 */
export type RecordReason = RunReason | 'source-failed' | 'invalid-config' | 'removals-settling' | 'drift-held';

export interface RunRecord {
  runId: string;
  trigger: Trigger;
  /** Unknown when the source could not be synced. */
  revision?: string;
  startedAt: string;
  durationMs: number;
  result: RunResult;
  reason: RecordReason;
  summary?: PlanSummary;
  /** Write requests sent (the apply lease's included). */
  writes?: number;
  /** Operations that failed or were skipped. */
  failedOperations?: number;
  /** Every error, one line each, with `file:line` for manifest problems (at most 20). */
  errors: string[];
  /** A deferred run: the removals waiting for their second look (`kind/id`), and when it looks again. */
  waitingRemovals?: string[];
  retryInMs?: number;
  /**
   * What the run changed, by what it did to each object (an object put back by the heal interval
   * is `healed`): the count and the first few `kind/id`, escaped. Absent when it changed nothing.
   */
  changed?: ChangedObjects;
  /**
   * How the run read the live workspace (the run report's `read`): `incremental` (only the objects
   * a change touched, `objects` of them) or `full` with the `reason`; for an apply with work, what
   * happened under the lease (`underLease`: `held`, `recheck`, `full` with a `fallback`).
   */
  read?: ReadReport;
}

/** The objects one run created, updated, healed, archived or deleted. */
export type ChangedObjects = Partial<Record<'created' | 'updated' | 'healed' | 'archived' | 'deleted', NamedCount>>;

/** How many, and the first few names (`kind/id`). */
interface NamedCount {
  count: number;
  first: string[];
}

const MAX_RECORDED_RUNS = 10;

interface Readiness {
  ready: boolean;
  reason: string;
}

export class RunHistory {
  private readonly records: RunRecord[] = [];

  add(record: RunRecord): void {
    this.records.unshift(record);
    this.records.length = Math.min(this.records.length, MAX_RECORDED_RUNS);
  }

  /** Newest first. */
  runs(): readonly RunRecord[] {
    return this.records;
  }

  last(): RunRecord | undefined {
    return this.records[0];
  }

  /** The last revision a run applied without failures. */
  lastApplied(): RunRecord | undefined {
    return this.records.find((r) => r.result === 'applied');
  }

  /** 200 while the port serves; the last run's result is said, its errors are on `/status`. */
  readiness(runner: RunnerState, stopping: boolean): Readiness {
    if (stopping) return { ready: false, reason: 'shutting down' };
    const last = this.last();
    if (!last)
      return { ready: true, reason: `serving; ${runner.running ? 'the first run is in progress' : 'no run yet'}` };
    const at = last.revision ? ` at ${last.revision}` : '';
    const more = last.result === 'applied' ? '' : ' (why: /status)';
    return { ready: true, reason: `serving; last run (${last.runId}) ${last.result}${at}${more}` };
  }
}
