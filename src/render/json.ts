/**
 * The machine-readable plan (`plan --output json`), exactly the shape in the interface document:
 * `{formatVersion: 1, summary, changes: [{kind, id, action, source?, diff}]}` plus additive
 * fields (`line`, `reason`, `adopt`, `unarchive`, `waitsFor`, top-level `status`, `refused`,
 * `diagnostics`: every diagnostic of the run, with file, line, column, code and severity). Writes of the
 * ownership record are changes of kind `inventory` (with `phase`: before or after the others).
 * Never includes the desired or live objects themselves.
 */
import type { Diagnostic, FieldDiff, JsonValue, Plan } from '../core/model.js';
import { planSteps, type ShownChange } from './steps.js';

interface JsonDiff {
  path: string;
  before?: JsonValue;
  after?: JsonValue;
}

interface JsonChange {
  kind: string;
  id: string;
  action: string;
  source?: string;
  line?: number;
  reason?: string;
  adopt?: boolean;
  unarchive?: boolean;
  /** Ownership-record writes (`kind: "inventory"`): before or after the changes. */
  phase?: string;
  waitsFor: string[];
  diff: JsonDiff[];
}

/** What became of the run: `refused` (plan errors) and `invalid` (manifests did not load) apply nothing. */
export type PlanStatus = 'planned' | 'refused' | 'invalid' | 'applied' | 'declined';

interface PlanJsonOptions {
  /** Every diagnostic of the run (loading, reads, references, plan); default: the plan's own. */
  diagnostics?: readonly Diagnostic[];
  status?: PlanStatus;
}

/** The plan as one JSON object (for `apply --output json` to add its results to). */
export function planJsonObject(plan: Plan, options: PlanJsonOptions = {}) {
  const diagnostics = options.diagnostics ?? plan.diagnostics;
  const status = options.status ?? (diagnostics.some((d) => d.severity === 'error') ? 'refused' : 'planned');
  return {
    formatVersion: 1,
    status,
    refused: status === 'refused' || status === 'invalid',
    summary: {
      create: plan.summary.create,
      update: plan.summary.update,
      delete: plan.summary.delete,
      archive: plan.summary.archive,
      noop: plan.summary.noop,
    },
    changes: planSteps(plan).map(toJsonChange),
    diagnostics: diagnostics.map(toJsonDiagnostic),
    // Who the plan acts for and the settings that widen what it may remove (additive).
    ...(plan.scope ? { deleteScope: plan.scope } : {}),
  };
}

/** The plan as one JSON document (2-space indented, trailing newline). */
export function renderPlanJson(plan: Plan, options: PlanJsonOptions = {}): string {
  return `${JSON.stringify(planJsonObject(plan, options), null, 2)}\n`;
}

function toJsonChange(c: ShownChange & { adopt?: boolean; unarchive?: boolean }): JsonChange {
  const out: JsonChange = { kind: c.kind, id: c.id, action: c.action, waitsFor: [], diff: [] };
  if (c.source !== undefined) out.source = c.source;
  if (c.line !== undefined) out.line = c.line;
  if (c.reason !== undefined) out.reason = c.reason;
  if (c.adopt) out.adopt = true;
  if (c.unarchive) out.unarchive = true;
  if (c.phase !== undefined) out.phase = c.phase;
  out.waitsFor = [...c.waitsFor];
  out.diff = c.diff.map(toJsonDiff);
  // Re-create to keep a stable key order: kind, id, action, source, line, reason, adopt, unarchive, phase, waitsFor, diff.
  const { waitsFor, diff, ...head } = out;
  return { ...head, waitsFor, diff };
}

function toJsonDiff(d: FieldDiff): JsonDiff {
  const out: JsonDiff = { path: d.path };
  if (d.before !== undefined) out.before = d.before;
  if (d.after !== undefined) out.after = d.after;
  return out;
}

function toJsonDiagnostic(d: Diagnostic): Diagnostic {
  const out: Diagnostic = { severity: d.severity, code: d.code, message: d.message };
  if (d.file !== undefined) out.file = d.file;
  if (d.line !== undefined) out.line = d.line;
  if (d.column !== undefined) out.column = d.column;
  if (d.field !== undefined) out.field = d.field;
  if (d.kind !== undefined) out.kind = d.kind;
  if (d.id !== undefined) out.id = d.id;
  return out;
}
