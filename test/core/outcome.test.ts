import { describe, expect, it } from 'vitest';
import type { Change, ChangeResult, Diagnostic, Plan, ReconcileResult } from '../../src/core/model.js';
import { type ExitOptions, exitCodeOf, runReportOf } from '../../src/core/outcome.js';

const change = (kind: Change['kind'], id: string, action: Change['action']): Change => ({
  kind,
  id,
  action,
  diff: [],
  waitsFor: [],
});

const plan = (changes: Change[], inventory: Plan['inventory'] = []): Plan => {
  const summary = { create: 0, update: 0, delete: 0, archive: 0, noop: 0 };
  for (const c of changes) summary[c.action] += 1;
  return { changes, diagnostics: [], summary, inventory };
};

/** The run report of a result, as a runtime reads it: exit code, summary, counts. */
const runOutcome = (result: ReconcileResult, options: ExitOptions & { command: 'plan' | 'apply' }) => {
  const report = runReportOf(result, { mode: options.command });
  return {
    exitCode: exitCodeOf(report, options),
    summaryLine: report.summaryLine,
    countsByKind: report.counts,
    changes: report.changes,
    interrupted: report.outcome === 'interrupted',
  };
};

const error: Diagnostic = { severity: 'error', code: 'schema', message: 'bad', file: 'a.yaml', line: 1 };
const recordWrite = { phase: 'before' as const, id: 'inv', action: 'update' as const, add: [], remove: [], reason: '' };

