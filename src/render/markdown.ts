/**
 * The plan as GitHub-flavoured Markdown, for a pull-request comment or a job summary: a heading,
 * a table of counts, the diagnostics, then one collapsible `<details>` per change with its reason
 * and a field table. Stays under `MARKDOWN_LIMIT` characters (GitHub's comment limit is 65,536)
 * by leaving out the remaining changes with a note.
 */
import type { Change, Diagnostic, FieldDiff, Plan, WidenedSetting } from '../core/model.js';
import { countOf } from '../core/plural.js';
import { printable } from '../core/printable.js';
import { locationOf, sortDiagnostics } from './diagnostics.js';
import { rawScopeValue, SETTING_FROM_LABEL, settingSaidBy } from './scope.js';
import { formatValue } from './style.js';
import { planSteps, type ShownChange } from './steps.js';
import { INVENTORY_KEYS_SHOWN, inventoryLine, planHasChanges, summaryLine } from './text.js';

export const MARKDOWN_LIMIT = 65_000;
/** Longest value shown in one table cell before it is cut with `…`. */
const CELL_LIMIT = 500;
const ICON: Record<Change['action'], string> = { create: '🟢', update: '🟡', delete: '🔴', archive: '🟣', noop: '⚪' };

/** Renders the plan; the result is at most `limit` characters and ends with a newline. */
export function renderPlanMarkdown(
  plan: Plan,
  options: {
    limit?: number;
    title?: string;
    /** Every diagnostic of the run (loading, reads, references, plan); default: the plan's own. */
    diagnostics?: readonly Diagnostic[];
    /** `invalid`: the manifests did not load, so there is no plan to show. */
    status?: 'planned' | 'refused' | 'invalid';
  } = {},
): string {
  const limit = options.limit ?? MARKDOWN_LIMIT;
  const allDiagnostics = options.diagnostics ?? plan.diagnostics;
  const errorCount = allDiagnostics.filter((d) => d.severity === 'error').length;
  const head: string[] = [`### ${options.title ?? 'cortex-sync plan'}`, ''];
  if (options.status === 'invalid')
    head.push(
      `> [!CAUTION]\n> **Refused**: the manifests did not load (${countOf(errorCount, 'error')}); nothing can be applied.`,
      '',
    );
  else if (errorCount > 0)
    head.push(
      `> [!CAUTION]\n> **Refused**: this plan has ${countOf(errorCount, 'error')}; apply would write nothing.`,
      '',
    );
  const scope = scopeMarkdown(plan);
  if (scope !== '') head.push(scope);
  const diags = sortDiagnostics(allDiagnostics);
  const diagBlocks = diagnosticBlocks(diags);
  const s = plan.summary;
  head.push(
    '| create | update | delete | archive | unchanged |',
    '|---:|---:|---:|---:|---:|',
    `| ${s.create} | ${s.update} | ${s.delete} | ${s.archive} | ${s.noop} |`,
    '',
  );
  if (options.status === 'invalid') head.push('No plan: fix the errors below first.', '');
  else if (!planHasChanges(plan)) head.push('No changes. The workspace matches the manifests.', '');
  else head.push(`**${summaryLine(plan.summary)}**${inventoryLine(plan) === '' ? '' : ` ${inventoryLine(plan)}`}`, '');

  const blocks: string[] = [...diagBlocks];
  const changes = planSteps(plan, INVENTORY_KEYS_SHOWN).filter((c) => c.action !== 'noop');
  for (const c of changes) blocks.push(changeBlock(c));

  let out = `${head.join('\n')}\n`;
  const noteReserve = 200;
  let shownChanges = 0;
  let shownDiags = 0;
  let cut = false;
  for (const block of blocks) {
    if (out.length + block.length + 1 > limit - noteReserve) {
      cut = true;
      break;
    }
    out += `${block}\n`;
    if (block.startsWith('<details>')) shownChanges += 1;
    else if (block.startsWith('- ')) shownDiags += 1;
  }
  if (cut) {
    const missing: string[] = [];
    if (shownDiags < diags.length) missing.push(countOf(diags.length - shownDiags, 'diagnostic'));
    if (shownChanges < changes.length) missing.push(countOf(changes.length - shownChanges, 'change'));
    out += `\n> [!NOTE]\n> Truncated to stay under the comment size limit: ${missing.join(' and ')} not shown. Run \`cortex-sync plan\` for the full plan.\n`;
  }
  return out.length > limit ? `${out.slice(0, limit - 2)}…\n` : out;
}

