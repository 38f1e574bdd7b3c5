/**
 * `plan`: the run's plan, pure and built once (`core/run-plan.ts`): the changes, the header (the
 * settings that widen removals), the ownership record's writes and the managed objects left
 * without a manifest. A read with a `scope` plans the objects in it alone (references, the record's
 * writes and the leftovers are still judged over every manifest). Says `plan.ready`; a plan with
 * errors ends the run as `refused`.
 */
import { hasErrors } from '../../core/model.js';
import { planWork } from '../../core/outcome.js';
import type { RecordMeta } from '../../core/record-meta.js';
import { planRun, type RunPlanInput, type RunRecord } from '../../core/run-plan.js';
import { strictly } from '../../core/strict.js';
import { otherClaimsOf, sharedRecordWith } from '../../ownership/index-records.js';
import { lookalikeChangeWarnings } from '../../source/lookalike-ids.js';
import type { SyncConfig } from '../config.js';
import { deleteScopeOf } from '../delete-scope.js';
import type { LiveState } from '../fetch-live.js';
import type { Checked, Stage, StageContext } from './run.js';

/** What this run records with its source's objects: its origin, and the settings that limit removals. */
const recordMetaOf = (config: SyncConfig): RecordMeta => ({
  ...(config.origin !== undefined ? { origin: config.origin } : {}),
  protect: config.protect,
  ...(config.maxDeleteCount !== undefined ? { maxDeleteCount: config.maxDeleteCount } : {}),
});

/** This run's source and its record as read (none without a source id). */
const recordOf = (ctx: StageContext, state: LiveState): RunRecord | undefined => {
  const { sourceId, store } = ctx;
  if (sourceId === undefined) return undefined;
  const records = state.inventories;
  const keys = records.bySource.get(sourceId);
  const meta = records.meta.get(sourceId);
  const declared = records.declared.get(sourceId);
  const serverIds = records.serverIds.get(sourceId);
  const sharesTagWith = sharedRecordWith(records, sourceId, (s) => store.recordId(s));
  return {
    sourceId,
    tag: store.recordId(sourceId),
    asRead: {
      ...(keys !== undefined ? { keys } : {}),
      ...(meta !== undefined ? { meta } : {}),
      ...(declared !== undefined ? { declared } : {}),
      ...(serverIds !== undefined ? { serverIds } : {}),
    },
    meta: recordMetaOf(ctx.config),
    ...(sharesTagWith !== undefined ? { sharesTagWith } : {}),
  };
};

/** What the plan is built from: the manifests, the state as read, the settings. */
const runPlanInputOf = (
  ctx: StageContext,
  desired: RunPlanInput['desired'],
  state: LiveState,
  checked: Checked,
): RunPlanInput => {
  const { config } = ctx;
  const { recordedMeta, binding } = checked;
  const record = recordOf(ctx, state);
  return {
    desired,
    live: state.live,
    handlers: ctx.handlers,
    ...(state.scope !== undefined ? { readScope: state.scope } : {}),
    ...(state.unconfirmed !== undefined ? { unconfirmed: state.unconfirmed } : {}),
    options: {
      prune: config.prune,
      allowTakeover: config.allowTakeover,
      allowMassDelete: config.allowMassDelete,
      ...(config.allowEmpty === true ? { allowEmpty: true } : {}),
      maxDeleteShare: config.maxDeleteShare,
      ...(config.maxDeleteCount !== undefined ? { maxDeleteCount: config.maxDeleteCount } : {}),
      protect: config.protect,
      manifestsComplete: true,
      now: ctx.clock.now(),
      ...(binding !== undefined ? { binding } : {}),
      otherClaims: otherClaimsOf(state.inventories, ctx.sourceId),
      recordUnreadable: (source) => state.inventories.unreadable?.get(source),
      ...(config.forceConflicts === true ? { forceConflicts: true } : {}),
    },
    deleteScope: deleteScopeOf(config, recordedMeta, binding, ctx.settings),
    ...(record !== undefined ? { record } : {}),
  };
};

export const plan: Stage = async (run, ctx) => {
  const { loaded, state, checked } = run;
  if (loaded === undefined || state === undefined || checked === undefined)
    throw new Error('plan runs after load, read-live and validate');
  const built = planRun(runPlanInputOf(ctx, loaded.desired, state, checked));
  const { steps } = built;
  // Ids a reviewer cannot tell apart in one plan (a create beside an archive reads as a move): flagged beside each.
  const declared = new Set(loaded.desired.map((o) => `${o.kind}/${o.id}`));
  const lookalikes = await lookalikeChangeWarnings(built.plan.changes, declared, ctx.handlers);
  const plan = lookalikes.length
    ? { ...built.plan, diagnostics: [...built.plan.diagnostics, ...lookalikes] }
    : built.plan;
  const diagnostics = [
    ...loaded.diagnostics,
    ...strictly([...state.diagnostics, ...checked.diagnostics, ...plan.diagnostics], ctx.config.strict),
  ];
  const work = planWork(plan);
  ctx.events.emit({ type: 'plan.ready', summary: plan.summary, pending: work.pending });
  if (hasErrors(diagnostics)) return { ...run, pass: { status: 'refused', plan, diagnostics } };
  const { sourceId } = ctx;
  return {
    ...run,
    pass: {
      status: 'planned',
      plan,
      diagnostics,
      work,
      steps,
      sourceId,
      ownership: state.ownership,
      desired: loaded.desired,
      state,
    },
  };
};
