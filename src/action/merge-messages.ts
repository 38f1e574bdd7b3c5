/**
 * What a merge says on each pull request it answers for, and in the job summary, when it cannot
 * apply: another run's commit is the head, a merge's reviewed plan was applied already, or the
 * plan at the head is not the merges' reviewed plans (pure Markdown; repository strings through
 * `render/untrusted.ts`).
 */
import type { ChangeFingerprint, ReviewOutcome, ReviewProblem } from './digest.js';
import { code, untrustedCode } from '../render/untrusted.js';

const fp = (f: ChangeFingerprint): string => `${f.action} ${untrustedCode(f.key)}`;

/** One problem, as a list item; `on` is the pull request the comment is on (its own problems say no number). */
export const problemLine = (p: ReviewProblem, on?: number): string => {
  const whose = 'pullRequest' in p && p.pullRequest !== on ? ` (reviewed on #${p.pullRequest})` : '';
  switch (p.kind) {
    case 'unreviewed':
      return `- ${fp(p.now)}: planned now, reviewed on none of the merged pull requests`;
    case 'changed':
      return `- ${untrustedCode(p.now.key)}${whose}: reviewed ${p.reviewed.action}, now ${p.now.action}${p.reviewed.action === p.now.action ? ' with other field values' : ''}`;
    case 'dropped':
      return `- ${fp(p.reviewed)}${whose}: reviewed, but neither planned now nor live as reviewed (the pull request changed it after the review, or it was changed since)`;
    case 'unrecorded':
      return `- #${p.pullRequest}: its plan comment recorded only the digest (too long to record its steps), and the plan now is not that plan`;
    case 'reordered':
      return `- the same steps as reviewed${whose}, in another order`;
  }
};

const concerns = (p: ReviewProblem, pr: number): boolean => !('pullRequest' in p) || p.pullRequest === pr;

/** The refusal on one pull request of several merged together (or one after a cancelled run). */
export const refusedTogetherBody = (input: {
  pullRequest: number;
  others: readonly number[];
  sha: string;
  problems: readonly ReviewProblem[];
  /** Merges without a reviewed plan, with why. */
  unplanned: readonly { pullRequest: number; why: string }[];
  applied: boolean;
  where: string;
}): string => {
  const own = input.problems.filter((p) => concerns(p, input.pullRequest));
  const rest = input.problems.filter((p) => !concerns(p, input.pullRequest));
  const together = input.others.length ? ` together with ${input.others.map((n) => `#${n}`).join(', ')}` : '';
  return [
    `### ⚠️ cortex-sync: the plan at the merge is not the plan reviewed on this pull request`,
    '',
    `This pull request is applied${together} by the plan at ${code(input.sha.slice(0, 12))}, the head of the branch.`,
    '',
    input.applied
      ? '> [!WARNING]\n> **Applied anyway** (`on-plan-drift: apply`): what is listed below was not reviewed.'
      : '> [!CAUTION]\n> **Nothing was applied** (`on-plan-drift: fail`). Plan again (a new pull request, or rerun the workflow once the cause is fixed) before applying.',
    '',
    ...(own.length ? ['**On this pull request:**', ...own.map((p) => problemLine(p, input.pullRequest)), ''] : []),
    ...(rest.length || input.unplanned.length
      ? [
          '**On the other pull requests applied with it:**',
          ...rest.map((p) => problemLine(p, input.pullRequest)),
          ...input.unplanned
            .filter((u) => u.pullRequest !== input.pullRequest)
            .map((u) => `- #${u.pullRequest}: no reviewed plan (${u.why})`),
          '',
        ]
      : []),
    input.where,
    '',
  ].join('\n');
};

/** The extra lines of an apply's result when it answered for several merges, or superseded a step. */
export const togetherLines = (outcome: ReviewOutcome | undefined, others: readonly number[]): string[] => [
  ...(others.length
    ? [
        `Applied in one plan with ${others.map((n) => `#${n}`).join(', ')} (merged into the same head, in merge order).`,
        '',
      ]
    : []),
  ...(outcome?.superseded.length
    ? [
        '**Reviewed here, changed instead by a later merge:**',
        ...outcome.superseded.map((s) => `- ${untrustedCode(s.key)}: as reviewed on #${s.by}`),
        '',
      ]
    : []),
];

/** The job summary of a run whose commit is no longer the head of its branch. */
export const supersededSummary = (sha: string, branch: string, head: string): string =>
  [
    '### cortex-sync apply: ⏭️ not the head of the branch',
    '',
    `This run is for ${code(sha.slice(0, 12))}, but the head of ${untrustedCode(branch)} is ${code(head.slice(0, 12))} now: applying this commit would undo what merged after it. **Nothing was applied.** The run for the head applies what is not applied yet, this commit's merge included.`,
    '',
  ].join('\n');

/** The job summary of a rerun whose merges' reviewed plans were all applied already. */
export const alreadyAppliedSummary = (pullRequests: readonly number[], applied: boolean): string =>
  [
    '### cortex-sync apply: the reviewed plan was applied already',
    '',
    `The plan reviewed on ${pullRequests.map((n) => `#${n}`).join(', ')} was applied already (its result comment says so). What is planned now was not reviewed: the workspace changed since.`,
    '',
    applied
      ? '**Applied anyway** (`on-plan-drift: apply`).'
      : '**Nothing was applied** (`on-plan-drift: fail`). Review the plan (a pull request) before applying it.',
    '',
  ].join('\n');
