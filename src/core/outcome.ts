/**
 * What a run of the engine comes to, for every runtime alike: the run report `reconcile` returns
 * (how it ended and why, whether the plan has work — ownership-record writes included — the counts
 * per kind and action, the stage durations, the requests sent) and the exit code a runtime reads
 * from it. The CLI prints the report, the GitHub Action sets its outputs from it, the watcher
 * records and exports it; none of them counts a plan or judges a result itself. Pure.
 */
import { ACTIONS, type Action, type Plan, type ReconcileResult, type StepKind } from './model.js';
import { countOf } from './plural.js';

/**
 * The named stages of `reconcile`, in the order they run: read and parse the manifests, read the
 * live workspace, check references and the source's binding, plan, take the apply lease (an apply
 * with work), re-check under it what the plan writes (the objects, read one by one, and the
 * ownership records; when they changed, `load` … `plan` run again under the lease), ask the
 * caller, write (the ownership record grows, the changes), and record what was done (the record
 * shrinks).
 */
export const STAGES = [
  'load',
  'read-live',
  'validate',
  'plan',
  'lease',
  'recheck',
  'approve',
  'apply',
  'record',
] as const;
export type StageName = (typeof STAGES)[number];

/** How long one stage took. A stage run again under the apply lease is listed again. */
export interface StageTiming {
  stage: StageName;
  durationMs: number;
  /** Run again once the apply lease was held. */
  underLease?: true;
  /** The stage threw (the run ended there). */
  failed?: true;
}

/**
 * Why a run that keeps the live state between runs (the watcher) read the whole workspace rather
 * than only what a change touched: there was nothing kept yet (`no-cache`: the first run, or one
 * after a failed, interrupted, deferred or refused run, or after removals were applied), the heal
 * interval asked for it (`heal`), what was kept is older than that (`cache-expired`), the
 * settings changed (`config-changed`), a manifest or an object in one was removed
 * (`manifest-removed`: removals are planned on a whole read only), an object other objects have
 * as their type changed (`type-changed`), a changed object's kind cannot be read by identity
 * (`no-single-read`), a changed object's kind could not be read at the last full read, so that
 * only a whole read judges it (`kind-unreadable`: a key that may not list scorecards), more
 * objects changed than reading them one by one is worth (`many-changes`), a manifest now names a
 * kind only read that was not read (`reference-kinds`), another source's ownership record or
 * this source's own changed since (`ownership-changed`), a changed object exists live but is not
 * in this source's record or carries another source's marker (`not-in-record`), one this
 * source manages is gone live (`gone-live`), or an object a changed manifest references (the
 * scorecard an Initiative names) is not as the kept state has it (`reference-changed`).
 */
export type FullReadReason =
  | 'no-cache'
  | 'heal'
  | 'cache-expired'
  | 'config-changed'
  | 'manifest-removed'
  | 'type-changed'
  | 'no-single-read'
  | 'kind-unreadable'
  | 'many-changes'
  | 'reference-kinds'
  | 'ownership-changed'
  | 'not-in-record'
  | 'gone-live'
  | 'reference-changed';

/**
 * Why an apply whose plan was re-checked under the lease read everything again: the objects it
 * writes or the ownership records differ from what the plan read (`changed`), the plan removes
 * objects (`removals`: decided on a whole read only), or a kind it writes cannot be read by
 * identity (`no-single-read`).
 */
export type RecheckFallback = 'changed' | 'removals' | 'no-single-read' | 'many-changes';

/** How a run read the live workspace (for the run report; absent when the run read nothing). */
export interface ReadReport {
  /** The read the plan was made on: the whole workspace, or only the objects a change touched. */
  path: 'full' | 'incremental';
  /** A run that keeps the live state between runs and read everything: why. */
  reason?: FullReadReason;
  /** `incremental`: the objects read by identity (the plan covers these). */
  objects?: number;
  /**
   * An apply with work, once it held the apply lease: `held` (planned while this process already
   * held it: nothing to re-check), `recheck` (what the plan writes was read again and had not
   * changed), `full` (read again in full and planned again; `fallback` says why).
   */
  underLease?: 'held' | 'recheck' | 'full';
  fallback?: RecheckFallback;
}

