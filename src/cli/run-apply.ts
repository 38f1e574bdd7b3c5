/**
 * `cortex-sync apply`: the plan is shown once, asked about on a terminal (`yes` goes on), then
 * applied; the report, the plan log and, when declined, what was written.
 */
import { join, resolve } from 'node:path';
import type { ApiClient } from '../api/types.js';
import type { Diagnostic, Plan, ReconcileResult } from '../core/model.js';
import { exitCodeOf, type PlanWork, pendingByKind } from '../core/outcome.js';
import { leaseTag } from '../engine/lease.js';
import { type FilePlanLog, openPlanLog, type PlanLogSink } from '../engine/plan-log.js';
import type { SyncConfig } from '../engine/config.js';
import type { PlannedPass } from '../engine/stages/run.js';
import { reconcile, type ReconcileInput } from '../engine/reconcile.js';
import { KIND_HANDLERS } from '../kinds/registry.js';
import { renderApplyReport, renderDiagnostics } from '../render/index.js';
import { manifestText, stoppedBy, writeLine } from '../runtime-io/io.js';
import { cancelledLine } from './cancelled.js';
import { askToApply, autoApproveFromEnvironment, canAsk, NOT_APPROVED } from './confirm.js';
import { renderApplyJson, renderRunPlan } from './output.js';
import { createApplyProgress } from './progress.js';
import { contextFor } from './engine-context.js';
import { type CommonOptions, configFor, rootMissing } from './run-common.js';
import { redactingPlanLog, withPrintableEvents } from './safe-output.js';
import type { CliSession } from './session.js';

export type ApplyOptions = CommonOptions & { dryRun?: boolean; planLog?: string; autoApprove?: boolean };

/** `apply FILE` (`apply-saved.ts`): the file's configuration and judgement; the saved plan was the review. */
export interface SavedApply {
  config: SyncConfig;
  onPlanned: (pass: PlannedPass) => Promise<void>;
  beforeWrites: (plan: Plan) => void;
  /** The judgement before the lease, by identity (`engine/saved-plan.ts` `savedPlanPrecheck`). */
  precheck: NonNullable<ReconcileInput['precheck']>;
}

/** What an apply the person at the terminal said no to left behind: its writes so far, the lease, the plan log. */
const declinedLine = (c: SyncConfig, fileLog: FilePlanLog | undefined, keptLog: string | undefined): string => {
  const leaseKey = c.sourceId ? `inventory/${leaseTag(c.sourceId)}` : undefined;
  return cancelledLine({
    writes: fileLog?.writesByObject() ?? new Map<string, number>(),
    ...(leaseKey ? { leaseKey } : {}),
    ...(keptLog ? { planLogFile: keptLog } : {}),
  });
};

