/**
 * Which comments are the plan comment (pure, but for the two port calls at the bottom): only a
 * comment written by the identity the Action writes as — the token's own account (the workflow's
 * `GITHUB_TOKEN` writes as `github-actions[bot]`, a GitHub App's token as `<app>[bot]`, a personal
 * token as its user), or the login the operator names in `plan-comment-author` — whose first line
 * is this source's and directory's marker. Being a bot, or a member, proves nothing: anyone can
 * install an app that comments, and a member's comment is not a plan.
 */
import type { GitHubIdentity, GitHubPort, IssueComment } from './github.js';
import { InputError } from './inputs.js';
import { readPlanComment, type ReviewedPlan } from './markers.js';

/** Same account: by numeric id when both are known (logins can be renamed), else by login. */
export const sameIdentity = (a: GitHubIdentity | undefined, b: GitHubIdentity): boolean => {
  if (a === undefined) return false;
  if (a.id !== undefined && b.id !== undefined) return a.id === b.id;
  return a.login.toLowerCase() === b.login.toLowerCase();
};

const firstLine = (body: string): string => /^[^\r\n]*/.exec(body)?.[0] ?? '';

/** This source's and directory's plan comments written by `author`, oldest first. */
export const planComments = (
  comments: readonly IssueComment[],
  marker: string,
  author: GitHubIdentity,
): IssueComment[] => comments.filter((c) => sameIdentity(c.author, author) && firstLine(c.body) === marker);

export type ReviewedLookup = { status: 'reviewed'; plan: ReviewedPlan } | { status: 'none'; why?: string };

/** The reviewed plan on a pull request, or why there is none (fail closed: anything doubtful is none). */
export const reviewedPlanIn = (
  comments: readonly IssueComment[],
  marker: string,
  author: GitHubIdentity,
): ReviewedLookup => {
  const mine = planComments(comments, marker, author);
  const [only] = mine;
  if (only === undefined) return { status: 'none' };
  if (mine.length > 1)
    return {
      status: 'none',
      why: `it has ${mine.length} plan comments by ${author.login} (one is expected; a new plan run on the pull request keeps one)`,
    };
  const read = readPlanComment(only.body, marker);
  if (read.status === 'no-digest')
    return {
      status: 'none',
      why: 'its plan comment shows a plan that cannot be applied (invalid manifests or a refused plan)',
    };
  if (read.status === 'unreadable') return { status: 'none', why: `its plan comment is not read: ${read.why}` };
  return { status: 'reviewed', plan: read.plan };
};

const withoutBotSuffix = (login: string): string => login.toLowerCase().replace(/\[bot\]$/, '');

/**
 * Whose plan comment counts. `configured` is the `plan-comment-author` input ('' when not set).
 * When the run writes the comment, the token must be that author (its comment would not count
 * otherwise); when it only reads, the configured login is taken as it is.
 */
export const planCommentAuthor = async (
  port: GitHubPort,
  configured: string,
  writes: boolean,
): Promise<GitHubIdentity> => {
  if (configured !== '' && !writes) return { login: configured };
  const self = await port.tokenIdentity();
  if (configured !== '' && withoutBotSuffix(configured) !== withoutBotSuffix(self.login))
    throw new InputError(
      `input \`plan-comment-author\` is '${configured}', but \`github-token\` writes as '${self.login}': its plan comment would not count on merge`,
    );
  return self;
};

/** Updates this run's plan comment in place (removing any duplicate of it), or creates it. */
export const upsertPlanComment = async (
  port: GitHubPort,
  pullRequest: number,
  marker: string,
  author: GitHubIdentity,
  body: string,
): Promise<{ created: boolean; removed: number }> => {
  const [first, ...duplicates] = planComments(await port.listComments(pullRequest), marker, author);
  for (const extra of duplicates) await port.deleteComment(extra.id);
  if (first) await port.updateComment(first.id, body);
  else await port.createComment(pullRequest, body);
  return { created: first === undefined, removed: duplicates.length };
};