/** Objects per action (`noop`: unchanged). */
type ActionTally = Record<Action, number>;

interface ActionCounts extends ActionTally {
  /** Apply only: changes that were tried and failed. */
  failed: number;
  /** Apply only: changes not tried (a dependency failed, or the run was interrupted). */
  skipped: number;
}

/** What a plan would write: the one definition of "has work" every runtime reads. */
export interface PlanWork {
  /** A change other than `noop`, or an ownership-record write. */
  hasWork: boolean;
  /** How many: changes other than `noop` plus ownership-record writes. */
  pending: number;
  /** Per kind (`inventory`: the ownership record) and action, noops included. */
  planned: Partial<Record<StepKind, ActionTally>>;
}

/**
 * How a run ended: `invalid` (manifests did not load: nothing read or written), `refused` (plan
 * errors: nothing written), `planned` (a plan, or `apply --dry-run`), `not-approved` (an apply whose
 * approve hook said no: nothing written), `applied` (every step ok), `partial` (a step failed or
 * was skipped because of one), `interrupted` (stopped by the signal while writing).
 */
export type RunOutcomeName = 'invalid' | 'refused' | 'planned' | 'not-approved' | 'applied' | 'partial' | 'interrupted';

/** Why a run that returned ended as it did; stable, for machines. */
type ResultReason =
  | 'in-sync'
  | 'changes-planned'
  | 'changes-applied'
  | 'invalid-manifests'
  | 'plan-errors'
  | 'not-approved'
  | 'step-failed'
  | 'interrupted';

/** Why a run that threw ended (see `failureReason` in `engine/reconcile.ts`). */
export type FailureReason =
  'interrupted' | 'lease-held' | 'lease-lost' | 'config' | 'api-error' | 'stale-plan' | 'internal';

export type RunReason = ResultReason | FailureReason;

export interface RunReport extends PlanWork {
  mode: 'plan' | 'apply';
  outcome: RunOutcomeName;
  reason: ResultReason;
  /** The distinct codes of the run's error diagnostics (`invalid`, `refused`), sorted. */
  errorCodes: string[];
  errors: number;
  warnings: number;
  /** The plan's own objects per action (the ownership record left out); zero when there is no plan. */
  plannedTotal: ActionTally;
  /**
   * Per kind (`inventory`: the ownership record): for a run that wrote nothing, what the plan holds;
   * for an apply, what was done (`ok` per action), with `failed` and `skipped` beside. Kinds with
   * nothing are left out.
   */
  counts: Partial<Record<StepKind, ActionCounts>>;
  /** `counts` summed over the kinds, the ownership record left out. */
  total: ActionCounts;
  /** Apply only: the steps (changes and ownership-record writes) by how they ended. */
  steps: { ok: number; failed: number; skipped: number };
  /** The plan has writes (a run that wrote nothing), or the apply made some. */
  changes: boolean;
  /** One sentence: `Plan: 1 to create, …`, `Apply complete: …`, `Plan refused: 2 errors; …`. */
  summaryLine: string;
  /** Every stage that ran, in order. */
  stages: StageTiming[];
  /** API requests of the whole run (reads, the lease, writes; retries included). */
  requests: { sent: number; writes: number };
  durationMs: number;
  /** How the live workspace was read (absent when nothing was: invalid manifests). */
  read?: ReadReport;
}

/** What the engine measured of a run, beside its result. */
interface RunFacts {
  mode: 'plan' | 'apply';
  stages?: readonly StageTiming[];
  requests?: { sent: number; writes: number };
  durationMs?: number;
  read?: ReadReport;
}

const SIGNAL_EXIT = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT;

/** The exit code of a run stopped by `signal` (the shell's 128 + signal number). */
export const signalExitCode = (signal: StopSignal | undefined): number => SIGNAL_EXIT[signal ?? 'SIGINT'];

const emptyTally = (): ActionTally => ({ create: 0, update: 0, delete: 0, archive: 0, noop: 0 });
const emptyCounts = (): ActionCounts => ({ ...emptyTally(), failed: 0, skipped: 0 });

