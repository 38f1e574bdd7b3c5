/**
 * Turns what one run produced (a reconcile result, or the error it threw) into the record kept
 * for `/status`, the verdict for the runner (retry or not) and the plan's changes for metrics.
 */
import { CortexSyncError } from '../core/errors.js';
import type { Diagnostic, ReconcileResult } from '../core/model.js';
import type { RunRecord, RunResult } from './history.js';
import type { PlannedChange } from './metrics.js';
import type { RemovalCheck } from './removal-settle.js';
import type { RunVerdict } from './runner.js';

const MAX_ERRORS = 20;

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
  verdict: RunVerdict;
  errors: string[];
  changes?: PlannedChange[];
  fields: Partial<Pick<RunRecord, 'summary' | 'writes' | 'failedOperations' | 'waitingRemovals' | 'retryInMs'>>;
}

export const judgeResult = (result: ReconcileResult): Judged => {
  if (result.status === 'invalid') {
    return {
      result: 'invalid',
      verdict: { ok: false, retry: false },
      errors: errorLines(result.diagnostics),
      fields: {},
    };
  }
  const changes = result.plan.changes.map((c) => ({ kind: c.kind, action: c.action }));
  const summary = result.plan.summary;
  if (result.status === 'refused' || result.status === 'planned') {
    return {
      result: 'refused',
      verdict: { ok: false, retry: false },
      errors: errorLines(result.diagnostics),
      changes,
      fields: { summary },
    };
  }
  const failed = result.report.results.filter((r) => r.outcome !== 'ok');
  const inventoryFailed = (result.report.inventory ?? []).filter((r) => r.outcome !== 'ok');
  const errors = [
    ...failed.map((r) => `${r.change.kind} ${r.change.id}: ${r.error ?? r.outcome}`),
    ...inventoryFailed.map((r) => `ownership record: ${r.error ?? r.outcome}`),
  ].slice(0, MAX_ERRORS);
  const fields = { summary, writes: result.report.writeRequests, failedOperations: failed.length };
  if (result.report.interrupted) {
    return { result: 'interrupted', verdict: { ok: false, retry: true }, errors, changes, fields };
  }
  if (failed.length > 0 || inventoryFailed.length > 0) {
    return { result: 'partial', verdict: { ok: false, retry: true }, errors, changes, fields };
  }
  return { result: 'applied', verdict: { ok: true, retry: false }, errors: [], changes, fields };
};

/** A run whose removals wait for their second look: nothing was written, a run follows after `retryInMs`. */
export const judgeDeferred = (result: ReconcileResult, check: RemovalCheck): Judged => {
  const plan = 'plan' in result ? result.plan : undefined;
  return {
    result: 'deferred',
    verdict: { ok: true, retry: false },
    errors: [],
    ...(plan ? { changes: plan.changes.map((c) => ({ kind: c.kind, action: c.action })) } : {}),
    fields: {
      ...(plan ? { summary: plan.summary } : {}),
      waitingRemovals: check.waiting.slice(0, MAX_ERRORS).map((w) => w.key),
      ...(check.retryInMs !== undefined ? { retryInMs: Math.ceil(check.retryInMs) } : {}),
    },
  };
};

/** A run that threw: interrupted by shutdown, a configuration problem (no retry helps), or a failure that may pass. */
export const judgeError = (error: unknown, signal: AbortSignal): Judged => {
  const message = error instanceof Error ? error.message : String(error);
  if (signal.aborted || (error instanceof CortexSyncError && error.code === 'INTERRUPTED')) {
    return { result: 'interrupted', verdict: { ok: false, retry: true }, errors: [message], fields: {} };
  }
  const retry = !(error instanceof CortexSyncError && error.code === 'CONFIG');
  return { result: 'failed', verdict: { ok: false, retry }, errors: [message], fields: {} };
};
