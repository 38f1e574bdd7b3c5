/**
 * The plan as GitHub-flavoured Markdown, the one renderer for every Markdown surface: `plan
 * --output markdown` (pasted into pull requests and job summaries), the Action's plan comment and
 * its job summary. In order: a heading, a caution when the plan is refused, the settings that
 * widen removals (`Plan.scope`), the counts (all, then per kind), the summary and the
 * ownership-record writes, the diagnostics, an optional index of every change, then one
 * collapsible `<details>` per kind holding each change's reason, order and field diff.
 *
 * Every string a repository or a record controls (ids, file names, field paths, values, reasons,
 * messages, source ids, origins, patterns) goes through `untrusted.ts`: it can form no marker,
 * HTML, mention, reference or link. The size budget is a parameter (`limit`): the CLI stays under
 * GitHub's comment limit, the Action passes the room its comment or summary leaves; what does not
 * fit is cut at a section boundary with a note saying what is missing and where the full plan is.
 */
import type { Change, Diagnostic, FieldDiff, Plan, StepKind, WidenedSetting } from '../core/model.js';
import { planWork } from '../core/outcome.js';
import { countOf } from '../core/plural.js';
import { locationOf, sortDiagnostics } from './diagnostics.js';
import { rawScopeValue, SETTING_FROM_LABEL, settingSaidBy } from './scope.js';
import { flagsFor, lookalikeFlags, planSteps, type ShownChange } from './steps.js';
import { formatValue, printedPath } from './style.js';
import { INVENTORY_KEYS_SHOWN, summaryLine } from './text.js';
import { printedCode, untrustedCode, untrustedMessage, untrustedText } from './untrusted.js';

/** The default budget: under GitHub's comment limit (65,536 characters). */
export const MARKDOWN_LIMIT = 65_000;
/** Longest value shown in one table cell (characters of its printable form) before it is cut with `…`. */
const CELL_LIMIT = 300;
/** Kept free for the note that says what was cut. */
const NOTE_RESERVE = 400;
const ICON: Record<Change['action'], string> = { create: '🟢', update: '🟡', delete: '🔴', archive: '🟣', noop: '⚪' };
const WRITES = ['create', 'update', 'delete', 'archive'] as const;

export interface MarkdownPlanOptions {
  /** Characters the result may use (default `MARKDOWN_LIMIT`). */
  limit?: number;
  /** The heading (default `cortex-sync plan`). */
  title?: string;
  /** Every diagnostic of the run (loading, reads, references, plan); default: the plan's own. */
  diagnostics?: readonly Diagnostic[];
  /** `invalid`: the manifests did not load, so there is no plan to show. */
  status?: 'planned' | 'refused' | 'invalid';
  /** List every change in one compact table first (a job summary: every change named, even when diffs are cut). */
  index?: boolean;
  /** The manifest root relative to the repository root (`.` or `catalog`): change sources are shown from the repository root. */
  dirFromRoot?: string;
  /** Where the full plan is, as Markdown; said when the plan is cut. */
  fullPlanAt?: string;
  /** What `limit` counts: characters (default; GitHub's comment limit) or UTF-8 bytes (a job summary's 1 MiB). */
  unit?: 'characters' | 'bytes';
}

/** `- **error** `file:line:col` message (`code`)`. */
export const diagnosticItem = (d: Diagnostic): string => {
  const where = locationOf(d);
  return `- **${d.severity}** ${where === '' ? '' : `${untrustedCode(where)} `}${untrustedMessage(d.message)} (${untrustedCode(d.code)})`;
};

/** A file line, variable or flag as code; a kind of source (Action input, default) in bold. */
const saidBy = (w: WidenedSetting): string => {
  const said = settingSaidBy(w);
  return said === SETTING_FROM_LABEL[w.from] ? `**${said}**` : untrustedCode(w.name ?? said);
};

