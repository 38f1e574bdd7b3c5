/**
 * The plan for a terminal (`plan --output text`), Terraform-like:
 *
 *   + create entity/payments-api  (.cortex/catalog/payments.yaml:1)
 *       + info.title = "Payments"
 *   ~ update entity/orders  (cortex.yaml:1)
 *       ~ info.x-cortex-groups: ["tier-1"] → ["tier-0"]
 *       after entity-type/database
 *
 *   Plan: 1 to create, 1 to update, 0 to delete, 0 to archive, 42 unchanged.
 */
import type { Action, FieldDiff, Plan, PlanSummary } from '../core/model.js';
import { planWork } from '../core/outcome.js';
import { countOf } from '../core/plural.js';
import { printable } from '../core/printable.js';
import { scopeTextLines } from './scope.js';
import { flagsFor, lookalikeFlags, planSteps, type ShownChange } from './steps.js';
import { formatValue, painter, printedPath, type Style, type StyleName } from './style.js';

/** Keys of an ownership-record write listed in text and Markdown before the rest are counted. */
export const INVENTORY_KEYS_SHOWN = 20;

export interface TextOptions {
  color: boolean;
  /** List unchanged objects too (hidden by default). */
  showNoop?: boolean;
}

const SYMBOL: Record<Action, string> = { create: '+', update: '~', delete: '-', archive: '!', noop: '=' };
const STYLE: Record<Action, StyleName> = {
  create: 'green',
  update: 'yellow',
  delete: 'red',
  archive: 'magenta',
  noop: 'dim',
};

/** The one-line summary: `Plan: 3 to create, 1 to update, 0 to delete, 0 to archive, 42 unchanged.` */
export function summaryLine(summary: PlanSummary): string {
  return `Plan: ${summary.create} to create, ${summary.update} to update, ${summary.delete} to delete, ${summary.archive} to archive, ${summary.noop} unchanged.`;
}

/** `1 write of the ownership record.` when the plan writes it, else empty. */
export const inventoryLine = (plan: Plan): string => {
  const n = (plan.inventory ?? []).length;
  return n === 0 ? '' : `And ${n} write${n === 1 ? '' : 's'} of the ownership record (inventory).`;
};

/** Renders the plan for a terminal; ends with a newline. */
export function renderPlanText(plan: Plan, options: TextOptions): string {
  const paint = painter(options.color);
  const lines: string[] = scopeTextLines(plan).map((line) => paint('yellow', line));
  const shown = planSteps(plan, INVENTORY_KEYS_SHOWN).filter((c) => c.action !== 'noop' || options.showNoop);
  const errors = plan.diagnostics.filter((d) => d.severity === 'error').length;
  const flags = lookalikeFlags(plan.diagnostics);
  if (!planWork(plan).hasWork) {
    for (const c of shown) lines.push(...changeLines(c, paint, flagsFor(flags, c)));
    // A refused plan says only that: "No changes" would read as the workspace being in sync.
    if (lines.length > 0) lines.push('');
    if (errors === 0) lines.push(paint('green', 'No changes. The workspace matches the manifests.'));
  } else {
    lines.push('cortex-sync will perform the following actions:', '');
    for (const c of shown) lines.push(...changeLines(c, paint, flagsFor(flags, c)));
    lines.push('', paint('bold', summaryLine(plan.summary)));
    if (inventoryLine(plan) !== '') lines.push(paint('bold', inventoryLine(plan)));
  }
  if (errors > 0)
    lines.push(paint('red', `Plan refused: ${countOf(errors, 'error')} in this plan; apply would write nothing.`));
  return `${lines.join('\n')}\n`;
}

function changeLines(
  c: ShownChange,
  paint: (style: Style, text: string) => string,
  flags: readonly string[],
): string[] {
  const head = `${SYMBOL[c.action]} ${c.action} ${c.kind}/${printable(c.id)}`;
  const where =
    c.phase !== undefined
      ? `  (ownership record, ${c.phase} the changes)`
      : c.source !== undefined
        ? `  (${printable(c.source)}${c.line !== undefined ? `:${c.line}` : ''})`
        : '';
  const lines = [`  ${paint([STYLE[c.action], 'bold'], head)}${paint('dim', where)}`];
  // Beside the change: an id a reader cannot tell from another one of this plan.
  for (const flag of flags) lines.push(`      ${paint(['yellow', 'bold'], `⚠ ${printable(flag)}`)}`);
  if (c.reason) lines.push(`      ${paint('cyan', printable(c.reason))}`);
  for (const d of c.diff) lines.push(`      ${fieldLine(d, paint)}`);
  if (c.waitsFor.length > 0) lines.push(`      ${paint('dim', `after ${c.waitsFor.map(printable).join(', ')}`)}`);
  return lines;
}

/** `+ path = value`, `- path = value` or `~ path: before → after`. */
export function fieldLine(d: FieldDiff, paint: (style: Style, text: string) => string = (_s, t) => t): string {
  const path = printedPath(d.path);
  if (d.before === undefined) return paint('green', `+ ${path} = ${formatValue(d.after)}`);
  if (d.after === undefined) return paint('red', `- ${path} = ${formatValue(d.before)}`);
  return `${paint('yellow', `~ ${path}:`)} ${paint('red', formatValue(d.before))} → ${paint('green', formatValue(d.after))}`;
}