const writesIn = (c: ActionTally): number => c.create + c.update + c.delete + c.archive;

/** Totals over all kinds but the ownership record. */
const totalCounts = (counts: RunReport['counts']): ActionCounts => {
  const total = emptyCounts();
  for (const [kind, c] of Object.entries(counts)) {
    if (kind === 'inventory' || !c) continue;
    for (const key of Object.keys(total) as (keyof ActionCounts)[]) total[key] += c[key];
  }
  return total;
};

/** What `plan` would write (see `PlanWork`). */
export const planWork = (plan: Plan): PlanWork => {
  const planned: PlanWork['planned'] = {};
  const add = (kind: StepKind, action: Action): void => {
    const tally = (planned[kind] ??= emptyTally());
    tally[action] += 1;
  };
  for (const c of plan.changes) add(c.kind, c.action);
  for (const w of plan.inventory ?? []) add('inventory', w.action);
  const pending = Object.values(planned).reduce((n, tally) => n + (tally ? writesIn(tally) : 0), 0);
  return { hasWork: pending > 0, pending, planned };
};

/** The writes a plan would make per kind (`inventory`: the ownership record), for a progress estimate. */
export const pendingByKind = (work: PlanWork): Map<StepKind, number> =>
  new Map(
    (Object.entries(work.planned) as [StepKind, ActionTally][])
      .map(([kind, tally]): [StepKind, number] => [kind, writesIn(tally)])
      .filter(([, n]) => n > 0),
  );

const countsOf = (result: ReconcileResult, work: PlanWork): RunReport['counts'] => {
  const counts: RunReport['counts'] = {};
  const add = (kind: StepKind, key: keyof ActionCounts): void => {
    const c = (counts[kind] ??= emptyCounts());
    c[key] += 1;
  };
  if (result.status !== 'applied') {
    for (const [kind, tally] of Object.entries(work.planned) as [StepKind, ActionTally][])
      counts[kind] = { ...emptyCounts(), ...tally };
    return counts;
  }
  for (const c of result.plan.changes) if (c.action === 'noop') add(c.kind, 'noop');
  for (const r of result.report.results) add(r.change.kind, r.outcome === 'ok' ? r.change.action : r.outcome);
  for (const r of result.report.inventory ?? []) add('inventory', r.outcome === 'ok' ? r.write.action : r.outcome);
  return counts;
};

const actionPhrase: Record<Exclude<Action, 'noop'>, [string, string]> = {
  create: ['to create', 'created'],
  update: ['to update', 'updated'],
  delete: ['to delete', 'deleted'],
  archive: ['to archive', 'archived'],
};

const inventoryPhrase = (n: number, done: boolean): string =>
  n === 0 ? '' : `, ${countOf(n, 'ownership-record write')}${done ? '' : ' planned'}`;

const phrases = (total: ActionTally, tense: 0 | 1): string =>
  ACTIONS.filter((a): a is Exclude<Action, 'noop'> => a !== 'noop')
    .map((a) => `${total[a]} ${actionPhrase[a][tense]}`)
    .join(', ');

const outcomeOf = (result: ReconcileResult, mode: 'plan' | 'apply'): RunOutcomeName => {
  if (result.status !== 'applied')
    return result.status === 'planned' && mode === 'apply' ? 'not-approved' : result.status;
  const report = result.report;
  if (report.interrupted) return 'interrupted';
  const problem = (o: string) => o !== 'ok';
  return report.results.some((r) => problem(r.outcome)) || (report.inventory ?? []).some((r) => problem(r.outcome))
    ? 'partial'
    : 'applied';
};

const REASON: Record<Exclude<RunOutcomeName, 'planned' | 'applied'>, ResultReason> = {
  invalid: 'invalid-manifests',
  refused: 'plan-errors',
  'not-approved': 'not-approved',
  partial: 'step-failed',
  interrupted: 'interrupted',
};

/**
 * The report of a result: the one pure mapping every runtime reads through. `facts` are what only
 * the engine measured (stages, requests, duration); `mode` tells a plan from an apply the approve
 * hook stopped.
 */
