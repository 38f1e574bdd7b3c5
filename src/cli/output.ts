/**
 * What `plan` and `apply` print on stdout, in each format. Every diagnostic of the run goes into
 * the JSON and the Markdown (a pull-request bot must not post a broken plan as clean), a refused
 * plan says so in all three formats, and the JSON and Markdown are printed even when the
 * manifests did not load.
 */
import type { ApplyReport, Plan, ReconcileResult } from '../core/model.js';
import { planJsonObject, type PlanStatus } from '../render/json.js';
import { renderPlanMarkdown } from '../render/markdown.js';
import { renderPlanText } from '../render/text.js';

type OutputFormat = 'text' | 'json' | 'markdown';

const EMPTY_PLAN: Plan = {
  changes: [],
  diagnostics: [],
  summary: { create: 0, update: 0, delete: 0, archive: 0, noop: 0 },
};

/** The plan of a result (an empty one when the manifests did not load), carrying every diagnostic of the run. */
const shownPlan = (result: ReconcileResult): Plan =>
  result.status === 'invalid'
    ? { ...EMPTY_PLAN, diagnostics: result.diagnostics }
    : { ...result.plan, diagnostics: result.diagnostics };

/** The plan in `format`; text shows no plan for invalid manifests (the diagnostics on stderr say why). */
export const renderRunPlan = (
  result: ReconcileResult,
  format: OutputFormat | undefined,
  options: { color: boolean },
): string => {
  const plan = shownPlan(result);
  if (format === 'json') return `${JSON.stringify(planJsonObject(plan, { status: result.status }), null, 2)}\n`;
  if (format === 'markdown')
    return renderPlanMarkdown(plan, {
      status: result.status === 'invalid' ? 'invalid' : result.status === 'refused' ? 'refused' : 'planned',
    });
  if (result.status === 'invalid') return '';
  return renderPlanText(plan, { color: options.color });
};

/** `apply --output json`: the plan and what became of each change, one object. */
export const renderApplyJson = (
  result: ReconcileResult,
  extra: { status?: PlanStatus; report?: ApplyReport; summaryLine?: string; exitCode: number },
): string => {
  const plan = shownPlan(result);
  const status = extra.status ?? result.status;
  const report = extra.report;
  const doc = {
    ...planJsonObject(plan, { status }),
    exitCode: extra.exitCode,
    ...(extra.summaryLine !== undefined ? { summaryLine: extra.summaryLine } : {}),
    ...(report
      ? {
          results: report.results
            .filter((r) => r.change.action !== 'noop')
            .map((r) => ({
              kind: r.change.kind,
              id: r.change.id,
              action: r.change.action,
              outcome: r.outcome,
              ...(r.error !== undefined ? { error: r.error } : {}),
              ...(r.blockedBy !== undefined ? { blockedBy: r.blockedBy } : {}),
              ...(r.diagnostics?.length ? { diagnostics: r.diagnostics } : {}),
            })),
          inventory: (report.inventory ?? []).map((r) => ({
            id: r.write.id,
            action: r.write.action,
            phase: r.write.phase,
            outcome: r.outcome,
            ...(r.error !== undefined ? { error: r.error } : {}),
          })),
          interrupted: Boolean(report.interrupted),
          writeRequests: report.writeRequests,
          durationMs: report.durationMs,
          ...(report.planLogFile !== undefined ? { planLogFile: report.planLogFile } : {}),
        }
      : {}),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
};
