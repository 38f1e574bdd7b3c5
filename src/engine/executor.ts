/**
 * Runs a plan: changes in dependency order with bounded concurrency. A failed change skips every
 * change that waits for it (transitively); independent changes go on. Kinds with bulk endpoints
 * (`write.applyBatch`) get all their ready changes of one phase together. Removals start only when
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

interface ExecuteInput {
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

const INTERRUPTED = 'interrupted: the run was stopped before this change started';

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
    if (!handler.write.applyBatch) {
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

/** One execution of a plan: its steps, and what each change came to so far. */
interface Execution {
  input: ExecuteInput;
  ctx: EngineContext;
  steps: Step[];
  /** The step each change is in. */
  stepOf: Map<ObjectKey, Step>;
  results: Map<ObjectKey, ChangeResult>;
  started: Set<Step>;
  done: Set<Step>;
  /** Warnings the API gave about changes that succeeded, shown with the apply report. */
  warnings: Map<ObjectKey, Diagnostic[]>;
  counter: WriteCounter;
}

/** The first dependency of `change` that did not succeed, if any. */
const blockerOf = (ex: Execution, change: Change): ObjectKey | undefined =>
  change.waitsFor.find((key) => {
    const r = ex.results.get(key);
    return r !== undefined && r.outcome !== 'ok';
  });

/** Every earlier phase done, and every step a change of it waits for. */
const stepReady = (ex: Execution, step: Step): boolean =>
  ex.steps.every((other) => other.phase >= step.phase || ex.done.has(other)) &&
  step.changes.every((c) =>
    c.waitsFor.every((key) => {
      const dep = ex.stepOf.get(key);
      return dep === undefined || dep === step || ex.done.has(dep);
    }),
  );

