/**
 * What the watcher keeps and says of a finished run: its record for `/status` (every text the
 * repository or the API controls escaped, no secret), its log line, and its warnings logged once
 * per revision.
 */
import type { ChangedObjects, RunRecord } from './history.js';
import type { Logger } from './log.js';
import type { Judged } from './run-record.js';
import type { Trigger } from './runner.js';

/** A line of text as it may be shown: no secret, no control character. */
type Shown = (text: string) => string;

/** What a run changed, its names escaped (they come from the repository). */
const shownChanged = (changed: ChangedObjects, shown: Shown): ChangedObjects =>
  Object.fromEntries(
    Object.entries(changed).map(([action, named]) => [action, { count: named.count, first: named.first.map(shown) }]),
  );

/** The record of a run for `/status` and the metrics. */
export const runRecordOf = (
  run: { runId: string; trigger: Trigger; revision: string | undefined; startedAt: number; durationMs: number },
  judged: Judged,
  shown: Shown,
): RunRecord => {
  const { waitingRemovals, changed, ...fields } = judged.fields;
  return {
    runId: run.runId,
    trigger: run.trigger,
    ...(run.revision ? { revision: shown(run.revision) } : {}),
    startedAt: new Date(run.startedAt).toISOString(),
    durationMs: run.durationMs,
    result: judged.result,
    reason: judged.reason,
    ...fields,
    ...(waitingRemovals ? { waitingRemovals: waitingRemovals.map(shown) } : {}),
    ...(changed ? { changed: shownChanged(changed, shown) } : {}),
    errors: judged.errors.map(shown),
    ...(judged.report?.read ? { read: judged.report.read } : {}),
  };
};

/** The run's one log line: deferred, applied, nothing to change, or what went wrong. */
export const logRun = (log: Logger, record: RunRecord, judged: Judged, pending: number): void => {
  const logged = {
    runId: record.runId,
    ...(record.revision ? { revision: record.revision } : {}),
    trigger: record.trigger,
    result: record.result,
    reason: record.reason,
    durationMs: record.durationMs,
    ...(record.summary ? { summary: record.summary } : {}),
    ...(record.writes !== undefined ? { writes: record.writes } : {}),
    ...(record.changed ? { changed: record.changed } : {}),
    ...(judged.report ? { requests: judged.report.requests.sent } : {}),
    ...(record.read ? { read: record.read } : {}),
    ...(record.waitingRemovals ? { waitingRemovals: record.waitingRemovals, retryInMs: record.retryInMs } : {}),
    ...(record.errors.length ? { errors: record.errors } : {}),
  };
  if (record.result === 'deferred')
    log.info('run waits to confirm removals: their manifests must stay missing', logged);
  else if (judged.verdict.ok) log.info(pending > 0 ? 'run applied changes' : 'run found nothing to change', logged);
  else log.error(`run ${record.result}`, logged);
};

/**
 * Each warning of a revision is logged once, with its `file:line`: a run of the same revision
 * (a retry, the heal interval) logs only the warnings the previous run did not have; another
 * revision logs all of its own.
 */
export class WarningLog {
  private warned: { revision: string; lines: Set<string> } | undefined;

  constructor(
    private readonly log: Logger,
    private readonly shown: Shown,
  ) {}

  note(runId: string, revision: string | undefined, warnings: readonly string[] | undefined): void {
    if (warnings === undefined) return;
    const at = revision ?? '';
    const seen = this.warned?.revision === at ? this.warned.lines : new Set<string>();
    for (const line of new Set(warnings))
      if (!seen.has(line))
        this.log.warn('manifest warning', {
          runId,
          ...(revision ? { revision: this.shown(revision) } : {}),
          warning: this.shown(line),
        });
    this.warned = { revision: at, lines: new Set(warnings) };
  }
}
