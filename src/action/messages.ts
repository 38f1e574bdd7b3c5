/**
 * Everything else the Action writes for people (pure): the sticky plan comment with its hidden
 * markers, the plan-drift comment, the apply result, and the job-summary notes. Every string a
 * repository controls goes through `render/untrusted.ts`.
 */
import type { ApplyReport, ChangeResult, Diagnostic } from '../core/model.js';
import type { RunReport } from '../core/outcome.js';
import { countOf } from '../core/plural.js';
import { COMMENT_BUDGET, COMMENT_LIMIT, diagnosticItem } from './comment.js';
import type { ChangeFingerprint, PlanDifference } from './digest.js';
import { planTrailer, visibleTextDigest } from './markers.js';
import { code, untrustedCode, untrustedMessage } from '../render/untrusted.js';

/** Where a run is, for the headers of comments: `dir` relative to the repository root. */
export interface RunLabel {
  sourceId: string;
  dir: string;
  /** Link to the workflow run, when known. */
  runUrl?: string;
}

export const where = (label: RunLabel): string =>
  `Source ${untrustedCode(label.sourceId)}, directory ${untrustedCode(label.dir)}${label.runUrl ? ` · [workflow run](${label.runUrl})` : ''}`;

/**
 * The most of a comment the trailer may take (about 2,000 steps' fingerprints); beyond it only
 * the digest is kept, and a drift cannot name what differs nor an interrupted apply resume.
 */
const TRAILER_BUDGET = 55_000;

/**
 * The sticky comment: its marker line, the plan rendered in what room is left, and (when the plan
 * can be applied) the trailer: the digest and, when they fit, the reviewed steps' fingerprints
 * (which a drift report and the rerun of an interrupted apply need). The trailer is sized first so
 * that a long plan gives up diffs, not fingerprints.
 */
export const stickyCommentBody = (input: {
  marker: string;
  label: RunLabel;
  renderPlan: (limit: number) => string;
  digest?: string;
  fingerprints?: readonly ChangeFingerprint[];
}): string => {
  let footer = `${where(input.label)}\n`;
  // The trailer's length does not depend on the text digest it records: sized with a stand-in.
  const trailerFor = (text: string): string => {
    if (input.digest === undefined) return '';
    const withChanges = input.fingerprints ? planTrailer(input.digest, text, input.fingerprints) : undefined;
    return withChanges !== undefined && withChanges.length <= TRAILER_BUDGET
      ? withChanges
      : planTrailer(input.digest, text);
  };
  if (input.digest !== undefined)
    footer += `\nPlan digest ${code(input.digest.slice(0, 19))}: on merge, this plan is applied only if a fresh plan is the same (or, after an interrupted apply, the rest of it), and only if this comment was not edited.\n`;
  const head = `${input.marker}\n`;
  const standIn = trailerFor(visibleTextDigest(''));
  const room = Math.min(COMMENT_BUDGET, COMMENT_LIMIT - 1_000 - head.length - footer.length - standIn.length);
  const plan = input.renderPlan(room);
  // A renderer that ignores the limit (a list of long diagnostics) is cut; the blank line ends any span.
  const shown =
    plan.length <= room
      ? plan
      : `${plan.slice(0, room - 200)}…\n\n> [!NOTE]\n> Cut to fit GitHub's comment limit: the job summary has all of it.\n\n`;
  // The trailer binds what the comment shows: an edit of the visible text is not the reviewed plan.
  return `${head}${shown}${footer}${trailerFor(visibleTextDigest(`${shown}${footer}`))}`;
};

const LIST_LIMIT = 50;
const listed = (items: readonly string[]): string[] =>
  items.length <= LIST_LIMIT
    ? [...items]
    : [...items.slice(0, LIST_LIMIT), `- … and ${items.length - LIST_LIMIT} more`];

const fp = (f: ChangeFingerprint): string => `${f.action} ${untrustedCode(f.key)}`;

const removes = (action: string): boolean => action === 'delete' || action === 'archive';

/** Steps as list items, deletes and archives first and never cut; the rest up to the list's limit. */
const listedSteps = (steps: readonly ChangeFingerprint[]): string[] => {
  const first = steps.filter((f) => removes(f.action));
  const rest = steps.filter((f) => !removes(f.action));
  const shown = rest.slice(0, Math.max(0, LIST_LIMIT - first.length));
  const items = [...first, ...shown].map((f) => `- ${fp(f)}`);
  return shown.length < rest.length ? [...items, `- … and ${rest.length - shown.length} more`] : items;
};

