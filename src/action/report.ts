/**
 * How a run's results reach the runner: diagnostics as annotations (paths from the repository
 * root), the outputs, the plan as a JSON file. Also the rooted paths and labels all messages use.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Diagnostic, Plan } from '../core/model.js';
import { printable } from '../core/printable.js';
import { renderPlanJson } from '../render/json.js';
import type { RunOutcome } from './engine.js';
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

export const OUTPUT_NAMES = [
  'changes',
  'create',
  'update',
  'delete',
  'archive',
  'plan-json',
  'plan-log',
  'exit-code',
] as const;

export const setOutputs = (
  runtime: ActionRuntime,
  outcome: RunOutcome,
  files: { planJson?: string; planLog?: string },
): void => {
  runtime.setOutput('changes', String(outcome.changes));
  runtime.setOutput('create', String(outcome.summary.create));
  runtime.setOutput('update', String(outcome.summary.update));
  runtime.setOutput('delete', String(outcome.summary.delete));
  runtime.setOutput('archive', String(outcome.summary.archive));
  runtime.setOutput('plan-json', files.planJson ?? '');
  runtime.setOutput('plan-log', files.planLog ?? '');
  runtime.setOutput('exit-code', String(outcome.exitCode));
};

/** Writes the JSON plan (interface.md's format) to `file`, creating its directory. */
export const writePlanJson = async (file: string, plan: Plan, redact: (s: string) => string): Promise<string> => {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, redact(renderPlanJson(plan)));
  return file;
};
