/** `plan --out FILE`: the plan as a saved plan (`engine/saved-plan.ts`), for `apply FILE` to apply exactly. */
import type { ReconcileResult } from '../core/model.js';
import { printable } from '../core/printable.js';
import type { SyncConfig } from '../engine/config.js';
import type { PlannedPass } from '../engine/stages/run.js';
import { savedPlanOf, writeSavedPlan } from '../engine/saved-plan.js';
import { writeLine } from '../runtime-io/io.js';
import { VERSION } from '../version.js';
import type { CliSession } from './session.js';

/** Keeps the pass `reconcile` planned (`onPlanned`), then writes it to `file` (`save`). */
export const planOut = (file: string, session: CliSession) => {
  let kept: PlannedPass | undefined;
  return {
    onPlanned: (pass: PlannedPass): void => {
      kept = pass;
    },
    /** Writes the plan; a plan with errors (or invalid manifests) is not saved, and an older file is left as it was. */
    save: async (config: SyncConfig, result: ReconcileResult): Promise<void> => {
      const { io, clock } = session;
      if (result.status !== 'planned' || kept === undefined) {
        writeLine(io.stderr, `The plan was not saved to ${printable(file)}: it cannot be applied (see above).`);
        return;
      }
      await writeSavedPlan(
        file,
        await savedPlanOf(kept, config, { now: clock.now(), version: VERSION, cwd: io.cwd }),
        io.cwd,
      );
      writeLine(
        io.stderr,
        `Saved the plan to ${printable(file)}. To apply exactly this plan: cortex-sync apply ${printable(file)}`,
      );
    },
  };
};
