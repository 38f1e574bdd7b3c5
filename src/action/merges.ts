/**
 * Which merges a run on the default branch answers for, and what has been said on each (the
 * Action's record comment). A run applies only at the branch's head; it answers for the merges of
 * its push (from its commit back to the push's `before`, along first parents) and for earlier
 * merges no run answered (a run GitHub cancelled while it was pending), oldest first. A merge is
 * answered when the Action's account left a comment ending with a record for this source and directory on its
 * pull request (`applied` with the reviewed digest, `failed` or `refused`), or, for versions
 * before records, a comment of that account headed like their merge comments.
 */
import type { AssociatedPullRequest, GitHubPort, IssueComment } from './github.js';
import { type CommentAuthor, sameAccount } from './plan-comments.js';

/** How far back a run looks for merges no run answered. */
const MAX_MERGES_BACK = 20;

export interface Merge {
  pullRequest: number;
  sha: string;
  /** Part of this run's push (else an earlier merge no run answered). */
  inPush: boolean;
}

/** `applied`: the whole reviewed plan is live; `failed`: an apply that did not finish (a rerun goes on); `refused`: nothing applied. */
export type MergeRecord = { outcome: 'applied'; digest: string } | { outcome: 'failed' | 'refused' };

const enc = (s: string): string => encodeURIComponent(s);
const firstLine = (body: string): string => /^[^\r\n]*/.exec(body)?.[0] ?? '';
const lastLine = (body: string): string => body.trimEnd().split(/\r?\n/).at(-1) ?? '';

/** The last line of a comment the merge writes: what became of this pull request's reviewed plan. */
export const recordLine = (sourceId: string, dir: string, record: MergeRecord): string =>
  `<!-- cortex-sync:merge source=${enc(sourceId)} dir=${enc(dir)} outcome=${record.outcome}${record.outcome === 'applied' ? ` digest=${record.digest}` : ''} -->`;

/** The heading of a merge comment of a version before records (its apply result, drift or refusal). */
const LEGACY = /^### .*cortex-sync(?: apply|:)/;

const RECORD =
  /^<!-- cortex-sync:merge source=(\S+) dir=(\S+) outcome=(applied|failed|refused)(?: digest=(sha256:[0-9a-f]{64}))? -->$/;

/** The last record of this source and directory written by `author` on a pull request; `legacy` for a merge comment of an older version. */
export const recordIn = (
  comments: readonly IssueComment[],
  sourceId: string,
  dir: string,
  author: CommentAuthor,
): MergeRecord | 'legacy' | undefined => {
  let found: MergeRecord | 'legacy' | undefined;
  for (const c of comments) {
    if (!sameAccount(c.author, author)) continue;
    const m = RECORD.exec(lastLine(c.body));
    if (m) {
      if (m[1] !== enc(sourceId) || m[2] !== enc(dir)) continue;
      found =
        m[3] === 'applied' && m[4]
          ? { outcome: 'applied', digest: m[4] }
          : { outcome: m[3] === 'failed' ? 'failed' : 'refused' };
    } else if (LEGACY.test(firstLine(c.body)) && found === undefined) found = 'legacy';
  }
  return found;
};

const mergedAt = (
  prs: readonly AssociatedPullRequest[],
  sha: string,
  first: boolean,
): AssociatedPullRequest | undefined =>
  prs.find((pr) => pr.merged && pr.mergeCommitSha === sha) ?? (first ? prs.find((pr) => pr.merged) : undefined);

/** What a merge's pull request holds: its record, and whether it has a plan comment of this source and directory. */
export interface MergeStatus {
  record: MergeRecord | 'legacy' | undefined;
  planned: boolean;
}

/**
 * The merges this run answers for, oldest first: from `sha` back along first parents to `before`
 * (this push: each merge with a plan comment, and this commit's whatever it has), then further
 * while merges are not answered (`status`: one without a plan comment is passed over), at most
 * `MAX_MERGES_BACK` commits. `lookBack: false` (nothing is recorded): no further than the push.
 */
export const mergesToAnswer = async (
  github: GitHubPort,
  run: { sha: string; before?: string },
  status: (pullRequest: number) => Promise<MergeStatus>,
  lookBack: boolean,
): Promise<Merge[]> => {
  const found: Merge[] = [];
  let inPush = true;
  let commit: string | undefined = run.sha;
  for (let step = 0; commit !== undefined && step < MAX_MERGES_BACK; step += 1) {
    if (commit === run.before) inPush = false;
    if (!inPush && !lookBack) break;
    const pr = mergedAt(await github.pullRequestsOfCommit(commit), commit, step === 0);
    if (pr && !found.some((m) => m.pullRequest === pr.number)) {
      const { record, planned } = step === 0 ? { record: undefined, planned: true } : await status(pr.number);
      // An answered merge before this push, or one a version before records answered: the runs before answered the rest.
      if (record === 'legacy' || (!inPush && record !== undefined)) break;
      if (planned) found.push({ pullRequest: pr.number, sha: commit, inPush });
    }
    // Without a `before` (not a push, or a forced one), only this commit's merge and the unanswered ones before it.
    if (run.before === undefined) inPush = false;
    commit = await github.firstParent(commit);
  }
  return found.reverse();
};
