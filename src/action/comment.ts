/**
 * The plan as a pull-request comment (GitHub-flavoured Markdown, pure): counts first (totals and
 * per kind), the diagnostics, then one collapsible `<details>` per kind holding each change's field
 * diff. Every id, file name, field path, value and message goes through `untrusted.ts`. Cut to `limit` characters (GitHub's comment limit is 65,536)
 * with a pointer to the job summary, which gets the same rendering with a far larger limit.
 */
import type { Change, Diagnostic, FieldDiff, KindName, Plan } from '../core/model.js';
import { KIND_NAMES } from '../kinds/registry.js';
import { countOf } from '../core/plural.js';
import { locationOf, sortDiagnostics } from '../render/diagnostics.js';
import { scopeMarkdown } from '../render/markdown.js';
import { formatValue } from '../render/style.js';
import { planHasChanges, summaryLine } from '../render/text.js';
import { untrustedCode, untrustedMessage, untrustedText } from './untrusted.js';

/** GitHub refuses comments of 65,536 characters or more. */
export const COMMENT_LIMIT = 65_536;
/** What a plan comment aims for, leaving room for the markers and the footer. */
export const COMMENT_BUDGET = 60_000;
/** A job summary may hold 1 MiB per step. */
export const SUMMARY_BUDGET = 1_000_000;
const CELL_LIMIT = 300;
const ICON: Record<Change['action'], string> = { create: '🟢', update: '🟡', delete: '🔴', archive: '🟣', noop: '⚪' };
const ACTIONS = ['create', 'update', 'delete', 'archive'] as const;

export interface PlanCommentOptions {
  title: string;
  /** Characters the rendered text may use (markers and footer excluded). */
  limit: number;
  /** Where the full plan is, as Markdown (`[the job summary](…)`); shown when the plan is cut. */
  fullPlanAt?: string;
  /** List every change in one compact table first (the job summary: every change named, even when diffs are cut). */
  index?: boolean;
  /** The manifest root relative to the repository root (`.` or `catalog`): change sources are shown from the repository root. */
  dirFromRoot?: string;
}

/** `- **error** `file:line:col` message (`code`)`. */
export const diagnosticItem = (d: Diagnostic): string => {
  const where = locationOf(d);
  return `- **${d.severity}** ${where === '' ? '' : `${untrustedCode(where)} `}${untrustedMessage(d.message)} (${untrustedCode(d.code)})`;
};

const countsTable = (plan: Plan): string[] => {
  const s = plan.summary;
  const lines = [
    '| | create | update | delete | archive | unchanged |',
    '|---|---:|---:|---:|---:|---:|',
    `| **all** | ${s.create} | ${s.update} | ${s.delete} | ${s.archive} | ${s.noop} |`,
  ];
  for (const kind of KIND_NAMES) {
    const ofKind = plan.changes.filter((c) => c.kind === kind);
    if (ofKind.length === 0) continue;
    const n = (a: Change['action']) => ofKind.filter((c) => c.action === a).length;
    lines.push(`| ${kind} | ${ACTIONS.map(n).join(' | ')} | ${n('noop')} |`);
  }
  return lines;
};

const cell = (v: FieldDiff['before']): string => (v === undefined ? '' : untrustedCode(formatValue(v), CELL_LIMIT));

