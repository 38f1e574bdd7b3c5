/**
 * `record`: the ownership record shrinks to what is now managed, once removals succeeded (a failed
 * delete stays tracked; a handed-over object leaves it once the manifest that declares it now is
 * applied). Written without the run's signal, with a short grace, so that it matches what was
 * done even after a stop. Then the run's result: the apply report with the record's writes.
 */
import { afterWrite, finalInventory } from '../../core/inventory-steps.js';
import { objectKey } from '../../core/model.js';
import { logOf, type ApplyProgress } from './apply.js';
import { writeRecord } from './record-write.js';
import type { Run, Stage } from './run.js';

/** Does the record shrink after this apply (it grew, and the run writes one)? */
export const recordShrinks = (run: Run): boolean =>
  run.applying?.grownRecorded === true && run.applying.planned.steps !== undefined;

/** The keys the record holds after the changes. */
const finalKeys = (applying: ApplyProgress, steps: NonNullable<ApplyProgress['planned']['steps']>) => {
  const { report, planned } = applying;
  const removed = new Set(
    report.results
      .filter((r) => r.outcome === 'ok' && (r.change.action === 'delete' || r.change.action === 'archive'))
      .map((r) => objectKey(r.change.kind, r.change.id)),
  );
  const outcomes = new Map(report.results.map((r) => [objectKey(r.change.kind, r.change.id), r.outcome]));
  for (const h of planned.plan.handOvers ?? []) {
    if ((outcomes.get(h.to) ?? 'ok') === 'ok') removed.add(objectKey(h.kind, h.id));
  }
  return finalInventory(steps, applying.grown, removed);
};

export const record: Stage = async (run, ctx) => {
  const applying = run.applying;
  const steps = applying?.planned.steps;
  if (applying === undefined || steps === undefined) throw new Error('record runs after apply, with a record');
  const final = finalKeys(applying, steps);
  const { serverIds, assigned } = applying.record;
  const learnt = [...assigned].filter(([key, serverId]) => final.has(key) && serverIds.get(key) !== serverId).length;
  const after = afterWrite({ ...steps, recordExists: true }, applying.grown, final, learnt);
  if (after) {
    try {
      await writeRecord(applying.record, applying.planned, ctx, logOf(ctx.planLog), after, final);
    } catch {
      // Reported as a failed step of the apply (the record keeps the removed keys: safe).
    }
  }
  return run;
};

/** The run's result once `apply` (and `record`) ran: the apply report, with the record's writes. */
export const appliedRun = (run: Run): Run => {
  const applying = run.applying;
  if (applying === undefined) throw new Error('the result of an apply follows apply');
  const { planned, report, record: writes } = applying;
  report.writeRequests += writes.writes;
  if (writes.results.length > 0) report.inventory = writes.results;
  if (writes.results.some((r) => r.outcome === 'skipped')) report.interrupted = true;
  const result = { status: 'applied' as const, plan: planned.plan, diagnostics: planned.diagnostics, report };
  return { ...run, result, applied: planned };
};