/** Keeps a change's result and says it (`operation.done`). */
const settle = (ex: Execution, result: ChangeResult, status: number | null, durationMs: number): void => {
  ex.results.set(objectKey(result.change.kind, result.change.id), result);
  ex.ctx.events.emit({
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

/** A change that does not start, and why: in the report, the events and the plan log. */
const skip = (ex: Execution, change: Change, blockedBy: ObjectKey | undefined, why: string): void => {
  settle(ex, { change, outcome: 'skipped', ...(blockedBy !== undefined ? { blockedBy } : {}), error: why }, null, 0);
  ex.input.log.write({
    ts: new Date(ex.ctx.clock.now()).toISOString(),
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

/** What a change came to: ok (with the API's warnings), skipped (stopped before it sent), or failed (explained). */
const record = (
  ex: Execution,
  handler: AnyKindHandler,
  change: Change,
  error: unknown,
  sent: { writes: number; lastStatus: number | null },
  stepStarted: number,
): void => {
  const key = objectKey(change.kind, change.id);
  const durationMs = ex.ctx.clock.now() - stepStarted;
  if (error === undefined) {
    const diagnostics = ex.warnings.get(key);
    settle(ex, { change, outcome: 'ok', ...(diagnostics?.length ? { diagnostics } : {}) }, sent.lastStatus, durationMs);
    return;
  }
  if (ex.ctx.signal.aborted && sent.writes === 0) {
    // Stopped while waiting (rate limit, Retry-After, backoff) before any write went out.
    settle(ex, { change, outcome: 'skipped', error: `${INTERRUPTED} (nothing was sent)` }, null, durationMs);
    return;
  }
  const err =
    error instanceof Error
      ? error
      : new Error(typeof error === 'string' ? error : `unexpected failure: ${JSON.stringify(error) ?? typeof error}`);
  let diagnostics: Diagnostic[] | undefined;
  try {
    diagnostics = handler.write.explainFailure?.(toKindChange(change), err);
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
  settle(ex, result, isApiError(err) ? (err.status ?? null) : sent.lastStatus, durationMs);
};

/** The changes of a step that may start: the others skipped (stopped, or a dependency failed). */
const runnableOf = (ex: Execution, step: Step): Change[] => {
  const runnable: Change[] = [];
  for (const change of step.changes) {
    if (ex.ctx.signal.aborted) {
      skip(ex, change, undefined, INTERRUPTED);
      continue;
    }
    const blocker = blockerOf(ex, change);
    if (blocker) {
      const outcome = ex.results.get(blocker)?.outcome;
      skip(
        ex,
        change,
        blocker,
        `skipped: waits for ${blocker}, which ${outcome === 'failed' ? 'failed' : 'was skipped'}`,
      );
    } else runnable.push(change);
  }
  return runnable;
};

/** A bulk kind's changes of one phase, in one write. */
const runBatch = async (ex: Execution, step: Step, handler: AnyKindHandler, runnable: Change[]): Promise<void> => {
  const first = runnable[0]!;
  const stepStarted = ex.ctx.clock.now();
  const id = runnable.length === 1 ? first.id : `${first.id} (+${runnable.length - 1} more)`;
  const sent = recordingClient(ex.ctx, { kind: step.kind, id, action: first.action }, ex.input.log);
  try {
    const outcomes = await handler.write.applyBatch!(runnable.map(toKindChange), {
      client: sent.client,
      options: ex.input.options,
    });
    for (const { change, error } of outcomes) record(ex, handler, change, error, sent, stepStarted);
    for (const change of runnable) {
      if (!ex.results.has(objectKey(change.kind, change.id)))
        record(
          ex,
          handler,
          change,
          new Error(`the ${handler.title} bulk write reported no outcome for \`${change.id}\``),
          sent,
          stepStarted,
        );
    }
  } catch (error) {
    for (const change of runnable) record(ex, handler, change, error, sent, stepStarted);
  }
  ex.counter.writes += sent.writes;
};

/** Each change on its own, at once. */
const runEach = async (ex: Execution, handler: AnyKindHandler, runnable: Change[]): Promise<void> => {
  const { input } = ex;
  const stepStarted = ex.ctx.clock.now();
  const warnFor =
    (change: Change) =>
    (diagnostics: Diagnostic[]): void => {
      const key = objectKey(change.kind, change.id);
      ex.warnings.set(key, [...(ex.warnings.get(key) ?? []), ...diagnostics]);
    };
  await Promise.all(
    runnable.map(async (change) => {
      const sent = recordingClient(ex.ctx, change, input.log);
      try {
        const key = objectKey(change.kind, change.id);
        await handler.write.apply(toKindChange(change), {
          client: sent.client,
          options: input.options,
          warn: warnFor(change),
          ...(input.assigned ? { assigned: (serverId: string) => input.assigned?.(key, serverId) } : {}),
        });
        record(ex, handler, change, undefined, sent, stepStarted);
      } catch (error) {
        record(ex, handler, change, error, sent, stepStarted);
      }
      ex.counter.writes += sent.writes;
    }),
  );
};

const runStep = async (ex: Execution, step: Step): Promise<void> => {
  const runnable = runnableOf(ex, step);
  if (runnable.length === 0) return;
  const handler = ex.input.handlerFor(step.kind);
  if (step.batch && handler.write.applyBatch) await runBatch(ex, step, handler, runnable);
  else await runEach(ex, handler, runnable);
};

/** Starts every ready step, at most `concurrency` at once, until none is left to start. */
const runReadySteps = async (ex: Execution): Promise<void> => {
  const inFlight = new Map<Step, Promise<void>>();
  for (;;) {
    for (const step of ex.steps) {
      if (ex.ctx.signal.aborted || ex.input.notStarted !== undefined) break;
      if (inFlight.size >= Math.max(1, ex.input.concurrency)) break;
      if (ex.started.has(step) || !stepReady(ex, step)) continue;
      ex.started.add(step);
      inFlight.set(
        step,
        runStep(ex, step).finally(() => {
          ex.done.add(step);
          inFlight.delete(step);
        }),
      );
    }
    if (inFlight.size === 0) break;
    await Promise.race(inFlight.values());
  }
};

/**
 * Steps never started: the run was interrupted, what had to happen first failed (`notStarted`),
 * or they are caught in a cycle the planner should have refused.
 */
const skipUnstarted = (ex: Execution, interrupted: boolean): void => {
  for (const step of ex.steps) {
    if (ex.started.has(step)) continue;
    for (const change of step.changes) {
      if (ex.input.notStarted !== undefined) skip(ex, change, undefined, ex.input.notStarted);
      else if (interrupted) skip(ex, change, undefined, INTERRUPTED);
      else skip(ex, change, change.waitsFor[0] ?? objectKey(change.kind, change.id), 'skipped: dependency cycle');
    }
  }
};

export const executePlan = async (input: ExecuteInput, ctx: EngineContext): Promise<ApplyReport> => {
  const started = ctx.clock.now();
  const steps = buildSteps(input.changes, input.handlerFor, input.kindOrder);
  const stepOf = new Map<ObjectKey, Step>();
  for (const step of steps) for (const c of step.changes) stepOf.set(objectKey(c.kind, c.id), step);
  const ex: Execution = {
    input,
    ctx,
    steps,
    stepOf,
    results: new Map(),
    started: new Set(),
    done: new Set(),
    warnings: new Map(),
    counter: { writes: 0 },
  };
  await runReadySteps(ex);
  const interrupted = ctx.signal.aborted;
  skipUnstarted(ex, interrupted);
  const ordered = input.changes
    .filter((c) => c.action !== 'noop')
    .map((c) => ex.results.get(objectKey(c.kind, c.id)))
    .filter((r): r is ChangeResult => r !== undefined);
  return {
    results: ordered,
    writeRequests: ex.counter.writes,
    durationMs: ctx.clock.now() - started,
    ...(interrupted ? { interrupted: true } : {}),
  };
};
