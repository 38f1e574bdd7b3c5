/**
 * Turns what one run produced (the run report of a reconcile, or the error it threw) into the
 * record kept for `/status` and the verdict for the runner (retry or not). What the run came to —
 * its outcome, reason, counts, requests — is the report's; this file only says it in the
 * watcher's words.
 */
import { CortexSyncError } from '../core/errors.js';
import type { Action, ChangeResult, Diagnostic } from '../core/model.js';
import type { RunOutcomeName, RunReport } from '../core/outcome.js';
import { failureReason, type ReconciledRun } from '../engine/reconcile.js';
import type { ChangedObjects, RecordReason, RunRecord, RunResult } from './history.js';
import type { RemovalCheck } from './removal-settle.js';
import type { RunVerdict } from './runner.js';

const MAX_ERRORS = 20;

/** How many names of changed objects a run's record and log line show per action. */
const MAX_CHANGED_NAMES = 5;

/** `file:line:column: message` (as far as the diagnostic knows its place). */
export const formatDiagnostic = (d: Diagnostic): string => {
  const place = d.file ? `${d.file}${d.line ? `:${d.line}${d.column ? `:${d.column}` : ''}` : ''}: ` : '';
  return `${place}${d.message}`;
};

const errorLines = (diagnostics: readonly Diagnostic[]): string[] =>
  diagnostics
    .filter((d) => d.severity === 'error')
    .slice(0, MAX_ERRORS)
    .map(formatDiagnostic);

export interface Judged {
  result: RunResult;
  reason: RecordReason;
  verdict: RunVerdict;
  errors: string[];
  /** The run's warnings, `file:line:column: message` (unescaped); undefined when it loaded nothing. */
  warnings?: string[];
  /** The engine's report, when the run got that far (metrics read it). */
  report?: RunReport;
  fields: Partial<
    Pick<RunRecord, 'summary' | 'writes' | 'failedOperations' | 'waitingRemovals' | 'retryInMs' | 'changed'>
  >;
}

const warningLines = (diagnostics: readonly Diagnostic[]): string[] =>
  diagnostics.filter((d) => d.severity === 'warning').map(formatDiagnostic);

const DONE: Partial<Record<Action, keyof ChangedObjects>> = {
  create: 'created',
  update: 'updated',
  archive: 'archived',
  delete: 'deleted',
};

/**
 * What the changes that went through did, by action: a count and the first `MAX_CHANGED_NAMES`
 * names (`kind/id`, unescaped: the watcher escapes them). Under the heal interval, a create or an
 * update put back what drifted: `healed`.
 */
const changedObjects = (results: readonly ChangeResult[], heal: boolean): ChangedObjects | undefined => {
  const changed: ChangedObjects = {};
  for (const { change, outcome } of results) {
    const done = DONE[change.action];
    if (outcome !== 'ok' || done === undefined) continue;
    const key = heal && (done === 'created' || done === 'updated') ? 'healed' : done;
    const entry = (changed[key] ??= { count: 0, first: [] });
    entry.count += 1;
    if (entry.first.length < MAX_CHANGED_NAMES) entry.first.push(`${change.kind}/${change.id}`);
  }
  return Object.keys(changed).length > 0 ? changed : undefined;
};

/** The watcher's word for each outcome (it always applies: a plan the settle check held back is `deferred`, see below). */
const RESULT: Record<RunOutcomeName, RunResult> = {
  invalid: 'invalid',
  refused: 'refused',
  planned: 'refused',
  'not-approved': 'refused',
  applied: 'applied',
  partial: 'partial',
  interrupted: 'interrupted',
};

export const judgeResult = (result: ReconciledRun, options: { heal?: boolean } = {}): Judged => {
  const { run } = result;
  const outcome = RESULT[run.outcome];
  const base = { result: outcome, reason: run.reason, report: run, warnings: warningLines(result.diagnostics) };
  if (run.outcome === 'invalid')
    return { ...base, verdict: { ok: false, retry: false }, errors: errorLines(result.diagnostics), fields: {} };
  const summary = run.plannedTotal;
  if (result.status !== 'applied')
    return {
      ...base,
      verdict: { ok: false, retry: false },
      errors: errorLines(result.diagnostics),
      fields: { summary },
    };
  const errors = [
    ...result.report.results
      .filter((r) => r.outcome !== 'ok')
      .map((r) => `${r.change.kind} ${r.change.id}: ${r.error ?? r.outcome}`),
    ...(result.report.inventory ?? [])
      .filter((r) => r.outcome !== 'ok')
      .map((r) => `ownership record: ${r.error ?? r.outcome}`),
  ].slice(0, MAX_ERRORS);
  const changed = changedObjects(result.report.results, options.heal === true);
  const fields = {
    summary,
    writes: run.requests.writes,
    failedOperations: run.total.failed + run.total.skipped,
    ...(changed !== undefined ? { changed } : {}),
  };
  const ok = run.outcome === 'applied';
  return { ...base, verdict: { ok, retry: !ok }, errors: ok ? [] : errors, fields };
};

/** A run whose removals wait for their second look: nothing was written, a run follows after `retryInMs`. */
export const judgeDeferred = (result: ReconciledRun, check: RemovalCheck): Judged => ({
  result: 'deferred',
  reason: 'removals-settling',
  verdict: { ok: true, retry: false },
  errors: [],
  warnings: warningLines(result.diagnostics),
  report: result.run,
  fields: {
    summary: result.run.plannedTotal,
    waitingRemovals: check.waiting.slice(0, MAX_ERRORS).map((w) => w.key),
    ...(check.retryInMs !== undefined ? { retryInMs: Math.ceil(check.retryInMs) } : {}),
  },
});

/**
 * A run that threw: interrupted by shutdown, a configuration problem (no retry helps), or a failure
 * that may pass. `where`: the engine's run, or the source (fetching or reading the checkout).
 */
export const judgeError = (error: unknown, signal: AbortSignal, where: 'engine' | 'source' = 'engine'): Judged => {
  const message = error instanceof Error ? error.message : String(error);
  if (signal.aborted || (error instanceof CortexSyncError && error.code === 'INTERRUPTED')) {
    const interrupted: Judged['result'] = 'interrupted';
    return {
      result: interrupted,
      reason: 'interrupted',
      verdict: { ok: false, retry: true },
      errors: [message],
      fields: {},
    };
  }
  const retry = !(error instanceof CortexSyncError && error.code === 'CONFIG');
  return {
    result: 'failed',
    reason: where === 'source' ? 'source-failed' : failureReason(error, false),
    verdict: { ok: false, retry },
    errors: [message],
    fields: {},
  };
};

/** The settings of a revision could not be resolved (`cortex-sync.yaml`, the environment): nothing ran. */
export const judgeInvalidConfig = (diagnostics: readonly Diagnostic[]): Judged => ({
  result: 'invalid',
  reason: 'invalid-config',
  verdict: { ok: false, retry: false },
  errors: diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic),
  warnings: warningLines(diagnostics),
  fields: {},
});
