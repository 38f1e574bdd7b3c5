/**
 * `lease`: an apply with work and a source id takes the source's lease (one apply per source), or
 * keeps the one its keeper still holds from an earlier run (the plan was then read under it).
 * `withLease` runs the stages after it under the lease: once another apply takes it
 * (`--break-lease`) no further change starts, and the run fails naming it; the lease is given back
 * however they end.
 */
import type { ReconcileResult } from '../../core/model.js';
import { LeaseLostError, leaseSettingsFor, newHolderName, withLoggedLease } from '../lease.js';
import { releaseEachRun } from '../lease-keeper.js';
import type { Run, Stage, StageContext } from './run.js';

/** Does this run take the lease: an apply whose plan has work, with a source id? */
export const needsLease = (run: Run, ctx: StageContext): boolean =>
  ctx.mode === 'apply' && ctx.sourceId !== undefined && run.pass?.status === 'planned' && run.pass.work.hasWork;

export const lease: Stage = async (run, ctx) => {
  const { sourceId, store } = ctx;
  if (sourceId === undefined) throw new Error('the lease is taken for a source');
  const keeper = ctx.session.leases ?? releaseEachRun;
  const leaseCtx = withLoggedLease(ctx, sourceId, ctx.planLog, store.lease);
  const settings = leaseSettingsFor(ctx.config, newHolderName());
  const { lease: held, kept } = await keeper.take(leaseCtx, sourceId, settings, store.lease);
  return { ...run, lease: { held, kept }, underLease: 'held' };
};

/** Did an apply go through without a problem (a kept lease may stay kept after it)? */
const appliedCleanly = (result: ReconcileResult | undefined): boolean =>
  result?.status === 'applied' &&
  !result.report.interrupted &&
  result.report.results.every((r) => r.outcome === 'ok') &&
  (result.report.inventory ?? []).every((r) => r.outcome === 'ok');

/**
 * Runs `stages` under the lease `run` holds (with a signal that also aborts when the lease is
 * lost), then gives the lease back to its keeper: kept or released, never left behind.
 */
export const withLease = async (
  run: Run,
  ctx: StageContext,
  stages: (run: Run, leased: StageContext) => Promise<Run>,
): Promise<Run> => {
  const { sourceId } = ctx;
  const taken = run.lease;
  if (taken === undefined || sourceId === undefined) throw new Error('withLease follows the lease stage');
  const keeper = ctx.session.leases ?? releaseEachRun;
  let done: Run;
  try {
    // Once another apply takes the lease (--break-lease), no further change starts.
    done = await stages(run, { ...ctx, signal: AbortSignal.any([ctx.signal, taken.held.lost]) });
  } catch (error) {
    await keeper.done(taken.held, false).catch(() => {});
    const lostTo = taken.held.lostTo();
    throw lostTo !== undefined ? new LeaseLostError(sourceId, lostTo, { cause: error }) : error;
  }
  const clean = appliedCleanly(done.result);
  // Remembered before the lease is given back; a failure to write it loses only the memory, never the apply.
  const mark = clean ? ctx.applyMark?.() : undefined;
  if (mark !== undefined) await taken.held.markApplied(mark).catch(() => {});
  await keeper.done(taken.held, clean).catch(() => {});
  // Another apply broke this one's lease: what was written is in the plan log and the record; the
  // run fails rather than report a complete apply.
  const lostTo = taken.held.lostTo();
  if (lostTo !== undefined) throw new LeaseLostError(sourceId, lostTo);
  return done;
};
