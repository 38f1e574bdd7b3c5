/**
 * `validate`: references against the repository and the workspace, the source id's binding to the
 * origin that first applied it (another origin claiming it removes, changes and takes over
 * nothing: `core/source-binding.ts`), and a new source id that reads as a recorded one.
 */
import { checkReferences } from '../../core/references.js';
import { sourceBinding } from '../../core/source-binding.js';
import { lookalikeSourceIdWarnings } from '../../source/lookalike-ids.js';
import type { Stage } from './run.js';

export const validate: Stage = async (run, ctx) => {
  const { config, sourceId } = ctx;
  const { state, loaded } = run;
  if (state === undefined || loaded === undefined) throw new Error('validate runs after load and read-live');
  const records = state.inventories;
  const recordedMeta = sourceId !== undefined ? records.meta.get(sourceId) : undefined;
  const binding =
    sourceId !== undefined && config.origin !== undefined
      ? sourceBinding({
          sourceId,
          origin: config.origin,
          record: {
            exists: records.bySource.has(sourceId),
            ...(recordedMeta?.origin !== undefined ? { origin: recordedMeta.origin } : {}),
          },
          allowTakeover: config.allowTakeover,
        })
      : undefined;
  const diagnostics = checkReferences({
    desired: loaded.desired,
    live: [...state.live, ...state.referenced],
    handlers: [...ctx.handlers, ...ctx.readOnlyKinds],
    unreadable: state.unreadable,
  });
  // A new source id that reads as a recorded one: a reviewer would take this plan for that source's.
  if (sourceId !== undefined && !records.bySource.has(sourceId))
    diagnostics.push(...(await lookalikeSourceIdWarnings(sourceId, records.bySource.keys())));
  return { ...run, checked: { recordedMeta, binding, diagnostics } };
};
