/**
 * The one adapter between the Action and the engine: builds the API client and the engine context
 * from the resolved configuration, calls `reconcile()` / `validateManifests()`, and reduces a
 * result to what the Action reports through `core/outcome` (exit code, counts, summary line).
 */
import { apiClientFor } from '../engine/api-client.js';
import { ConfigError } from '../core/errors.js';
import { type Plan, type ReconcileResult } from '../core/model.js';
import { runOutcome, totalCounts } from '../core/outcome.js';
import type { SyncConfig } from '../engine/config.js';
import { type EngineContext, type EventSink, systemClock } from '../engine/context.js';
import type { PlanLogSink } from '../engine/plan-log.js';
import { reconcile, type ValidateResult, validateManifests } from '../engine/reconcile.js';

export type { ReconcileResult, ValidateResult };

export interface Engine {
  validate(config: SyncConfig): Promise<ValidateResult>;
  plan(config: SyncConfig): Promise<ReconcileResult>;
  /**
   * `approve` sees the plan the engine made right before writing (under the apply lease); when it
   * says no, nothing is written and the result is `planned`.
   */
  apply(config: SyncConfig, planLog: PlanLogSink, approve?: (plan: Plan) => boolean): Promise<ReconcileResult>;
}

/** The engine over the real API client; `signal` stops the run (the runner cancelling the job). */
export const realEngine = (signal: AbortSignal, events: EventSink): Engine => {
  const withContext = async (config: SyncConfig, run: (ctx: EngineContext) => Promise<ReconcileResult>) => {
    if (!config.apiKey) throw new ConfigError('the `api-key` input is not set: plan and apply read the live workspace');
    const client = apiClientFor(config, config.apiKey);
    try {
      return await run({ client, clock: systemClock, signal, events });
    } finally {
      await client.close();
    }
  };
  return {
    validate: (config) => validateManifests(config.dir, { signal }),
    plan: (config) => withContext(config, (ctx) => reconcile({ config, mode: 'plan' }, ctx)),
    apply: (config, planLog, approve) =>
      withContext(config, (ctx) =>
        reconcile(
          { config, mode: 'apply', planLog, ...(approve ? { approve: (plan) => Promise.resolve(approve(plan)) } : {}) },
          ctx,
        ),
      ),
  };
};

export interface RunOutcome {
  exitCode: number;
  /** Plan: what it would do; apply: what was done. */
  summary: { create: number; update: number; delete: number; archive: number };
  changes: boolean;
  summaryLine: string;
}

export const outcomeOf = (result: ReconcileResult, command: 'plan' | 'apply'): RunOutcome => {
  const outcome = runOutcome(result, { command });
  const total = totalCounts(outcome.countsByKind);
  return {
    exitCode: outcome.exitCode,
    summary: { create: total.create, update: total.update, delete: total.delete, archive: total.archive },
    changes: outcome.changes,
    summaryLine: outcome.summaryLine,
  };
};