/** What differs between the reviewed plan and the plan now, as Markdown lines. */
const differenceLines = (difference: PlanDifference | undefined): string[] => {
  if (!difference)
    return [
      "The reviewed plan's changes were not recorded in its comment (too long), so only the digests can be compared.",
    ];
  const lines: string[] = [];
  if (difference.added.length)
    lines.push(`**New since the review** (${difference.added.length}):`, ...listedSteps(difference.added), '');
  if (difference.removed.length)
    lines.push(
      `**Reviewed, no longer planned** (${difference.removed.length}):`,
      ...listedSteps(difference.removed),
      '',
    );
  if (difference.changed.length)
    lines.push(
      `**Planned differently** (${difference.changed.length}):`,
      ...listed(
        difference.changed.map(
          ([a, b]) =>
            `- ${untrustedCode(b.key)}: reviewed ${a.action}, now ${b.action}${a.action === b.action ? ' with other field values' : ''}`,
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

export const noReviewedPlanBody = (input: {
  label: RunLabel;
  applied: boolean;
  pullRequest?: number;
  /** Why the pull request's plan comment gives no reviewed plan; absent: it has none. */
  why?: string;
  /** False when the run had no `github-token`: it could not look for a pull request or its comments. */
  looked?: boolean;
}): string =>
  [
    '### ⚠️ cortex-sync: no reviewed plan',
    '',
    input.looked === false
      ? 'This run has no `github-token`, so it could not look for the pull request this commit came from nor for its reviewed plan.'
      : input.pullRequest === undefined
        ? 'This commit belongs to no pull request with a cortex-sync plan comment, so there is no reviewed plan to compare with.'
        : input.why === undefined
          ? `Pull request #${input.pullRequest} has no cortex-sync plan comment for this source and directory, so there is no reviewed plan to compare with.`
          : `Pull request #${input.pullRequest} has no reviewed plan for this source and directory: ${untrustedMessage(input.why)}.`,
    '',
    input.applied
      ? '**Applied anyway** (`on-plan-drift: apply`).'
      : '**Nothing was applied** (`on-plan-drift: fail`). Merge changes through a pull request whose plan was commented, or set `on-plan-drift: apply`.',
    '',
    where(input.label),
    '',
  ].join('\n');

const resultItem = (r: ChangeResult): string => {
  const what = `${r.change.action} ${untrustedCode(`${r.change.kind}/${r.change.id}`)}`;
  if (r.outcome === 'skipped')
    return `- ⏭️ ${what}: ${r.blockedBy !== undefined ? `waits for ${untrustedCode(r.blockedBy)}, which did not complete` : untrustedMessage(r.error ?? 'skipped')}`;
  return `- ❌ ${what}: ${untrustedMessage(r.error ?? 'failed')}`;
};

/** What an apply applied: the reviewed plan, the rest of it (after an interrupted apply), or a drifted plan. */
export type AppliedBasis =
  { kind: 'reviewed' } | { kind: 'rest'; remaining: number; reviewed: number } | { kind: 'drifted' };

/** One sentence on the rest of a reviewed plan, for the log, the summary and the comment. */
export const restSentence = (basis: { remaining: number; reviewed: number }, pullRequest?: number): string =>
  `The plan is the rest of the plan reviewed${pullRequest !== undefined ? ` on #${pullRequest}` : ''}: ${basis.remaining} of its ${basis.reviewed} steps remain, the other ${basis.reviewed - basis.remaining} are no longer planned (already done by an earlier run, or already live), and nothing else is planned`;

const basisText = (basis: AppliedBasis): string =>
  basis.kind === 'reviewed'
    ? ', the plan that was reviewed'
    : basis.kind === 'drifted'
      ? ', **a plan that differed from the reviewed one**'
      : `, **the rest of the reviewed plan** (${basis.remaining} of its ${basis.reviewed} steps; the other ${basis.reviewed - basis.remaining} were no longer planned: already done by an earlier run, or already live)`;

export const applyResultBody = (input: {
  label: RunLabel;
  /** What became of each step (the failures are listed). */
  report: ApplyReport;
  /** The run's report: how many steps ended how. */
  run: RunReport;
  sha: string;
  basis: AppliedBasis;
}): string => {
  const { ok, failed, skipped } = input.run.steps;
  const clean = failed + skipped === 0;
  const problems = input.report.results.filter((r) => r.change.action !== 'noop' && r.outcome !== 'ok');
  const recordProblems = (input.report.inventory ?? []).filter((r) => r.outcome !== 'ok');
  return [
    `### ${clean ? '✅' : '❌'} cortex-sync apply: ${ok} ok, ${failed} failed, ${skipped} skipped`,
    '',
    `Applied at ${code(input.sha.slice(0, 12))} in ${(input.report.durationMs / 1000).toFixed(1)} s (${countOf(input.report.writeRequests, 'write request')})${basisText(input.basis)}.`,
    '',
    ...(problems.length ? [...listed(problems.map(resultItem)), ''] : []),
    ...recordProblems.map(
      (r) =>
        `- ${r.outcome === 'failed' ? '❌' : '⏭️'} ownership record ${untrustedCode(r.write.id)} (${r.write.phase} the changes): ${untrustedMessage(r.error ?? r.outcome)}`,
    ),
    ...(recordProblems.length ? [''] : []),
    where(input.label),
    '',
  ].join('\n');
};

export const diagnosticsSection = (title: string, diagnostics: readonly Diagnostic[]): string =>
  diagnostics.length === 0 ? '' : [`#### ${title}`, '', ...listed(diagnostics.map(diagnosticItem)), '', ''].join('\n');
