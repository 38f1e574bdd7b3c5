/**
 * What the watcher remembers of its runs: the last ten (for `/status`) and whether it is ready
 * (for `/readyz`): the last run succeeded, or it failed for a reason that may pass and is being
 * retried within its backoff.
 */
import type { PlanSummary } from '../core/model.js';
import type { RunnerState, Trigger } from './runner.js';

export type RunResult = 'applied' | 'partial' | 'invalid' | 'refused' | 'failed' | 'interrupted';

export interface RunRecord {
  runId: string;
  trigger: Trigger;
  /** Unknown when the source could not be synced. */
  revision?: string;
  startedAt: string;
  durationMs: number;
  result: RunResult;
  summary?: PlanSummary;
  /** Write requests sent. */
  writes?: number;
  /** Operations that failed or were skipped. */
  failedOperations?: number;
  /** Every error, one line each, with `file:line` for manifest problems (at most 20). */
  errors: string[];
}

export const MAX_RECORDED_RUNS = 10;

export interface Readiness {
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

  readiness(runner: RunnerState): Readiness {
    const last = this.last();
    if (!last)
      return { ready: false, reason: runner.running ? 'the first run is in progress' : 'no run has finished yet' };
    const at = last.revision ? ` at ${last.revision}` : '';
    if (last.result === 'applied') return { ready: true, reason: `last run (${last.runId}) applied${at}` };
    const why = `${last.result}${at}: ${last.errors.slice(0, 5).join('; ') || 'no details'}`;
    if (runner.backoff && !runner.backoff.atCap) {
      return {
        ready: true,
        reason: `last run ${why}; retrying in ${Math.max(0, runner.backoff.at - Date.now())} ms (failure ${runner.failures})`,
      };
    }
    return { ready: false, reason: `last run ${why}` };
  }
}
