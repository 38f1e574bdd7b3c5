/**
 * Which comments are the plan comment (pure, but for the two port calls at the bottom): only a
 * comment written by the identity the Action writes as — the token's own account (the workflow's
 * `GITHUB_TOKEN` writes as `github-actions[bot]`, a GitHub App's token as `<app>[bot]`, a personal
 * token as its user), or the login the operator names in `plan-comment-author` — whose first line
 * is this source's and directory's marker. Being a bot, or a member, proves nothing: anyone can
 * install an app that comments, and a member's comment is not a plan.
 */
import type { GitHubIdentity, GitHubPort, IssueComment, PullRequestReview } from './github.js';
import { InputError } from './inputs.js';
import { readPlanComment, type ReviewedPlan } from './markers.js';

/** An account whose comments count: matched by its numeric id only (a login can be renamed, and then taken). */
export interface CommentAuthor {
  login: string;
  id: number;
}

/** The comment's author is `author`: same account id (a comment without one is nobody's). */
export const sameAccount = (a: GitHubIdentity | undefined, author: CommentAuthor): boolean => a?.id === author.id;

const firstLine = (body: string): string => /^[^\r\n]*/.exec(body)?.[0] ?? '';

/** This source's and directory's plan comments written by `author`, oldest first. */
const planComments = (comments: readonly IssueComment[], marker: string, author: CommentAuthor): IssueComment[] =>
  comments.filter((c) => sameAccount(c.author, author) && firstLine(c.body) === marker);

/** GitHub says the comment was edited since it was created (both times known and different). */
const editedAfterWriting = (c: IssueComment): boolean =>
  c.createdAt !== undefined && c.updatedAt !== undefined && c.updatedAt !== c.createdAt;

export type ReviewedLookup =
  | {
      status: 'reviewed';
      plan: ReviewedPlan;
      /** When GitHub says the comment was last written (`updated_at`, else `created_at`), if it says. */
      writtenAt?: string;
    }
  | { status: 'none'; why?: string };

/** The reviewed plan on a pull request, or why there is none (fail closed: anything doubtful is none). */
export const reviewedPlanIn = (
  comments: readonly IssueComment[],
  marker: string,
  author: CommentAuthor,
): ReviewedLookup => {
  const mine = planComments(comments, marker, author);
  const [only] = mine;
  if (only === undefined) return { status: 'none' };
  if (mine.length > 1)
    return {
      status: 'none',
      why: `it has ${mine.length} plan comments by ${author.login} (one is expected; a new plan run on the pull request keeps one)`,
    };
  // The Action never edits a plan comment after writing it (a new plan is a new comment): any
  // edit, by anyone who may (the token's account, a maintainer), means what shows is not what was written.
  if (editedAfterWriting(only))
    return {
      status: 'none',
      why: `its plan comment was edited after cortex-sync wrote it (created ${only.createdAt}, updated ${only.updatedAt}); an edited plan comment is not a review: run the plan job again for a new one`,
    };
  const read = readPlanComment(only.body, marker);
  if (read.status === 'no-digest')
    return {
      status: 'none',
      why: 'its plan comment shows a plan that cannot be applied (invalid manifests or a refused plan)',
    };
  if (read.status === 'unreadable') return { status: 'none', why: `its plan comment is not read: ${read.why}` };
  const writtenAt = only.updatedAt ?? only.createdAt;
  return { status: 'reviewed', plan: read.plan, ...(writtenAt !== undefined ? { writtenAt } : {}) };
};

/**
 * With `require-approval`: the reviewed plan stands only when an approval was submitted after the
 * comment was last written — by a reviewer whose latest deciding review (approved, changes
 * requested, dismissed) is still that approval, and not by the account that writes the plan
 * comments. Times are GitHub's, to the second: an approval in the same second as the comment does
 * not count (fail closed). A comment without a time is not approved.
 */
export const approvedAfterWriting = (
  lookup: ReviewedLookup,
  reviews: readonly PullRequestReview[],
  author: CommentAuthor,
): ReviewedLookup => {
  if (lookup.status !== 'reviewed') return lookup;
  const latest = new Map<number | string, PullRequestReview>();
  for (const r of reviews) {
    if (!['APPROVED', 'CHANGES_REQUESTED', 'DISMISSED'].includes(r.state) || r.submittedAt === undefined) continue;
    if (r.author === undefined || sameAccount(r.author, author)) continue;
    latest.set(r.author.id ?? r.author.login, r);
  }
  const approvals = [...latest.values()].filter((r) => r.state === 'APPROVED').map((r) => r.submittedAt ?? '');
  const last = approvals.sort().at(-1);
  const written = lookup.writtenAt;
  if (last !== undefined && written !== undefined && Date.parse(last) > Date.parse(written)) return lookup;
  return {
    status: 'none',
    why:
      last === undefined
        ? 'require-approval is set and the pull request has no approving review standing (GET /pulls/{n}/reviews): an unapproved plan is not a review'
        : `its plan comment was written (${written ?? 'at an unknown time'}) after the last approving review (${last}): a plan changed after the approval was not approved; approve the pull request again`,
  };
};

