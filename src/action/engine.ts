/**
 * The one adapter between the Action and the engine: builds the API client and the engine context
 * from the resolved configuration and calls `reconcile()` / `validateManifests()`. What the Action
 * reports of a run comes from the run report `reconcile` returns (`report.ts` `outputsOf`).
 */
import type { Plan } from '../core/model.js';
import { openEngineContext } from '../engine/api-client.js';
import type { SyncConfig } from '../engine/config.js';
import type { EngineContext, EventSink } from '../engine/context.js';
import type { PlanLogSink } from '../engine/plan-log.js';
import { type ReconciledRun, reconcile, type ValidateResult, validateManifests } from '../engine/reconcile.js';

export type { ReconciledRun, ValidateResult };

export interface Engine {
  validate(config: SyncConfig): Promise<ValidateResult>;
  plan(config: SyncConfig): Promise<ReconciledRun>;
  /**
   * `approve` sees the plan the engine made right before writing (under the apply lease); when it
   * says no, nothing is written and the run is `not-approved`.
   */
  apply(config: SyncConfig, planLog: PlanLogSink, approve?: (plan: Plan) => boolean): Promise<ReconciledRun>;
}

/** The engine over the real API client; `signal` stops the run (the runner cancelling the job). */
export const realEngine = (signal: AbortSignal, events: EventSink): Engine => {
  const withContext = async (config: SyncConfig, run: (ctx: EngineContext) => Promise<ReconciledRun>) => {
    const ctx = openEngineContext(config, 'plan and apply read the live workspace', { signal, events });
    try {
      return await run(ctx);
    } finally {
      await ctx.close();
    }
  };
  return {
    validate: (config) => validateManifests(config.dir, { signal }, undefined, { strict: config.strict === true }),
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
