/**
 * Runs a plan: changes in dependency order with bounded concurrency. A failed change skips every
 * change that waits for it (transitively); independent changes go on. Kinds with bulk endpoints
 * (`applyBatch`) get all their ready changes of one phase together. Removals start only when
 * every change of an earlier phase has finished (all writes first, then removals in reverse kind
 * order: `changePhase`).
 *
 * Once the context's signal aborts, no step starts: changes not yet started are `skipped`
 * ("interrupted"), steps in flight finish (their requests are bounded by the client's timeout;
 * waits for the rate limit or a Retry-After end at once), and the report says it was interrupted.
 */
import type { ApplyReport, Change, ChangeResult, Diagnostic, KindName, ObjectKey } from '../core/model.js';
import { objectKey } from '../core/model.js';
import { isApiError } from '../core/errors.js';
import { changePhase, type KindOrder } from '../core/order.js';
import { type AnyKindHandler, type ApplyOptions, toKindChange } from '../kinds/types.js';
import type { EngineContext } from './context.js';
import type { PlanLogSink } from './plan-log.js';
import { recordingClient, type WriteCounter } from './recording-client.js';

export interface ExecuteInput {
  changes: readonly Change[];
  handlerFor: (kind: KindName) => AnyKindHandler;
  /** The kinds in apply order: removals run in reverse kind order (`changePhase`). */
  kindOrder: KindOrder;
  options: ApplyOptions;
  /** Steps in flight at once (the client has its own request cap and rate limit). */
  concurrency: number;
  log: PlanLogSink;
  /** Start no change: each is `skipped` with this reason (what had to happen first failed). */
  notStarted?: string;
  /** Told the id the server assigned to an object a change wrote (`ApplyContext.assigned`). */
  assigned?: (key: ObjectKey, serverId: string) => void;
}

export const INTERRUPTED = 'interrupted: the run was stopped before this change started';

interface Step {
  kind: KindName;
  phase: number;
  changes: Change[];
  batch: boolean;
}

const isRemoval = (c: Change): boolean => c.action === 'delete' || c.action === 'archive';

/** Groups actionable changes into steps: one per change, or one per (kind, phase) for bulk kinds. */
const buildSteps = (changes: readonly Change[], handlerFor: ExecuteInput['handlerFor'], order: KindOrder): Step[] => {
  const steps: Step[] = [];
  const batches = new Map<string, Step>();
  for (const change of changes) {
    if (change.action === 'noop') continue;
    const handler = handlerFor(change.kind);
    if (!handler.applyBatch) {
      steps.push({ kind: change.kind, phase: changePhase(change, order), changes: [change], batch: false });
      continue;
    }
    const group = `${change.kind}:${isRemoval(change) ? 'remove' : 'write'}`;
    let step = batches.get(group);
    if (!step) {
      step = { kind: change.kind, phase: changePhase(change, order), changes: [], batch: true };
      batches.set(group, step);
      steps.push(step);
    }
    step.changes.push(change);
  }
  return steps;
};