describe('the run report', () => {
  it('invalid manifests and refused plans exit 1 and say nothing was written', () => {
    const invalid = runOutcome({ status: 'invalid', diagnostics: [error] }, { command: 'plan' });
    expect(invalid).toMatchObject({ exitCode: 1, changes: false, countsByKind: {} });
    expect(invalid.summaryLine).toBe('Invalid manifests: 1 error; nothing was read or written.');
    const refused = runOutcome(
      { status: 'refused', plan: plan([change('entity', 'a', 'create')]), diagnostics: [error] },
      { command: 'apply' },
    );
    expect(refused.exitCode).toBe(1);
    expect(refused.summaryLine).toMatch(/^Plan refused: 1 error/);
  });

  it('a plan counts per kind; --detailed-exitcode exits 2 only when there is something to write', () => {
    const result: ReconcileResult = {
      status: 'planned',
      plan: plan([
        change('entity', 'a', 'create'),
        change('entity', 'b', 'noop'),
        change('catalog-page', 'p', 'update'),
        change('initiative', 'i', 'archive'),
      ]),
      diagnostics: [],
    };
    const outcome = runOutcome(result, { command: 'plan', detailedExitcode: true });
    expect(outcome.exitCode).toBe(2);
    expect(outcome.changes).toBe(true);
    expect(outcome.countsByKind.entity).toMatchObject({ create: 1, noop: 1, failed: 0, skipped: 0 });
    expect(outcome.countsByKind['catalog-page']).toMatchObject({ update: 1 });
    expect(outcome.countsByKind.initiative).toMatchObject({ archive: 1 });
    expect(outcome.summaryLine).toBe('Plan: 1 to create, 1 to update, 0 to delete, 1 to archive, 1 unchanged.');
    expect(runOutcome(result, { command: 'plan' }).exitCode).toBe(0);

    const noop: ReconcileResult = { status: 'planned', plan: plan([change('entity', 'b', 'noop')]), diagnostics: [] };
    expect(runOutcome(noop, { command: 'plan', detailedExitcode: true })).toMatchObject({
      exitCode: 0,
      changes: false,
    });
  });

  it('a plan whose only write is the ownership record still has changes', () => {
    const result: ReconcileResult = {
      status: 'planned',
      plan: plan([change('catalog-page', 'p', 'noop')], [{ ...recordWrite, phase: 'after' }]),
      diagnostics: [],
    };
    const outcome = runOutcome(result, { command: 'plan', detailedExitcode: true });
    expect(outcome).toMatchObject({ exitCode: 2, changes: true });
    expect(outcome.countsByKind.inventory).toMatchObject({ update: 1 });
    expect(outcome.summaryLine).toMatch(/1 ownership-record write planned\.$/);
  });

  const applied = (results: ChangeResult[], extra: Partial<{ interrupted: boolean }> = {}): ReconcileResult => ({
    status: 'applied',
    plan: plan(results.map((r) => r.change)),
    diagnostics: [],
    report: { results, writeRequests: results.length, durationMs: 10, ...extra },
  });

  it('an apply counts what was done, failed and skipped; any failure exits 1', () => {
    const ok = runOutcome(applied([{ change: change('entity', 'a', 'create'), outcome: 'ok' }]), { command: 'apply' });
    expect(ok).toMatchObject({ exitCode: 0, changes: true, interrupted: false });
    expect(ok.summaryLine).toBe('Apply complete: 1 created, 0 updated, 0 deleted, 0 archived, 0 unchanged.');

    const partial = runOutcome(
      applied([
        { change: change('entity-type', 't', 'create'), outcome: 'failed', error: 'HTTP 400' },
        { change: change('entity', 'a', 'create'), outcome: 'skipped', blockedBy: 'entity-type/t' },
        { change: change('entity', 'b', 'update'), outcome: 'ok' },
      ]),
      { command: 'apply' },
    );
    expect(partial.exitCode).toBe(1);
    expect(partial.countsByKind['entity-type']).toMatchObject({ create: 0, failed: 1 });
    expect(partial.countsByKind.entity).toMatchObject({ create: 0, update: 1, skipped: 1 });
    expect(partial.summaryLine).toBe(
      'Apply finished with problems: 0 created, 1 updated, 0 deleted, 0 archived, 0 unchanged; 1 failed, 1 not done.',
    );
  });

  it('an interrupted apply exits 130 for SIGINT and 143 for SIGTERM', () => {
    const result = applied(
      [
        { change: change('entity', 'a', 'create'), outcome: 'ok' },
        { change: change('entity', 'b', 'create'), outcome: 'skipped', error: 'interrupted' },
      ],
      { interrupted: true },
    );
    const int = runOutcome(result, { command: 'apply', stoppedBy: 'SIGINT' });
    expect(int).toMatchObject({ exitCode: 130, interrupted: true, changes: true });
    expect(int.summaryLine).toMatch(/^Apply interrupted: 1 created.*1 not done\.$/);
    expect(runOutcome(result, { command: 'apply', stoppedBy: 'SIGTERM' }).exitCode).toBe(143);
  });

  it('an apply the approve hook stopped exits 1, says why, and still shows the plan it did not apply', () => {
    const result: ReconcileResult = {
      status: 'planned',
      plan: plan([change('entity', 'a', 'create')], [recordWrite]),
      diagnostics: [],
    };
    const report = runReportOf(result, { mode: 'apply' });
    expect(report).toMatchObject({ outcome: 'not-approved', reason: 'not-approved', hasWork: true, pending: 2 });
    expect(exitCodeOf(report, { detailedExitcode: true })).toBe(1);
    expect(report.summaryLine).toBe(
      'Plan: 1 to create, 0 to update, 0 to delete, 0 to archive, 0 unchanged, 1 ownership-record write planned.',
    );
    // The same result from a plan is a plan: exit 2 under --detailed-exitcode.
    expect(exitCodeOf(runReportOf(result, { mode: 'plan' }), { detailedExitcode: true })).toBe(2);
  });

  it('a refused plan names the codes of its errors; a failed record write makes an apply partial', () => {
    const refused = runReportOf(
      {
        status: 'refused',
        plan: plan([change('entity', 'a', 'create')]),
        diagnostics: [error, { ...error, code: 'source-claimed' }, { ...error, severity: 'warning', code: 'w' }],
      },
      { mode: 'apply' },
    );
    expect(refused).toMatchObject({
      outcome: 'refused',
      reason: 'plan-errors',
      errorCodes: ['schema', 'source-claimed'],
      errors: 2,
      warnings: 1,
      hasWork: true,
      changes: false,
    });
    const partial = runReportOf(
      {
        status: 'applied',
        plan: plan([change('entity', 'a', 'create')], [recordWrite]),
        diagnostics: [],
        report: {
          results: [{ change: change('entity', 'a', 'create'), outcome: 'ok' }],
          inventory: [{ write: recordWrite, outcome: 'failed', error: 'HTTP 500' }],
          writeRequests: 2,
          durationMs: 1,
        },
      },
      { mode: 'apply' },
    );
    expect(partial).toMatchObject({
      outcome: 'partial',
      reason: 'step-failed',
      steps: { ok: 1, failed: 1, skipped: 0 },
    });
    expect(exitCodeOf(partial)).toBe(1);
    // The failed record write is counted: "0 failed" would be untrue.
    expect(partial.summaryLine).toBe(
      'Apply finished with problems: 1 created, 0 updated, 0 deleted, 0 archived, 0 unchanged; 1 failed, 0 not done.',
    );
  });
});