/** How a Markdown surface escapes what a repository or a record controls (the Action brings its own). */
export interface MarkdownEscapes {
  /** A code span of a raw string. */
  code: (raw: string) => string;
  /** Running text of a raw string. */
  text: (raw: string) => string;
}

const PLAIN_ESCAPES: MarkdownEscapes = {
  code: (raw) => code(printable(raw)),
  text: (raw) => inline(printable(raw).replace(/`/g, "'")),
};

/** A file line, variable or flag as code; a kind of source (Action input, default) in bold. */
const saidBy = (w: WidenedSetting, escapes: MarkdownEscapes): string => {
  const said = settingSaidBy(w);
  return said === SETTING_FROM_LABEL[w.from] ? `**${said}**` : escapes.code(w.name ?? said);
};

/** The plan's header as a Markdown block ending with a newline ('' when nothing widens removals): see `scope.ts`. */
export function scopeMarkdown(plan: Plan, escapes: MarkdownEscapes = PLAIN_ESCAPES): string {
  const scope = plan.scope;
  if (!scope || scope.widened.length === 0) return '';
  const owner =
    scope.sourceId === undefined
      ? ''
      : ` of source ${escapes.code(scope.sourceId)}${scope.origin !== undefined ? ` (origin ${escapes.code(scope.origin)})` : ''}`;
  const lines = [
    '> [!WARNING]',
    `> **Settings that widen what this plan may remove**${owner}:`,
    ...scope.widened.map(
      (w) =>
        `> - ${escapes.code(w.setting)}: ${escapes.code(rawScopeValue(w.value))} from ${saidBy(w, escapes)}: ${escapes.text(w.effect)}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** The diagnostics, first after the counts: errors are what a reviewer must see. */
function diagnosticBlocks(diags: readonly Diagnostic[]): string[] {
  if (diags.length === 0) return [];
  const errors = diags.filter((d) => d.severity === 'error').length;
  return [
    `**${countOf(errors, 'error')}, ${countOf(diags.length - errors, 'warning')}**${errors > 0 ? ': apply refuses this plan.' : ''}\n`,
    ...diags.map(diagnosticLine),
    '',
  ];
}

function diagnosticLine(d: Diagnostic): string {
  const where = locationOf(d);
  return `- **${d.severity}** ${where === '' ? '' : `${code(where)} `}${inline(printable(d.message))} (${code(printable(d.code))})`;
}

function changeBlock(c: ShownChange): string {
  const where =
    c.phase !== undefined
      ? ` — ownership record, ${c.phase} the changes`
      : c.source !== undefined
        ? ` — ${html(printable(c.source))}${c.line !== undefined ? `:${c.line}` : ''}`
        : '';
  const fields = c.diff.length > 0 ? ` (${c.diff.length} field${c.diff.length === 1 ? '' : 's'})` : '';
  const lines = [
    '<details>',
    `<summary>${ICON[c.action]} ${c.action} <code>${html(`${c.kind}/${printable(c.id)}`)}</code>${where}${fields}</summary>`,
    '',
  ];
  if (c.reason) lines.push(inline(printable(c.reason)), '');
  if (c.waitsFor.length > 0) lines.push(`After ${c.waitsFor.map((w) => code(printable(w))).join(', ')}`, '');
  if (c.diff.length > 0) {
    lines.push('| field | before | after |', '|---|---|---|');
    for (const d of c.diff) lines.push(diffRow(d));
    lines.push('');
  }
  lines.push('</details>', '');
  return lines.join('\n');
}

function diffRow(d: FieldDiff): string {
  const cell = (v: FieldDiff['before']): string => (v === undefined ? '' : code(cut(formatValue(v))));
  return `| ${code(d.path === '' ? '(value)' : printable(d.path))} | ${cell(d.before)} | ${cell(d.after)} |`;
}

const cut = (s: string): string => (s.length > CELL_LIMIT ? `${s.slice(0, CELL_LIMIT)}…` : s);

/**
 * A code span safe inside a table cell: the fence is longer than any backtick run inside, pipes
 * are escaped (GFM applies `\|` before inline parsing), newlines become spaces.
 */
export function code(text: string): string {
  const body = text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = body.startsWith('`') || body.endsWith('`') || body === '' ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** Plain text with Markdown/HTML specials escaped; `` `id` `` segments become safe code spans. */
export function inline(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith('`') && part.endsWith('`') && part.length >= 2
        ? code(part.slice(1, -1))
        : part.replace(/[\\*_[\]<>|#~]/g, '\\$&').replace(/\r?\n/g, ' '),
    )
    .join('');
}

/** HTML-escapes text for use inside `<summary>`. */
const html = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
