/**
 * One write of this source's ownership record during an apply (the record grows before the
 * changes, shrinks after them): logged as the engine's own step, said as an `operation.done`, and
 * kept as a line of the apply report. Used by the `apply` and `record` stages.
 */
import type { InventoryWrite, InventoryWriteResult, ObjectKey } from '../../core/model.js';
import type { EngineContext } from '../context.js';
import type { PlanLogSink } from '../plan-log.js';
import { recordingClient } from '../recording-client.js';
import type { PlannedPass } from './run.js';

/** What the record's writes of one apply came to so far. */
export interface RecordWrites {
  /** Each write of the record, as it went. */
  results: InventoryWriteResult[];
  /** Write requests they sent. */
  writes: number;
  /** The server ids the record keeps: as read (`steps.serverIds`)… */
  serverIds: ReadonlyMap<ObjectKey, string>;
  /** …and those the apply learnt. */
  assigned: Map<ObjectKey, string>;
}

export const recordWritesOf = (planned: PlannedPass): RecordWrites => ({
  results: [],
  writes: 0,
  serverIds: new Map(planned.steps?.serverIds ?? []),
  assigned: new Map(),
});

/**
 * Writes the record to hold `keys`. Without `signal` (the shrink after a stop) it is still written;
 * with one that aborted, a failure is `skipped` and not thrown. Returns whether it was written.
 */
export const writeRecord = async (
  into: RecordWrites,
  planned: PlannedPass,
  ctx: EngineContext,
  log: PlanLogSink,
  write: InventoryWrite,
  keys: ReadonlySet<ObjectKey>,
  signal?: AbortSignal,
): Promise<boolean> => {
  const { sourceId, steps } = planned;
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
        serverIds: new Map([...into.serverIds, ...into.assigned].filter(([key]) => keys.has(key))),
      });
    into.results.push({ write, outcome: 'ok' });
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    into.results.push({ write, outcome: signal?.aborted ? 'skipped' : 'failed', error: message });
    if (!signal?.aborted) throw error;
    return false;
  } finally {
    into.writes += sent.writes;
    const last = into.results[into.results.length - 1];
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
