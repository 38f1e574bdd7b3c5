/**
 * How a run's results reach the runner: diagnostics as annotations (paths from the repository
 * root), the outputs, the plan as a JSON file. Also the rooted paths and labels all messages use.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Diagnostic, Plan } from '../core/model.js';
import { exitCodeOf, type RunReport } from '../core/outcome.js';
import { printable } from '../core/printable.js';
import { renderPlanJson } from '../render/json.js';
import { SUMMARY_LIMIT } from './comment.js';
import type { ActionRuntime } from './runtime.js';

/** Diagnostics' files are relative to the manifest root; GitHub wants them relative to the repository root. */
export const rootDiagnostics = (diagnostics: readonly Diagnostic[], dirFromRoot: string): Diagnostic[] =>
  diagnostics.map((d) =>
    d.file === undefined || dirFromRoot === '.' || dirFromRoot === '' ? d : { ...d, file: `${dirFromRoot}/${d.file}` },
  );

/** Every diagnostic becomes an annotation at its file, line and column (its message made printable). */
export const annotate = (
  runtime: ActionRuntime,
  diagnostics: readonly Diagnostic[],
  redact: (s: string) => string,
): void => {
  for (const d of diagnostics) {
    runtime.annotate({
      severity: d.severity,
      message: redact(printable(`${d.message} [${d.code}]`)),
      title: `cortex-sync: ${printable(d.code)}`,
      ...(d.file !== undefined ? { file: d.file } : {}),
      ...(d.line !== undefined ? { line: d.line } : {}),
      ...(d.column !== undefined ? { column: d.column } : {}),
    });
  }
};

/** What the outputs say of a run. */
export interface ActionOutputs {
  exitCode: number;
  /** The plan has writes (a plan), or the apply made some. */
  changes: boolean;
  /** A plan: what it would do; an apply: what was done. */
  total: Pick<RunReport['total'], 'create' | 'update' | 'delete' | 'archive'>;
}

/**
 * The outputs of a run, read from its report; `exitCode` when the Action itself decided otherwise
 * (it refused to apply a plan that was not reviewed).
 */
export const outputsOf = (run: RunReport, exitCode = exitCodeOf(run)): ActionOutputs => ({
  exitCode,
  changes: run.changes,
  total: run.total,
});

/** The outputs when no plan was made (configuration errors, `validate`, a failure). */
export const noRunOutputs = (exitCode: number): ActionOutputs => ({
  exitCode,
  changes: false,
  total: { create: 0, update: 0, delete: 0, archive: 0 },
});

export const setOutputs = (
  runtime: ActionRuntime,
  outputs: ActionOutputs,
  files: { planJson?: string; planLog?: string },
): void => {
  runtime.setOutput('changes', String(outputs.changes));
  runtime.setOutput('create', String(outputs.total.create));
  runtime.setOutput('update', String(outputs.total.update));
  runtime.setOutput('delete', String(outputs.total.delete));
  runtime.setOutput('archive', String(outputs.total.archive));
  runtime.setOutput('plan-json', files.planJson ?? '');
  runtime.setOutput('plan-log', files.planLog ?? '');
  runtime.setOutput('exit-code', String(outputs.exitCode));
};

/** Writes the JSON plan (the format of the README's "The plan and the plan log") to `file`, creating its directory. */
export const writePlanJson = async (file: string, plan: Plan, redact: (s: string) => string): Promise<string> => {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, redact(renderPlanJson(plan)));
  return file;
};

const SUMMARY_CUT =
  '\n\n> [!NOTE]\n> Cut here: GitHub keeps at most 1 MiB of a job summary. The files the `plan-json` and `plan-log` outputs name hold all of it.\n';

/**
 * Appends to the job summary (redacted), never past GitHub's 1 MiB (bytes) for the step, which it
 * would drop whole: the part that would pass it is cut with a note, and later parts are dropped.
 */
export const summaryWriter = (runtime: ActionRuntime, redact: (s: string) => string) => {
  let used = 0;
  return async (markdown: string): Promise<void> => {
    let text = redact(markdown);
    const room = SUMMARY_LIMIT - used;
    if (Buffer.byteLength(text, 'utf8') > room) {
      const keep = room - Buffer.byteLength(SUMMARY_CUT, 'utf8');
      if (keep <= 0) return;
      // A cut inside a character leaves U+FFFD: dropped.
      text = `${Buffer.from(text, 'utf8')
        .subarray(0, keep)
        .toString('utf8')
        .replace(/\uFFFD+$/, '')}${SUMMARY_CUT}`;
    }
    used += Buffer.byteLength(text, 'utf8');
    await runtime.appendSummary(text);
  };
};
