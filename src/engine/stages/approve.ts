/**
 * `approve`: the caller's hook (`ReconcileInput.approve(plan, diagnostics, work)`; the CLI shows
 * the plan and asks) sees the plan about to be applied before anything is written; `false` ends
 * the run as planned (`not-approved`).
 */
import type { Stage } from './run.js';

export const approve: Stage = async (run, ctx) => {
  const planned = run.pass;
  if (planned?.status !== 'planned' || ctx.approve === undefined)
    throw new Error('approve follows a plan, with a hook');
  if (await ctx.approve(planned.plan, planned.diagnostics, planned.work)) return run;
  return { ...run, result: { status: 'planned', plan: planned.plan, diagnostics: planned.diagnostics } };
};