export const runApply = async (o: ApplyOptions, session: CliSession, saved?: SavedApply): Promise<number> => {
  const { io, clock, stop, redaction, colorOut, colorErr } = session;
  // Approval first: a run no one approved and no one can be asked about reads and writes nothing.
  const fromEnvironment = autoApproveFromEnvironment(io.env);
  if (fromEnvironment.error !== undefined) {
    writeLine(io.stderr, `error: ${fromEnvironment.error}`);
    return 1;
  }
  const approved = saved !== undefined || o.autoApprove === true || fromEnvironment.value === true;
  if (!o.dryRun && !approved && !canAsk(io)) {
    if (!(await rootMissing(o, session))) writeLine(io.stderr, `error: ${NOT_APPROVED}.`);
    return 1;
  }
  const c = saved?.config ?? (await configFor(o, session));
  if (!c) return 1;
  const json = o.output === 'json';
  const made: { client?: ApiClient } = {};
  const progress = withPrintableEvents(
    createApplyProgress({
      stream: io.stderr,
      tty: Boolean(io.stderr.isTTY),
      clock,
      signal: stop,
      // The rate the client has learned from the server (below the configured one after 429s).
      ratePerMinute: () => made.client?.stats().currentPerMinute,
      bulkKinds: new Set(KIND_HANDLERS.filter((h) => h.write.applyBatch !== undefined).map((h) => h.kind)),
    }),
  );
  const ctx = contextFor(c, progress, session);
  made.client = ctx.client;
  progress.reading.start(() => ctx.client.stats());
  const logFile = o.planLog
    ? resolve(io.cwd, o.planLog)
    : join(io.cwd, '.cortex-sync', `plan-log-${new Date(clock.now()).toISOString().replace(/[:.]/g, '-')}.jsonl`);
  let fileLog: FilePlanLog | undefined;
  let planLog: PlanLogSink | undefined;
  let shownFirst = false;
  /** The plan and its diagnostics are shown once, before anything is written; on a terminal, only `yes` goes on. */
  const approve = async (plan: Plan, diagnostics: readonly Diagnostic[], work: PlanWork): Promise<boolean> => {
    saved?.beforeWrites(plan);
    progress.reading.finish();
    const result: ReconcileResult = { status: 'planned', plan, diagnostics: [...diagnostics] };
    if (!json) {
      if (diagnostics.length)
        writeLine(io.stderr, renderDiagnostics(diagnostics, { color: colorErr, source: manifestText(c.dir) }));
      writeLine(io.stdout, renderRunPlan(result, o.output, { color: colorOut }));
      shownFirst = true;
    }
    if (!work.hasWork) return true;
    const planOnStdout = !json && (o.output ?? 'text') === 'text';
    if (!approved && !(await askToApply(io, stop, { planOnStdout, flushed: session.flushed }))) return false;
    progress.start(pendingByKind(work));
    return true;
  };
  try {
    fileLog = o.dryRun ? undefined : openPlanLog(logFile, { under: io.cwd });
    planLog = fileLog ? redactingPlanLog(fileLog, redaction.redact) : undefined;
    const mode = o.dryRun ? 'plan' : 'apply';
    const result = await reconcile(
      {
        config: c,
        mode,
        approve,
        ...(planLog ? { planLog } : {}),
        ...(saved ? { onPlanned: saved.onPlanned, precheck: saved.precheck } : {}),
      },
      ctx,
    );
    progress.finish();
    // Closed before the report: the report names the plan log only when one was kept.
    await planLog?.close();
    const keptLog = fileLog?.kept() ? logFile : undefined;
    if (result.diagnostics.length && !shownFirst)
      writeLine(io.stderr, renderDiagnostics(result.diagnostics, { color: colorErr, source: manifestText(c.dir) }));
    const run = result.run;
    // Only the person at the terminal says no to an apply here.
    const declined = run.outcome === 'not-approved';
    const exitCode = exitCodeOf(run, { stoppedBy: stoppedBy(stop) });
    const report =
      result.status === 'applied' ? { ...result.report, ...(keptLog ? { planLogFile: keptLog } : {}) } : undefined;
    if (json) {
      writeLine(
        io.stdout,
        renderApplyJson(result, {
          ...(declined ? { status: 'declined' as const } : {}),
          ...(report ? { report } : {}),
          summaryLine: run.summaryLine,
          exitCode,
        }),
      );
    } else if (!shownFirst) {
      const shown = renderRunPlan(result, o.output, { color: colorOut });
      if (shown !== '') writeLine(io.stdout, shown);
    }
    if (declined) writeLine(io.stderr, declinedLine(c, fileLog, keptLog));
    // The text plan says it was refused; the other formats get the sentence on stderr.
    if (run.outcome === 'refused' && o.output !== 'text' && o.output !== undefined)
      writeLine(io.stderr, 'Nothing was applied: the plan has errors (see above).');
    if (!report || json) return exitCode;
    writeLine(
      io.stdout,
      renderApplyReport(report, {
        color: colorOut,
        summaryLine: run.summaryLine,
        outcome: run.outcome,
        runWrites: run.requests.writes,
      }),
    );
    return exitCode;
  } finally {
    progress.finish();
    await planLog?.close();
    await ctx.close();
  }
};
