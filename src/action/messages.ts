/**
 * Everything else the Action writes for people (pure): the sticky plan comment with its hidden
 * markers, the plan-drift comment, the apply result, and the job-summary notes.
 */
import type { ApplyReport, ChangeResult, Diagnostic } from '../core/model.js';
import { countOf } from '../core/plural.js';
import { code, inline } from '../render/markdown.js';
import { COMMENT_LIMIT, diagnosticItem } from './comment.js';
import { type ChangeFingerprint, changesMarker, digestMarker, type PlanDifference } from './digest.js';

/** Where a run is, for the headers of comments: `dir` relative to the repository root. */
export interface RunLabel {
  sourceId: string;
  dir: string;
  /** Link to the workflow run, when known. */
  runUrl?: string;
}

const where = (label: RunLabel): string =>
  `Source ${code(label.sourceId)}, directory ${code(label.dir)}${label.runUrl ? ` · [workflow run](${label.runUrl})` : ''}`;

/**
 * The sticky comment: marker, the rendered plan, and (when the plan can be applied) the digest and,
 * if they fit under GitHub's limit, the reviewed changes' fingerprints.
 */
export const stickyCommentBody = (input: {
  marker: string;
  label: RunLabel;
  planMarkdown: string;
  digest?: string;
  fingerprints?: readonly ChangeFingerprint[];
}): string => {
  let body = `${input.marker}\n${input.planMarkdown}${where(input.label)}\n`;
  if (input.digest === undefined) return body;
  body += `\nPlan digest ${code(input.digest.slice(0, 19))}: on merge, this plan is applied only if a fresh plan is the same.\n${digestMarker(input.digest)}\n`;
  if (input.fingerprints) {
    const changes = changesMarker(input.fingerprints);
    if (body.length + changes.length + 1 < COMMENT_LIMIT - 100) body += `${changes}\n`;
  }
  return body;
};

const LIST_LIMIT = 50;
const listed = (items: readonly string[]): string[] =>
  items.length <= LIST_LIMIT
    ? [...items]
    : [...items.slice(0, LIST_LIMIT), `- … and ${items.length - LIST_LIMIT} more`];

const fp = (f: ChangeFingerprint): string => `${f.action} ${code(f.key)}`;

/** What differs between the reviewed plan and the plan now, as Markdown lines. */
export const differenceLines = (difference: PlanDifference | undefined): string[] => {
  if (!difference)
    return [
      "The reviewed plan's changes were not recorded in its comment (too long), so only the digests can be compared.",
    ];
  const lines: string[] = [];
  if (difference.added.length)
    lines.push(
      `**New since the review** (${difference.added.length}):`,
      ...listed(difference.added.map((f) => `- ${fp(f)}`)),
      '',
    );
  if (difference.removed.length)
    lines.push(
      `**Reviewed, no longer planned** (${difference.removed.length}):`,
      ...listed(difference.removed.map((f) => `- ${fp(f)}`)),
      '',
    );
  if (difference.changed.length)
    lines.push(
      `**Planned differently** (${difference.changed.length}):`,
      ...listed(
        difference.changed.map(
          ([a, b]) =>
            `- ${code(b.key)}: reviewed ${a.action}, now ${b.action}${a.action === b.action ? ' with other field values' : ''}`,
        ),
      ),
      '',
    );
  if (lines.length === 0) lines.push('The same objects change, in another order.');
  return lines;
};

export const driftCommentBody = (input: {
  label: RunLabel;
  reviewedDigest: string;
  currentDigest: string;
  difference: PlanDifference | undefined;
  applied: boolean;
  sha: string;
}): string =>
  [
    `### ⚠️ cortex-sync: the plan changed after it was reviewed`,
    '',
    `The plan shown on this pull request (${code(input.reviewedDigest.slice(0, 19))}) is not the plan at the merge commit ${code(input.sha.slice(0, 12))} (${code(input.currentDigest.slice(0, 19))}): the workspace was edited since the review, or another pull request was merged first.`,
    '',
    input.applied
      ? '> [!WARNING]\n> **Applied anyway** (`on-plan-drift: apply`): the changes below were not reviewed.'
      : '> [!CAUTION]\n> **Nothing was applied** (`on-plan-drift: fail`). Review the current plan (run the workflow again, or open a pull request) before applying it.',
    '',
    ...differenceLines(input.difference),
    where(input.label),
    '',
  ].join('\n');

export const noReviewedPlanBody = (input: { label: RunLabel; applied: boolean; pullRequest?: number }): string =>
  [
    '### ⚠️ cortex-sync: no reviewed plan',
    '',
    input.pullRequest !== undefined
      ? `Pull request #${input.pullRequest} has no cortex-sync plan comment for this source and directory, so there is no reviewed plan to compare with.`
      : 'This commit belongs to no pull request with a cortex-sync plan comment, so there is no reviewed plan to compare with.',
    '',
    input.applied
      ? '**Applied anyway** (`on-plan-drift: apply`).'
      : '**Nothing was applied** (`on-plan-drift: fail`). Merge changes through a pull request whose plan was commented, or set `on-plan-drift: apply`.',
    '',
    where(input.label),
    '',
  ].join('\n');

const resultItem = (r: ChangeResult): string => {
  const what = `${r.change.action} ${code(`${r.change.kind}/${r.change.id}`)}`;
  if (r.outcome === 'skipped')
    return `- ⏭️ ${what}: ${r.blockedBy !== undefined ? `waits for ${code(r.blockedBy)}, which did not complete` : inline(r.error ?? 'skipped')}`;
  return `- ❌ ${what}: ${inline(r.error ?? 'failed')}`;
};

export const applyCounts = (report: ApplyReport): { ok: number; failed: number; skipped: number } => {
  const results = report.results.filter((r) => r.change.action !== 'noop');
  const n = (o: ChangeResult['outcome']) => results.filter((r) => r.outcome === o).length;
  return { ok: n('ok'), failed: n('failed'), skipped: n('skipped') };
};

export const applyResultBody = (input: {
  label: RunLabel;
  report: ApplyReport;
  sha: string;
  drifted: boolean;
}): string => {
  const { ok, failed, skipped } = applyCounts(input.report);
  const clean = failed + skipped === 0;
  const problems = input.report.results.filter((r) => r.change.action !== 'noop' && r.outcome !== 'ok');
  return [
    `### ${clean ? '✅' : '❌'} cortex-sync apply: ${ok} ok, ${failed} failed, ${skipped} skipped`,
    '',
    `Applied at ${code(input.sha.slice(0, 12))} in ${(input.report.durationMs / 1000).toFixed(1)} s (${countOf(input.report.writeRequests, 'write request')})${input.drifted ? ', **a plan that differed from the reviewed one**' : ', the plan that was reviewed'}.`,
    '',
    ...(problems.length ? [...listed(problems.map(resultItem)), ''] : []),
    where(input.label),
    '',
  ].join('\n');
};

export const diagnosticsSection = (title: string, diagnostics: readonly Diagnostic[]): string =>
  diagnostics.length === 0 ? '' : [`#### ${title}`, '', ...listed(diagnostics.map(diagnosticItem)), '', ''].join('\n');
