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
import type { PlannedPass } from '../engine/stages/run.js';
import { readLease } from '../engine/lease.js';
import type { AppliedMark } from '../ownership/store.js';
import { type ReconciledRun, reconcile, type ValidateResult, validateManifests } from '../engine/reconcile.js';

export type { PlannedPass, ReconciledRun, ValidateResult };

/** What the merge's apply sees of the engine's run, before any write. */
export interface ApplyHooks {
  /**
   * The first plan that may be applied, after the one read of the workspace and before the lease:
   * `false` ends the run there (not approved, no lease taken, nothing written).
   */
  onPlanned?: (pass: PlannedPass) => Promise<boolean>;
  /**
   * The plan the engine made right before writing (under the apply lease, after what it writes
   * was read again by identity): `false` and nothing is written, the run is `not-approved`.
   */
  approve?: (plan: Plan) => boolean;
  /** Remembered in the source's lease record when the apply goes through cleanly (`appliedMarks` reads it). */
  mark?: () => string | undefined;
}

export interface Engine {
  validate(config: SyncConfig): Promise<ValidateResult>;
  plan(config: SyncConfig): Promise<ReconciledRun>;
  /** One run that reads the workspace once, plans, and applies what `hooks` let through. */
  apply(config: SyncConfig, planLog: PlanLogSink, hooks?: ApplyHooks): Promise<ReconciledRun>;
  /** The clean applies the source's lease record remembers (one GET; none without a source id or a record). */
  appliedMarks(config: SyncConfig): Promise<AppliedMark[]>;
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
    apply: (config, planLog, hooks = {}) =>
      withContext(config, (ctx) => {
        const { onPlanned, approve, mark } = hooks;
        return reconcile(
          {
            config,
            mode: 'apply',
            planLog,
            ...(mark !== undefined ? { applyMark: mark } : {}),
            ...(onPlanned ? { onPlanned } : {}),
            ...(approve ? { approve: (plan) => Promise.resolve(approve(plan)) } : {}),
          },
          ctx,
        );
      }),
    appliedMarks: async (config) => {
      if (!config.sourceId) return [];
      const ctx = openEngineContext(config, 'the merge reads what the source applied', { signal, events });
      try {
        return (await readLease(ctx.client, config.sourceId))?.applied ?? [];
      } finally {
        await ctx.close();
      }
    },
  };
};
