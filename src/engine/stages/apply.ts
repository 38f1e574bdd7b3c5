/**
 * `apply`: the ownership record grows ahead of every object write (nothing created is ever
 * untracked), then the plan's changes, in dependency order (`executor.ts`). Once the run's signal
 * aborts, no change starts. A record that could not grow first starts no change: the apply report
 * says so on every change rather than throwing, so the counts and the plan log still reach the user.
 */
import { beforeWrite, grownInventory } from '../../core/inventory-steps.js';
import type { ApplyReport, ObjectKey } from '../../core/model.js';
import { executePlan } from '../executor.js';
import type { PlanLogSink } from '../plan-log.js';
import { type RecordWrites, recordWritesOf, writeRecord } from './record-write.js';
import type { PlannedPass, Stage } from './run.js';

const NO_LOG: PlanLogSink = { write: () => {}, close: async () => {} };

/** What `apply` leaves for `record`. */
export interface ApplyProgress {
  planned: PlannedPass;
  report: ApplyReport;
  record: RecordWrites;
  /** The keys the grown record holds. */
  grown: ReadonlySet<ObjectKey>;
  /** The record holds `grown` (written now, or already): the shrink after the changes may follow. */
  grownRecorded: boolean;
}

export const logOf = (log: PlanLogSink | undefined): PlanLogSink => log ?? NO_LOG;

export const apply: Stage = async (run, ctx) => {
  const planned = run.pass;
  if (planned?.status !== 'planned') throw new Error('apply runs after a plan');
  const { sourceId, steps } = planned;
  const log = logOf(ctx.planLog);
  const record = recordWritesOf(planned);
  const grown = steps ? grownInventory(steps) : new Set<ObjectKey>();
  const before = steps ? beforeWrite(steps) : undefined;
  let grownRecorded = before === undefined;
  /** Why no change may start: the record could not grow first (nothing created may go untracked). */
  let notStarted: string | undefined;
  if (before) {
    if (ctx.signal.aborted) record.results.push({ write: before, outcome: 'skipped', error: 'interrupted' });
    else {
      try {
        grownRecorded = await writeRecord(record, planned, ctx, log, before, grown, ctx.signal);
      } catch {
        // Reported as the failed first step of the apply (its error is on that step), every
        // change after it skipped.
        notStarted = 'not started: the ownership record must be written before any change, and that write failed';
      }
    }
  }
  const pendingCreates = run.lease?.held.pending;
  const report = await executePlan(
    {
      changes: planned.plan.changes,
      handlerFor: ctx.lookup,
      kindOrder: ctx.handlers.map((h) => h.kind),
      options: {
        ...(sourceId !== undefined ? { sourceId } : {}),
        ...(pendingCreates ? { pendingCreates } : {}),
      },
      concurrency: ctx.config.concurrency,
      log,
      ...(notStarted !== undefined ? { notStarted } : {}),
      assigned: (key, serverId) => record.assigned.set(key, serverId),
    },
    ctx,
  );
  return { ...run, applying: { planned, report, record, grown, grownRecorded } };
};