/** The plan's header as a Markdown block ending with a newline ('' when nothing widens removals): see `scope.ts`. */
function scopeMarkdown(plan: Plan): string {
  const scope = plan.scope;
  if (!scope || scope.widened.length === 0) return '';
  const owner =
    scope.sourceId === undefined
      ? ''
      : ` of source ${untrustedCode(scope.sourceId)}${scope.origin !== undefined ? ` (origin ${untrustedCode(scope.origin)})` : ''}`;
  const lines = [
    '> [!WARNING]',
    `> **Settings that widen what this plan may remove**${owner}:`,
    ...scope.widened.map(
      (w) =>
        `> - ${untrustedCode(w.setting)}: ${untrustedCode(rawScopeValue(w.value))} from ${saidBy(w)}: ${untrustedText(w.effect)}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** The kinds of the plan's changes, in the order they first appear. */
const kindsOf = (changes: readonly { kind: StepKind }[]): StepKind[] => [...new Set(changes.map((c) => c.kind))];

const countsTable = (plan: Plan): string[] => {
  const s = plan.summary;
  const lines = [
    '| | create | update | delete | archive | unchanged |',
    '|---|---:|---:|---:|---:|---:|',
    `| **all** | ${s.create} | ${s.update} | ${s.delete} | ${s.archive} | ${s.noop} |`,
  ];
  const { planned } = planWork(plan);
  for (const kind of kindsOf(plan.changes)) {
    const tally = planned[kind];
    if (tally) lines.push(`| ${kind} | ${WRITES.map((a) => tally[a]).join(' | ')} | ${tally.noop} |`);
  }
  return lines;
};

const sourceOf = (c: ShownChange, dir: string): string | undefined =>
  c.source === undefined || dir === '.' || dir === '' ? c.source : `${dir}/${c.source}`;

/** A value as JSON (`formatValue` writes it printable: nothing is escaped twice). */
const cell = (v: FieldDiff['before']): string => (v === undefined ? '' : printedCode(formatValue(v), CELL_LIMIT));

const changeSection = (c: ShownChange, dir: string, flags: readonly string[]): string => {
  const source = sourceOf(c, dir);
  const where =
    c.phase !== undefined
      ? ` — ownership record, ${c.phase} the changes`
      : source !== undefined
        ? ` — ${untrustedCode(`${source}${c.line !== undefined ? `:${c.line}` : ''}`)}`
        : '';
  const lines = [`#### ${ICON[c.action]} ${c.action} ${untrustedCode(c.id)}${where}`, ''];
  for (const flag of flags) lines.push(`> [!WARNING]\n> ⚠️ ${untrustedMessage(flag)}`, '');
  if (c.reason) lines.push(untrustedMessage(c.reason), '');
  if (c.waitsFor.length > 0) lines.push(`After ${c.waitsFor.map((w) => untrustedCode(w)).join(', ')}`, '');
  if (c.diff.length > 0) {
    lines.push('| field | before | after |', '|---|---|---|');
    for (const d of c.diff)
      lines.push(`| ${printedCode(printedPath(d.path))} | ${cell(d.before)} | ${cell(d.after)} |`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
};

const indexRow = (c: ShownChange, dir: string, flagged: boolean): string => {
  const source = sourceOf(c, dir);
  return `| ${ICON[c.action]} ${c.action} | ${c.kind} | ${untrustedCode(c.id)}${flagged ? ' ⚠️ look-alike' : ''} | ${source === undefined ? '' : untrustedCode(source)} | ${c.diff.length} |\n`;
};

const kindOpen = (kind: StepKind, n: number): string =>
  `<details>\n<summary><b>${kind}</b>: ${n} change${n === 1 ? '' : 's'}</summary>\n\n`;
const KIND_CLOSE = '</details>\n\n';

/** Removals first, then updates, then creates (what is cut is the least important); apply order within each. */
const RANK: Record<Change['action'], number> = { delete: 0, archive: 1, update: 2, create: 3, noop: 4 };
const byImportance = (steps: readonly ShownChange[]): ShownChange[] =>
  steps
    .map((c, i) => ({ c, i }))
    .sort((a, b) => RANK[a.c.action] - RANK[b.c.action] || a.i - b.i)
    .map(({ c }) => c);

const isRemoval = (c: ShownChange): boolean => c.action === 'delete' || c.action === 'archive';

/** `1 create and 3 updates`: the changes of `steps` by action, in order of importance. */
const byAction = (steps: readonly ShownChange[]): string => {
  const parts = (['delete', 'archive', 'update', 'create'] as const)
    .map((a) => [a, steps.filter((c) => c.action === a).length] as const)
    .filter(([, n]) => n > 0)
    .map(([a, n]) => countOf(n, a));
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1) ?? ''}`;
};

const removalItem = (c: ShownChange, dir: string, flags: readonly string[]): string => {
  const source = sourceOf(c, dir);
  const flagged = flags.map((f) => ` ⚠️ ${untrustedMessage(f)}`).join('');
  return `- ${ICON[c.action]} ${c.action} ${untrustedCode(c.id)} (${c.kind}${source !== undefined && c.phase === undefined ? `, ${untrustedCode(source)}` : ''})${flagged}\n`;
};

/** How a budget is counted: characters (a comment) or UTF-8 bytes (a job summary, limited to 1 MiB). */
const sizeIn = (unit: MarkdownPlanOptions['unit']): ((s: string) => number) =>
  unit === 'bytes' ? (s) => Buffer.byteLength(s, 'utf8') : (s) => s.length;

/** `text` cut to at most `limit` (as `size` counts), ending with `…`. */
const cutTo = (text: string, limit: number, size: (s: string) => number): string => {
  if (size(text) <= limit) return text;
  let lo = 0;
  let hi = Math.min(text.length, limit);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (size(`${text.slice(0, mid)}…\n`) <= limit) lo = mid;
    else hi = mid - 1;
  }
  // Never half a surrogate pair.
  return `${text.slice(0, lo).replace(/[\ud800-\udbff]$/, '')}…\n`;
};

/** The plan's head: heading, refusal, widened settings, counts, summary line, ownership-record writes. */
const headOf = (plan: Plan, options: MarkdownPlanOptions, errors: number): string => {
  const invalid = options.status === 'invalid';
  let out = `### ${options.title ?? 'cortex-sync plan'}\n\n`;
  if (invalid)
    out += `> [!CAUTION]\n> **Refused**: the manifests did not load (${countOf(errors, 'error')}); nothing can be applied.\n\n`;
  else if (errors > 0)
    out += `> [!CAUTION]\n> **Refused**: this plan has ${countOf(errors, 'error')}; apply would write nothing.\n\n`;
  // The settings that widen what the plan may remove, with where each came from, before the counts.
  const scope = scopeMarkdown(plan);
  out += `${scope === '' ? '' : `${scope}\n`}${countsTable(plan).join('\n')}\n\n`;
  out += invalid
    ? 'No plan: fix the errors below first.\n\n'
    : !planWork(plan).hasWork
      ? errors > 0
        ? ''
        : 'No changes. The workspace matches the manifests.\n\n'
      : `**${summaryLine(plan.summary)}**\n\n`;
  for (const w of plan.inventory ?? []) {
    const what = [w.add.length ? `adds ${w.add.length}` : '', w.remove.length ? `removes ${w.remove.length}` : '']
      .filter(Boolean)
      .join(', ');
    out += `Ownership record ${untrustedCode(w.id)}: ${w.action} ${w.phase} the changes${what ? ` (${what})` : ''}.\n\n`;
  }
  return out;
};

/**
 * The plan (or a refused plan with its diagnostics) as Markdown of at most `limit` characters (or
 * bytes). Every delete and archive is listed right after the counts, before anything that may be
 * cut; then the diagnostics, the index and the diffs, removals first and creates last.
 */
export function renderPlanMarkdown(plan: Plan, options: MarkdownPlanOptions = {}): string {
  const limit = options.limit ?? MARKDOWN_LIMIT;
  const size = sizeIn(options.unit);
  const dir = options.dirFromRoot ?? '.';
  const diags = sortDiagnostics(options.diagnostics ?? plan.diagnostics);
  const errors = diags.filter((d) => d.severity === 'error').length;
  const flags = lookalikeFlags(diags);
  let out = '';
  let used = 0;
  const add = (text: string) => {
    out += text;
    used += size(text);
  };
  const fits = (extra: string) => used + size(extra) + KIND_CLOSE.length <= limit - NOTE_RESERVE;
  add(headOf(plan, options, errors));

  // The steps an apply takes, most important first; the ownership record's writes last.
  const steps = byImportance(planSteps(plan, INVENTORY_KEYS_SHOWN).filter((c) => c.action !== 'noop'));
  const removals = steps.filter(isRemoval);
  let removalsShown = 0;
  if (removals.length > 0) {
    add(`**Removed by this plan** (${removals.length}):\n\n`);
    for (const c of removals) {
      const item = removalItem(c, dir, flagsFor(flags, c));
      if (!fits(item)) break;
      add(item);
      removalsShown += 1;
    }
    add('\n');
  }

  let shownDiags = 0;
  if (diags.length > 0) {
    add(
      `**${countOf(errors, 'error')}, ${countOf(diags.length - errors, 'warning')}**${errors > 0 ? ': nothing can be applied until they are fixed.' : ''}\n\n`,
    );
    for (const d of diags) {
      const line = `${diagnosticItem(d)}\n`;
      if (!fits(line)) break;
      add(line);
      shownDiags += 1;
    }
    add('\n');
  }

  const kinds = kindsOf(steps).sort((a, b) => Number(a === 'inventory') - Number(b === 'inventory'));
  let cut = shownDiags < diags.length || removalsShown < removals.length;
  let indexed = 0;
  if (options.index && steps.length > 0 && !cut) {
    add(
      `<details>\n<summary>All ${countOf(steps.length, 'change')}</summary>\n\n| action | kind | id | file | fields |\n|---|---|---|---|---:|\n`,
    );
    for (const c of steps) {
      const row = indexRow(c, dir, flagsFor(flags, c).length > 0);
      if (!fits(row)) break;
      add(row);
      indexed += 1;
    }
    add(`\n${KIND_CLOSE}`);
    cut = indexed < steps.length;
  }

  const shown = new Set<ShownChange>();
  for (const kind of kinds) {
    if (cut) break;
    const ofKind = steps.filter((c) => c.kind === kind);
    const open = kindOpen(kind, ofKind.length);
    if (!fits(open)) {
      cut = true;
      break;
    }
    add(open);
    for (const c of ofKind) {
      const section = changeSection(c, dir, flagsFor(flags, c));
      if (!fits(section)) {
        cut = true;
        break;
      }
      add(section);
      shown.add(c);
    }
    add(KIND_CLOSE);
  }
  if (cut) {
    const missing: string[] = [];
    if (removalsShown < removals.length)
      missing.push(`${countOf(removals.length - removalsShown, 'removal')} (of ${removals.length})`);
    if (shownDiags < diags.length) missing.push(countOf(diags.length - shownDiags, 'diagnostic'));
    if (options.index && indexed < steps.length) missing.push(byAction(steps.slice(indexed)));
    else if (shown.size < steps.length)
      missing.push(`the field diffs of ${byAction(steps.filter((c) => !shown.has(c)))}`);
    const where = options.fullPlanAt ?? 'the output of `cortex-sync plan --output json`';
    add(
      `> [!NOTE]\n> This plan is too long to show whole here: ${missing.join(' and ')} not shown. The full plan is in ${where}.\n\n`,
    );
  }
  // A diagnostic or a heading longer than the whole budget: cut, never over it.
  return used > limit ? cutTo(out, limit, size) : out;
}