const errorLine = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export const executePlan = async (input: ExecuteInput, ctx: EngineContext): Promise<ApplyReport> => {
  const now = () => ctx.clock.now();
  const started = now();
  const counter: WriteCounter = { writes: 0 };
  const steps = buildSteps(input.changes, input.handlerFor, input.kindOrder);
  const stepOf = new Map<ObjectKey, Step>();
  for (const step of steps) for (const c of step.changes) stepOf.set(objectKey(c.kind, c.id), step);

  const results = new Map<ObjectKey, ChangeResult>();
  const done = new Set<Step>();
  const started_ = new Set<Step>();

  /** The first dependency of `change` that did not succeed, if any. */
  const blockerOf = (change: Change): ObjectKey | undefined =>
    change.waitsFor.find((key) => {
      const r = results.get(key);
      return r !== undefined && r.outcome !== 'ok';
    });

  const stepReady = (step: Step): boolean =>
    steps.every((other) => other.phase >= step.phase || done.has(other)) &&
    step.changes.every((c) =>
      c.waitsFor.every((key) => {
        const dep = stepOf.get(key);
        return dep === undefined || dep === step || done.has(dep);
      }),
    );

  const emitDone = (result: ChangeResult, status: number | null, durationMs: number): void => {
    ctx.events.emit({
      type: 'operation.done',
      kind: result.change.kind,
      id: result.change.id,
      action: result.change.action,
      outcome: result.outcome,
      status,
      durationMs,
      ...(result.error !== undefined ? { error: result.error } : {}),
    });
  };

  const skip = (change: Change, blockedBy: ObjectKey | undefined, why: string): void => {
    const result: ChangeResult = {
      change,
      outcome: 'skipped',
      ...(blockedBy !== undefined ? { blockedBy } : {}),
      error: why,
    };
    results.set(objectKey(change.kind, change.id), result);
    emitDone(result, null, 0);
    input.log.write({
      ts: new Date(now()).toISOString(),
      kind: change.kind,
      id: change.id,
      action: change.action,
      method: null,
      path: null,
      status: null,
      attempts: 0,
      durationMs: 0,
      outcome: 'skipped',
      error: why,
    });
  };

  const runStep = async (step: Step): Promise<void> => {
    const runnable: Change[] = [];
    for (const change of step.changes) {
      if (ctx.signal.aborted) {
        skip(change, undefined, INTERRUPTED);
        continue;
      }
      const blocker = blockerOf(change);
      if (blocker) {
        const outcome = results.get(blocker)?.outcome;
        skip(
          change,
          blocker,
          `skipped: waits for ${blocker}, which ${outcome === 'failed' ? 'failed' : 'was skipped'}`,
        );
      } else runnable.push(change);
    }
    if (runnable.length === 0) return;
    const handler = input.handlerFor(step.kind);
    const first = runnable[0]!;
    const stepStarted = now();
    if (step.batch && handler.applyBatch) {
      const id = runnable.length === 1 ? first.id : `${first.id} (+${runnable.length - 1} more)`;
      const sent = recordingClient(ctx, { kind: step.kind, id, action: first.action }, input.log);
      try {
        const outcomes = await handler.applyBatch(runnable.map(toKindChange), {
          client: sent.client,
          options: input.options,
        });
        for (const { change, error } of outcomes) record(handler, change, error, sent, stepStarted);
        for (const change of runnable) {
          if (!results.has(objectKey(change.kind, change.id)))
            record(
              handler,
              change,
              new Error(`the ${handler.title} bulk write reported no outcome for \`${change.id}\``),
              sent,
              stepStarted,
            );
        }
      } catch (error) {
        for (const change of runnable) record(handler, change, error, sent, stepStarted);
      }
      counter.writes += sent.writes;
      return;
    }
    await Promise.all(
      runnable.map(async (change) => {
        const sent = recordingClient(ctx, change, input.log);
        try {
          const key = objectKey(change.kind, change.id);
          await handler.apply(toKindChange(change), {
            client: sent.client,
            options: input.options,
            warn: warnFor(change),
            ...(input.assigned ? { assigned: (serverId: string) => input.assigned?.(key, serverId) } : {}),
          });
          record(handler, change, undefined, sent, stepStarted);
        } catch (error) {
          record(handler, change, error, sent, stepStarted);
        }
        counter.writes += sent.writes;
      }),
    );
  };

  /** Warnings the API gave about changes that succeeded, shown with the apply report. */
  const warnings = new Map<ObjectKey, Diagnostic[]>();
  const warnFor =
    (change: Change) =>
    (diagnostics: Diagnostic[]): void => {
      const key = objectKey(change.kind, change.id);
      warnings.set(key, [...(warnings.get(key) ?? []), ...diagnostics]);
    };

  const record = (
    handler: AnyKindHandler,
    change: Change,
    error: unknown,
    sent: { writes: number; lastStatus: number | null },
    stepStarted: number,
  ): void => {
    const key = objectKey(change.kind, change.id);
    const durationMs = now() - stepStarted;
    if (error === undefined) {
      const diagnostics = warnings.get(key);
      const result: ChangeResult = { change, outcome: 'ok', ...(diagnostics?.length ? { diagnostics } : {}) };
      results.set(key, result);
      emitDone(result, sent.lastStatus, durationMs);
      return;
    }
    if (ctx.signal.aborted && sent.writes === 0) {
      // Stopped while waiting (rate limit, Retry-After, backoff) before any write went out.
      const result: ChangeResult = { change, outcome: 'skipped', error: `${INTERRUPTED} (nothing was sent)` };
      results.set(key, result);
      emitDone(result, null, durationMs);
      return;
    }
    const err =
      error instanceof Error
        ? error
        : new Error(typeof error === 'string' ? error : `unexpected failure: ${JSON.stringify(error) ?? typeof error}`);
    let diagnostics: Diagnostic[] | undefined;
    try {
      diagnostics = handler.explainFailure?.(toKindChange(change), err);
    } catch {
      // Explaining a failure must never hide it: the error line is reported either way.
      diagnostics = undefined;
    }
    const result: ChangeResult = {
      change,
      outcome: 'failed',
      error: errorLine(err),
      ...(diagnostics?.length ? { diagnostics } : {}),
    };
    results.set(key, result);
    emitDone(result, isApiError(err) ? (err.status ?? null) : sent.lastStatus, durationMs);
  };

  const inFlight = new Map<Step, Promise<void>>();
  for (;;) {
    for (const step of steps) {
      if (ctx.signal.aborted || input.notStarted !== undefined) break;
      if (inFlight.size >= Math.max(1, input.concurrency)) break;
      if (started_.has(step) || !stepReady(step)) continue;
      started_.add(step);
      inFlight.set(
        step,
        runStep(step).finally(() => {
          done.add(step);
          inFlight.delete(step);
        }),
      );
    }
    if (inFlight.size === 0) break;
    await Promise.race(inFlight.values());
  }
  // Steps never started: the run was interrupted, or they are caught in a cycle the planner
  // should have refused.
  const interrupted = ctx.signal.aborted;
  for (const step of steps) {
    if (started_.has(step)) continue;
    for (const change of step.changes) {
      if (input.notStarted !== undefined) skip(change, undefined, input.notStarted);
      else if (interrupted) skip(change, undefined, INTERRUPTED);
      else skip(change, change.waitsFor[0] ?? objectKey(change.kind, change.id), 'skipped: dependency cycle');
    }
  }

  const ordered = input.changes
    .filter((c) => c.action !== 'noop')
    .map((c) => results.get(objectKey(c.kind, c.id)))
    .filter((r): r is ChangeResult => r !== undefined);
  return {
    results: ordered,
    writeRequests: counter.writes,
    durationMs: now() - started,
    ...(interrupted ? { interrupted: true } : {}),
  };
};
