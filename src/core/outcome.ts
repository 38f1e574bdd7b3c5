/**
 * What a run of the engine comes to, for every runtime alike: the exit code, the one-line
 * summary and the counts per kind that the CLI prints, the GitHub Action sets as outputs and the
 * watcher exports as metrics. Pure: a `ReconcileResult` in, numbers and a sentence out.
 */
import { ACTIONS, type Action, type ReconcileResult, type StepKind } from './model.js';
import { countOf } from './plural.js';

export interface ActionCounts {
  create: number;
  update: number;
  delete: number;
  archive: number;
  noop: number;
  /** Apply only: changes that were tried and failed. */
  failed: number;
  /** Apply only: changes not tried (a dependency failed, or the run was interrupted). */
  skipped: number;
}

export interface OutcomeOptions {
  command: 'plan' | 'apply';
  /** `plan --detailed-exitcode`: exit 2 when there are changes to apply. */
  detailedExitcode?: boolean;
  /** The signal that stopped the run, when one did: exit 128 + its number (130, 143). */
  stoppedBy?: 'SIGINT' | 'SIGTERM';
}

export interface RunOutcome {
  exitCode: number;
  summaryLine: string;
  /**
   * Per kind (and `inventory` for the ownership record): for a plan, what it would do; for an
   * apply, what was done (`ok`), with `failed` and `skipped` beside. Kinds with nothing are left out.
   */
  countsByKind: Partial<Record<StepKind, ActionCounts>>;
  /** The plan has writes (plan), or the apply made any (apply). */
  changes: boolean;
  /** The run was stopped by a signal before it finished. */
  interrupted: boolean;
}

const SIGNAL_EXIT: Record<NonNullable<OutcomeOptions['stoppedBy']>, number> = { SIGINT: 130, SIGTERM: 143 };

/** The exit code of a run stopped by `signal` (the shell's 128 + signal number). */
export const signalExitCode = (signal: OutcomeOptions['stoppedBy']): number => SIGNAL_EXIT[signal ?? 'SIGINT'];

export const emptyCounts = (): ActionCounts => ({
  create: 0,
  update: 0,
  delete: 0,
  archive: 0,
  noop: 0,
  failed: 0,
  skipped: 0,
});

const errorCount = (result: ReconcileResult): number => result.diagnostics.filter((d) => d.severity === 'error').length;

/** Totals over all kinds but the ownership record. */
export const totalCounts = (counts: RunOutcome['countsByKind']): ActionCounts => {
  const total = emptyCounts();
  for (const [kind, c] of Object.entries(counts)) {
    if (kind === 'inventory' || !c) continue;
    for (const key of Object.keys(total) as (keyof ActionCounts)[]) total[key] += c[key];
  }
  return total;
};

const countsOf = (result: ReconcileResult): RunOutcome['countsByKind'] => {
  const counts: RunOutcome['countsByKind'] = {};
  const add = (kind: StepKind, key: keyof ActionCounts): void => {
    const c = (counts[kind] ??= emptyCounts());
    c[key] += 1;
  };
  if (result.status === 'invalid') return counts;
  if (result.status !== 'applied') {
    for (const c of result.plan.changes) add(c.kind, c.action);
    for (const w of result.plan.inventory ?? []) add('inventory', w.action);
    return counts;
  }
  for (const c of result.plan.changes) if (c.action === 'noop') add(c.kind, 'noop');
  for (const r of result.report.results) add(r.change.kind, r.outcome === 'ok' ? r.change.action : r.outcome);
  for (const r of result.report.inventory ?? []) add('inventory', r.outcome === 'ok' ? r.write.action : r.outcome);
  return counts;
};

const writesIn = (c: ActionCounts): number => c.create + c.update + c.delete + c.archive;

const actionPhrase: Record<Exclude<Action, 'noop'>, [string, string]> = {
  create: ['to create', 'created'],
  update: ['to update', 'updated'],
  delete: ['to delete', 'deleted'],
  archive: ['to archive', 'archived'],
};

const inventoryPhrase = (n: number, done: boolean): string =>
  n === 0 ? '' : `, ${n} ownership-record write${n === 1 ? '' : 's'}${done ? '' : ' planned'}`;

/** Maps a result to its exit code, summary line and counts. */
export const runOutcome = (result: ReconcileResult, options: OutcomeOptions): RunOutcome => {
  const countsByKind = countsOf(result);
  const total = totalCounts(countsByKind);
  const inventory = countsByKind.inventory ?? emptyCounts();
  const interrupted = result.status === 'applied' && result.report.interrupted === true;

  if (result.status === 'invalid') {
    return {
      exitCode: 1,
      summaryLine: `Invalid manifests: ${countOf(errorCount(result), 'error')}; nothing was read or written.`,
      countsByKind,
      changes: false,
      interrupted,
    };
  }
  if (result.status === 'refused') {
    return {
      exitCode: 1,
      summaryLine: `Plan refused: ${countOf(errorCount(result), 'error')}; nothing was written.`,
      countsByKind,
      changes: false,
      interrupted,
    };
  }
  if (result.status === 'planned') {
    const changes = writesIn(total) + writesIn(inventory) > 0;
    const phrases = ACTIONS.filter((a): a is Exclude<Action, 'noop'> => a !== 'noop').map(
      (a) => `${total[a]} ${actionPhrase[a][0]}`,
    );
    return {
      exitCode: options.command === 'plan' && options.detailedExitcode && changes ? 2 : 0,
      summaryLine: `Plan: ${phrases.join(', ')}, ${total.noop} unchanged${inventoryPhrase(writesIn(inventory), false)}.`,
      countsByKind,
      changes,
      interrupted,
    };
  }
  const problems = total.failed + total.skipped + inventory.failed + inventory.skipped;
  const phrases = ACTIONS.filter((a): a is Exclude<Action, 'noop'> => a !== 'noop').map(
    (a) => `${total[a]} ${actionPhrase[a][1]}`,
  );
  const head = interrupted ? 'Apply interrupted' : problems === 0 ? 'Apply complete' : 'Apply finished with problems';
  const tail = problems === 0 ? '' : `; ${total.failed} failed, ${total.skipped} not done`;
  return {
    exitCode: interrupted ? signalExitCode(options.stoppedBy) : problems === 0 ? 0 : 1,
    summaryLine: `${head}: ${phrases.join(', ')}, ${total.noop} unchanged${tail}${inventoryPhrase(writesIn(inventory), true)}.`,
    countsByKind,
    changes: writesIn(total) + writesIn(inventory) > 0,
    interrupted,
  };
};