const changeSection = (c: Change, dir: string): string => {
  const source = c.source === undefined || dir === '.' || dir === '' ? c.source : `${dir}/${c.source}`;
  const where =
    source !== undefined ? ` — ${untrustedCode(`${source}${c.line !== undefined ? `:${c.line}` : ''}`)}` : '';
  const lines = [`#### ${ICON[c.action]} ${c.action} ${untrustedCode(c.id)}${where}`, ''];
  if (c.reason) lines.push(untrustedMessage(c.reason), '');
  if (c.diff.length > 0) {
    lines.push('| field | before | after |', '|---|---|---|');
    for (const d of c.diff)
      lines.push(`| ${untrustedCode(d.path === '' ? '(value)' : d.path)} | ${cell(d.before)} | ${cell(d.after)} |`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
};

const indexRow = (c: Change, dir: string): string => {
  const source =
    c.source === undefined ? '' : untrustedCode(dir === '.' || dir === '' ? c.source : `${dir}/${c.source}`);
  return `| ${ICON[c.action]} ${c.action} | ${c.kind} | ${untrustedCode(c.id)} | ${source} | ${c.diff.length} |\n`;
};

const kindOpen = (kind: KindName, n: number): string =>
  `<details>\n<summary><b>${kind}</b>: ${n} change${n === 1 ? '' : 's'}</summary>\n\n`;
const KIND_CLOSE = '</details>\n\n';

/** The plan (or a refused plan with its diagnostics) as Markdown of at most `options.limit` characters. */
export const renderPlanComment = (
  plan: Plan,
  diagnostics: readonly Diagnostic[],
  options: PlanCommentOptions,
): string => {
  const pending = plan.changes.filter((c) => c.action !== 'noop');
  // The settings that widen what the plan may remove, with where each came from, before anything else.
  const scope = scopeMarkdown(plan, { code: (raw) => untrustedCode(raw), text: (raw) => untrustedText(raw) });
  let out = `### ${options.title}\n\n${scope === '' ? '' : `${scope}\n`}${countsTable(plan).join('\n')}\n\n`;
  out += !planHasChanges(plan)
    ? 'No changes. The workspace matches the manifests.\n\n'
    : `**${summaryLine(plan.summary)}**\n\n`;
  for (const w of plan.inventory ?? []) {
    const what = [w.add.length ? `adds ${w.add.length}` : '', w.remove.length ? `removes ${w.remove.length}` : '']
      .filter(Boolean)
      .join(', ');
    out += `Ownership record ${untrustedCode(w.id)}: ${w.action} ${w.phase === 'before' ? 'before' : 'after'} the changes${what ? ` (${what})` : ''}.\n\n`;
  }
  const reserve = 400;
  const fits = (extra: string) => out.length + extra.length + KIND_CLOSE.length <= options.limit - reserve;

  const diags = sortDiagnostics(diagnostics);
  let shownDiags = 0;
  if (diags.length > 0) {
    const errors = diags.filter((d) => d.severity === 'error').length;
    out += `**${countOf(errors, 'error')}, ${countOf(diags.length - errors, 'warning')}**${errors > 0 ? ': nothing can be applied until they are fixed.' : ''}\n\n`;
    for (const d of diags) {
      const line = `${diagnosticItem(d)}\n`;
      if (!fits(line)) break;
      out += line;
      shownDiags += 1;
    }
    out += '\n';
  }

  let cut = shownDiags < diags.length;
  let indexed = 0;
  if (options.index && pending.length > 0 && !cut) {
    out += `<details>\n<summary>All ${countOf(pending.length, 'change')}</summary>\n\n| action | kind | id | file | fields |\n|---|---|---|---|---:|\n`;
    for (const c of pending) {
      const row = indexRow(c, options.dirFromRoot ?? '.');
      if (!fits(row)) break;
      out += row;
      indexed += 1;
    }
    out += `\n${KIND_CLOSE}`;
    cut = indexed < pending.length;
  }

  let shown = 0;
  for (const kind of KIND_NAMES) {
    if (cut) break;
    const ofKind = pending.filter((c) => c.kind === kind);
    if (ofKind.length === 0) continue;
    const open = kindOpen(kind, ofKind.length);
    if (!fits(open)) {
      cut = true;
      break;
    }
    out += open;
    for (const c of ofKind) {
      const section = changeSection(c, options.dirFromRoot ?? '.');
      if (!fits(section)) {
        cut = true;
        break;
      }
      out += section;
      shown += 1;
    }
    out += KIND_CLOSE;
  }
  if (cut) {
    const missing: string[] = [];
    if (shownDiags < diags.length) missing.push(countOf(diags.length - shownDiags, 'diagnostic'));
    if (options.index && indexed < pending.length) missing.push(countOf(pending.length - indexed, 'change'));
    else if (shown < pending.length) missing.push(`the field diffs of ${countOf(pending.length - shown, 'change')}`);
    const where = options.fullPlanAt ?? 'the job summary of this run';
    out += `> [!NOTE]\n> This plan is too long to show whole here: ${missing.join(' and ')} not shown. The full plan is in ${where}.\n\n`;
  }
  return out;
};