export const runReportOf = (result: ReconcileResult, facts: RunFacts): RunReport => {
  const work: PlanWork =
    result.status === 'invalid' ? { hasWork: false, pending: 0, planned: {} } : planWork(result.plan);
  const outcome = outcomeOf(result, facts.mode);
  const counts = countsOf(result, work);
  const total = totalCounts(counts);
  const record = counts.inventory ?? emptyCounts();
  const errorDiagnostics = result.diagnostics.filter((d) => d.severity === 'error');
  const errors = errorDiagnostics.length;
  const wrote = writesIn(total) + writesIn(record) > 0;
  const applied = result.status === 'applied';
  const steps = applied
    ? {
        ok: writesIn(total) + writesIn(record),
        failed: total.failed + record.failed,
        skipped: total.skipped + record.skipped,
      }
    : { ok: 0, failed: 0, skipped: 0 };
  const plannedTotal = emptyTally();
  for (const [kind, tally] of Object.entries(work.planned))
    if (kind !== 'inventory' && tally) for (const a of ACTIONS) plannedTotal[a] += tally[a];

  let summaryLine: string;
  if (outcome === 'invalid')
    summaryLine = `Invalid manifests: ${countOf(errors, 'error')}; nothing was read or written.`;
  else if (outcome === 'refused') summaryLine = `Plan refused: ${countOf(errors, 'error')}; nothing was written.`;
  else if (!applied)
    summaryLine = `Plan: ${phrases(total, 0)}, ${total.noop} unchanged${inventoryPhrase(writesIn(record), false)}.`;
  else {
    const problems = steps.failed + steps.skipped;
    const head =
      outcome === 'interrupted'
        ? 'Apply interrupted'
        : problems === 0
          ? 'Apply complete'
          : 'Apply finished with problems';
    // Steps, as `problems` counts them: a failed ownership-record write is a failure too.
    const tail = problems === 0 ? '' : `; ${steps.failed} failed, ${steps.skipped} not done`;
    summaryLine = `${head}: ${phrases(total, 1)}, ${total.noop} unchanged${tail}${inventoryPhrase(writesIn(record), true)}.`;
  }

  return {
    mode: facts.mode,
    outcome,
    reason:
      outcome === 'planned'
        ? work.hasWork
          ? 'changes-planned'
          : 'in-sync'
        : outcome === 'applied'
          ? wrote
            ? 'changes-applied'
            : 'in-sync'
          : REASON[outcome],
    errorCodes: [...new Set(errorDiagnostics.map((d) => d.code))].sort(),
    errors,
    warnings: result.diagnostics.length - errors,
    ...work,
    plannedTotal,
    counts,
    total,
    steps,
    changes: outcome === 'invalid' || outcome === 'refused' ? false : applied ? wrote : work.hasWork,
    summaryLine,
    stages: [...(facts.stages ?? [])],
    requests: facts.requests ?? { sent: 0, writes: 0 },
    durationMs: facts.durationMs ?? 0,
    ...(facts.read !== undefined ? { read: { ...facts.read } } : {}),
  };
};

export interface ExitOptions {
  /** `plan --detailed-exitcode`: exit 2 when the plan has work. */
  detailedExitcode?: boolean;
  /** The signal that stopped the run, when one did: exit 128 + its number (129, 130, 143). */
  stoppedBy?: StopSignal;
}

/**
 * The exit code of a run (the README's "Exit codes"): 0 success; 1 invalid manifests, a refused plan, an apply
 * not approved or with a failed step; 2 a plan with work under `--detailed-exitcode`; 129/130/143
 * an apply stopped by SIGHUP/SIGINT/SIGTERM.
 */
export const exitCodeOf = (report: RunReport, options: ExitOptions = {}): number => {
  switch (report.outcome) {
    case 'planned':
      return options.detailedExitcode && report.mode === 'plan' && report.hasWork ? 2 : 0;
    case 'applied':
      return 0;
    case 'interrupted':
      return signalExitCode(options.stoppedBy);
    default:
      return 1;
  }
};
