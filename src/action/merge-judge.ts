/**
 * Which merges a run at the head answers for, each with its reviewed plan and its record, and
 * the decision of the plan made at the head against them (`core/review-judgement.ts`): nothing
 * to judge, applied already, or judged. Reads GitHub only; applies nothing.
 */
import type { Plan } from '../core/model.js';
import { judgeMerges, type MergeJudgement } from './digest.js';
import type { IssueComment } from './github.js';
import { type Merge, type MergeRecord, type MergeStatus, mergesToAnswer, recordIn } from './merges.js';
import { approvedAfterWriting, planCommentAuthor, type ReviewedLookup, reviewedPlanIn } from './plan-comments.js';
import { marker, type RunScope } from './scope.js';

export interface MergeState {
  merge: Merge;
  lookup: ReviewedLookup;
  record: MergeRecord | 'legacy' | undefined;
}

/** The branch's head, when this run's commit is no longer it. */
export const supersededBy = async (scope: RunScope): Promise<{ branch: string; head: string } | undefined> => {
  const { github, run } = scope;
  const branch = run.ref.startsWith('refs/heads/') ? run.ref.slice('refs/heads/'.length) : run.defaultBranch;
  if (!github || !branch || !run.sha) return undefined;
  const head = await github.branchHead(branch);
  return head === run.sha ? undefined : { branch, head };
};

/** The merges this run answers for, oldest first, each with its reviewed plan and record. */
export const collectMerges = async (scope: RunScope): Promise<MergeState[]> => {
  const github = scope.github;
  if (!github) return [];
  const author = await planCommentAuthor(github, scope.inputs.planCommentAuthor, false);
  scope.deps.runtime.info(`The reviewed plan is the plan comment of ${author.login} (account id ${author.id}).`);
  const cache = new Map<number, IssueComment[]>();
  const commentsOf = async (pr: number): Promise<IssueComment[]> => {
    const known = cache.get(pr) ?? (await github.listComments(pr));
    cache.set(pr, known);
    return known;
  };
  const { sourceId, dir } = scope.label;
  const recordOf = async (pr: number) => recordIn(await commentsOf(pr), sourceId, dir, author);
  const lookupOf = async (pr: number): Promise<ReviewedLookup> => {
    const lookup = reviewedPlanIn(await commentsOf(pr), marker(scope), author);
    if (!scope.inputs.requireApproval || lookup.status !== 'reviewed') return lookup;
    return approvedAfterWriting(lookup, await github.listReviews(pr), author);
  };
  const status = async (pr: number): Promise<MergeStatus> => {
    const lookup = await lookupOf(pr);
    return { record: await recordOf(pr), planned: !(lookup.status === 'none' && lookup.why === undefined) };
  };
  // Without comments nothing is recorded: only this push's merges are answered for. A merge of
  // the push without a plan comment (it changed no manifest, or nobody planned it) is passed over:
  // what it changed shows up as steps none of the others reviewed.
  const merges = await mergesToAnswer(github, scope.run, status, scope.inputs.comment);
  const states: MergeState[] = [];
  for (const merge of merges)
    states.push({ merge, lookup: await lookupOf(merge.pullRequest), record: await recordOf(merge.pullRequest) });
  const planned = states.filter((s) => !(s.lookup.status === 'none' && s.lookup.why === undefined));
  return planned.length > 0 ? planned : states;
};

const appliedAlready = (s: MergeState): boolean =>
  s.lookup.status === 'reviewed' &&
  typeof s.record === 'object' &&
  s.record.outcome === 'applied' &&
  s.record.digest === s.lookup.plan.digest;

export type Decision =
  | { kind: 'no-merge' }
  | { kind: 'applied-already'; pullRequests: number[] }
  | {
      kind: 'judged';
      judged: MergeState[];
      judgement: MergeJudgement;
      unplanned: { pullRequest: number; why: string }[];
    };

export const decide = (merges: readonly MergeState[], plan: Plan): Decision => {
  const judged = merges.filter((s) => !appliedAlready(s));
  if (judged.length === 0)
    return merges.length
      ? { kind: 'applied-already', pullRequests: merges.map((s) => s.merge.pullRequest) }
      : { kind: 'no-merge' };
  const unplanned = judged.flatMap((s) =>
    s.lookup.status === 'none'
      ? [
          {
            pullRequest: s.merge.pullRequest,
            why: s.lookup.why ?? 'it has no cortex-sync plan comment for this source and directory',
          },
        ]
      : [],
  );
  const reviews = judged.flatMap((s) =>
    s.lookup.status === 'reviewed'
      ? [
          {
            pullRequest: s.merge.pullRequest,
            digest: s.lookup.plan.digest,
            ...(s.lookup.plan.changes ? { changes: s.lookup.plan.changes } : {}),
          },
        ]
      : [],
  );
  const judgement: MergeJudgement = reviews.length ? judgeMerges(reviews, plan) : { verdict: 'refuse', problems: [] };
  return { kind: 'judged', judged, judgement, unplanned };
};