const BOT_SUFFIX = /\[bot\]$/i;
const INPUT = 'input `plan-comment-author`';

/**
 * The account the input names, by its id. A login without `[bot]` while an app's bot of that name
 * exists is refused, saying what to write: anyone may register the bare name as a personal
 * account, which must never stand in for the app (and the app's own comments would not count).
 */
const namedAccount = async (port: GitHubPort, login: string): Promise<CommentAuthor> => {
  if (!BOT_SUFFIX.test(login)) {
    const bot = await port.account(`${login}[bot]`);
    if (bot)
      throw new InputError(
        `${INPUT} is '${login}', but the app's comments are written by its bot account '${bot.login}': write \`plan-comment-author: ${bot.login}\` (a personal account named '${login}' is not the app)`,
      );
  }
  const found = await port.account(login);
  if (!found)
    throw new InputError(
      `${INPUT}: GitHub has no account '${login}' (GET /users/${login}: 404); name the account as it is now called (a renamed or deleted account's login is free for anyone to take)`,
    );
  if (BOT_SUFFIX.test(found.login) !== (found.type === 'Bot'))
    throw new InputError(
      `${INPUT}: '${found.login}' is an account of type ${found.type}, which cannot be what it names`,
    );
  return { login: found.login, id: found.id };
};

/** Who the token writes as, with its id (GraphQL may not give one: then by its login). */
const tokenAccount = async (port: GitHubPort): Promise<CommentAuthor> => {
  const self = await port.tokenIdentity();
  if (self.id !== undefined) return { login: self.login, id: self.id };
  const found = await port.account(self.login);
  if (!found) throw new InputError(`\`github-token\` writes as '${self.login}', an account GitHub does not find`);
  return { login: found.login, id: found.id };
};

/**
 * Whose plan comment counts, resolved to an account id once per run. `configured` is the
 * `plan-comment-author` input ('' when not set: the token's own account). When the run writes the
 * comment, the token must be that account (its comment would not count otherwise).
 */
export const planCommentAuthor = async (
  port: GitHubPort,
  configured: string,
  writes: boolean,
): Promise<CommentAuthor> => {
  const named = configured === '' ? undefined : await namedAccount(port, configured);
  if (named && !writes) return named;
  const self = await tokenAccount(port);
  if (named && named.id !== self.id)
    throw new InputError(
      `${INPUT} is '${configured}', but \`github-token\` writes as '${self.login}': its plan comment would not count on merge`,
    );
  return self;
};

/** What became of the plan comment: left as it was (it shows this plan), or a new one with `removed` older ones deleted. */
interface PlanCommentWrite {
  kept: boolean;
  removed: number;
}

/** The existing comment already is this plan, unedited: same body, or the same plan digest read from an intact comment. */
const showsSamePlan = (existing: IssueComment, marker: string, body: string): boolean => {
  if (editedAfterWriting(existing)) return false;
  if (existing.body === body) return true;
  const before = readPlanComment(existing.body, marker);
  const now = readPlanComment(body, marker);
  return before.status === 'reviewed' && now.status === 'reviewed' && before.plan.digest === now.plan.digest;
};

/**
 * Writes this run's plan comment. It is never edited in place: a plan that differs from the one
 * shown (or a comment edited since) gets a new comment — after the reviews so far, so it needs its
 * own — and the older ones are deleted. Two runs racing on one pull request converge: after
 * writing, each lists again and keeps only the newest plan comment (the highest id), so both
 * delete the same ones (a comment already gone counts as deleted).
 */
export const writePlanComment = async (
  port: GitHubPort,
  pullRequest: number,
  marker: string,
  author: CommentAuthor,
  body: string,
): Promise<PlanCommentWrite> => {
  const existing = planComments(await port.listComments(pullRequest), marker, author);
  const [only] = existing;
  if (existing.length === 1 && only !== undefined && showsSamePlan(only, marker, body))
    return { kept: true, removed: 0 };
  await port.createComment(pullRequest, body);
  const now = planComments(await port.listComments(pullRequest), marker, author);
  const newest = Math.max(...now.map((c) => c.id));
  const older = now.filter((c) => c.id !== newest);
  for (const c of older) await port.deleteComment(c.id);
  return { kept: false, removed: older.length };
};
