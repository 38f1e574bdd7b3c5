/**
 * The writing half of `reconcile`, as named stages: `apply` (the ownership record grows ahead of
 * every object write, so nothing created is ever untracked; then the changes, in dependency order)
 * and `record` (the record shrinks to what is now managed, once removals succeeded: a failed
 * delete stays tracked). Once the run's signal aborts, no change starts, and the record is still
 * written — without the signal, with a short grace — so that it matches what was done.
 */
import type { PendingCreates } from '../core/pending-creates.js';
import {
  type ApplyReport,
  type InventoryWrite,
  type InventoryWriteResult,
  type ObjectKey,
  objectKey,
} from '../core/model.js';
import type { AnyKindHandler } from '../kinds/types.js';
import type { EngineContext } from './context.js';
import { executePlan } from './executor.js';
import { afterWrite, beforeWrite, finalInventory, grownInventory } from './inventory-steps.js';
import type { PlannedPass, StageRunner } from './plan-pass.js';
import type { PlanLogSink } from './plan-log.js';
import { recordingClient } from './recording-client.js';

export interface ApplyInput {
  planned: PlannedPass;
  lookup: (kind: AnyKindHandler['kind']) => AnyKindHandler;
  /** The kinds in apply order (the executor's phases). */
  kindOrder: readonly string[];
  concurrency: number;
  log: PlanLogSink;
  /** Held with the apply lease: creates without a client-chosen identity are recorded here first. */
  pendingCreates: PendingCreates | undefined;
}

/** apply → record. */
export const applyPass = async (input: ApplyInput, ctx: EngineContext, stage: StageRunner): Promise<ApplyReport> => {
  const { planned, log } = input;
  const { sourceId, steps } = planned;
  const inventory: InventoryWriteResult[] = [];
  let writes = 0;

  /** The server ids the record keeps: as read, and those the apply learnt (`assigned`). */
  const serverIds = new Map(steps?.serverIds ?? []);
  const assigned = new Map<ObjectKey, string>();
  const serverIdsOf = (keys: ReadonlySet<ObjectKey>) =>
    new Map([...serverIds, ...assigned].filter(([key]) => keys.has(key)));
  const writeRecord = async (write: InventoryWrite, keys: ReadonlySet<ObjectKey>, signal?: AbortSignal) => {
    const started = ctx.clock.now();
    const sent = recordingClient(
      { client: ctx.client, clock: ctx.clock, ...(signal ? { signal } : {}) },
      { kind: 'inventory', id: write.id, action: write.action },
      log,
    );
    try {
      if (sourceId !== undefined)
        await planned.ownership.write(sent.client, {
          sourceId,
          objects: keys,
          ...(steps?.meta ? { meta: steps.meta } : {}),
          ...(steps?.declared ? { declared: steps.declared } : {}),
          serverIds: serverIdsOf(keys),
        });
      inventory.push({ write, outcome: 'ok' });
      return true;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      inventory.push({ write, outcome: signal?.aborted ? 'skipped' : 'failed', error: message });
      if (!signal?.aborted) throw error;
      return false;
    } finally {
      writes += sent.writes;
      const last = inventory[inventory.length - 1];
      ctx.events.emit({
        type: 'operation.done',
        kind: 'inventory',
        id: write.id,
        action: write.action,
        outcome: last?.outcome ?? 'failed',
        status: sent.lastStatus,
        durationMs: ctx.clock.now() - started,
        ...(last?.error !== undefined ? { error: last.error } : {}),
      });
    }
  };

  const grown = steps ? grownInventory(steps) : new Set<ObjectKey>();
  const { report, grownRecorded } = await stage('apply', async () => {
    const before = steps ? beforeWrite(steps) : undefined;
    /** The record holds `grown` (written now, or already): the shrink after the changes may follow. */
    let grownRecorded = before === undefined;
    /** Why no change may start: the record could not grow first (nothing created may go untracked). */
    let notStarted: string | undefined;
    if (before) {
      if (ctx.signal.aborted) inventory.push({ write: before, outcome: 'skipped', error: 'interrupted' });
      else {
        try {
          grownRecorded = await writeRecord(before, grown, ctx.signal);
        } catch {
          // Reported as the failed first step of the apply (its error is on that step), every
          // change after it skipped: not thrown, so the report, the counts and the plan log still
          // reach the user.
          notStarted = 'not started: the ownership record must be written before any change, and that write failed';
        }
      }
    }
    const report = await executePlan(
      {
        changes: planned.plan.changes,
        handlerFor: input.lookup,
        kindOrder: input.kindOrder,
        options: {
          ...(sourceId !== undefined ? { sourceId } : {}),
          ...(input.pendingCreates ? { pendingCreates: input.pendingCreates } : {}),
        },
        concurrency: input.concurrency,
        log,
        ...(notStarted !== undefined ? { notStarted } : {}),
        assigned: (key, serverId) => assigned.set(key, serverId),
      },
      ctx,
    );
    return { report, grownRecorded };
  });

  if (grownRecorded && steps) {
    await stage('record', async () => {
      const removed = new Set(
        report.results
          .filter((r) => r.outcome === 'ok' && (r.change.action === 'delete' || r.change.action === 'archive'))
          .map((r) => objectKey(r.change.kind, r.change.id)),
      );
      // A handed-over object leaves the record once the manifest that declares it now is applied.
      const outcomes = new Map(report.results.map((r) => [objectKey(r.change.kind, r.change.id), r.outcome]));
      for (const h of planned.plan.handOvers ?? []) {
        if ((outcomes.get(h.to) ?? 'ok') === 'ok') removed.add(objectKey(h.kind, h.id));
      }
      const final = finalInventory(steps, grown, removed);
      const learnt = [...assigned].filter(
        ([key, serverId]) => final.has(key) && serverIds.get(key) !== serverId,
      ).length;
      const after = afterWrite({ ...steps, recordExists: true }, grown, final, learnt);
      if (after) {
        try {
          await writeRecord(after, final);
        } catch {
          // Reported as a failed step of the apply (the record keeps the removed keys: safe).
        }
      }
    });
  }
  report.writeRequests += writes;
  if (inventory.length > 0) report.inventory = inventory;
  if (inventory.some((r) => r.outcome === 'skipped')) report.interrupted = true;
  return report;
};
