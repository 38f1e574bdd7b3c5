/**
 * The Action's port to GitHub — the sticky comment, the pull requests of a commit, a new comment —
 * and its `@octokit/rest` adapter, which calls the REST API at `GITHUB_API_URL` (GitHub Enterprise
 * Server; tests point it at a local fake).
 */
import { Octokit } from '@octokit/rest';
import type { RepoRef } from './event.js';

export interface IssueComment {
  id: number;
  body: string;
}

export interface AssociatedPullRequest {
  number: number;
  /** Merged pull requests have `merged_at` set; open ones do not. */
  merged: boolean;
  mergeCommitSha?: string;
}

/**
 * Who may have written a plan comment: a bot (the workflow's token posts as `github-actions[bot]`
 * or an app) or someone with write access (a personal token). Anyone can comment on a public
 * pull request, so a comment from anyone else that carries the marker is ignored: it can neither
 * take the plan comment's place nor forge a reviewed digest.
 */
const TRUSTED_ASSOCIATIONS = new Set(['OWNER', 'MEMBER', 'COLLABORATOR']);
export const isTrustedAuthor = (comment: { user?: { type?: string } | null; author_association?: string }): boolean =>
  comment.user?.type === 'Bot' || TRUSTED_ASSOCIATIONS.has(comment.author_association ?? '');

export interface GitHubPort {
  /** The first comment on the pull request whose body contains `marker`, written by a trusted author. */
  findComment(pullRequest: number, marker: string): Promise<IssueComment | undefined>;
  createComment(pullRequest: number, body: string): Promise<IssueComment>;
  updateComment(commentId: number, body: string): Promise<IssueComment>;
  pullRequestsOfCommit(sha: string): Promise<AssociatedPullRequest[]>;
}

/** Updates the comment holding `marker` in place, or creates it: never a second one. */
export const upsertComment = async (
  port: GitHubPort,
  pullRequest: number,
  marker: string,
  body: string,
): Promise<{ comment: IssueComment; created: boolean }> => {
  const existing = await port.findComment(pullRequest, marker);
  if (existing) return { comment: await port.updateComment(existing.id, body), created: false };
  return { comment: await port.createComment(pullRequest, body), created: true };
};

/** A failure talking to GitHub, with the operation and status; never the token. */
export class GitHubError extends Error {
  override readonly name = 'GitHubError';
}

const describe = (operation: string, error: unknown): GitHubError => {
  const status = (error as { status?: unknown }).status;
  const message = error instanceof Error ? error.message : String(error);
  return new GitHubError(
    `GitHub API: ${operation} failed${typeof status === 'number' ? ` (HTTP ${status})` : ''}: ${message}`,
    { cause: error },
  );
};

const guarded = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    throw describe(operation, error);
  }
};

export const octokitGitHub = (options: {
  token: string;
  apiUrl: string;
  repository: RepoRef;
  userAgent: string;
}): GitHubPort => {
  const octokit = new Octokit({
    auth: options.token,
    baseUrl: options.apiUrl.replace(/\/+$/, ''),
    userAgent: options.userAgent,
    // Quiet: failures are reported by the caller with the operation named.
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
  const { owner, repo } = options.repository;
  return {
    findComment: (pullRequest, marker) =>
      guarded(`list comments of #${pullRequest}`, async () => {
        const pages = octokit.paginate.iterator(octokit.rest.issues.listComments, {
          owner,
          repo,
          issue_number: pullRequest,
          per_page: 100,
        });
        for await (const page of pages) {
          const found = page.data.find((c) => c.body?.includes(marker) && isTrustedAuthor(c));
          if (found) return { id: found.id, body: found.body ?? '' };
        }
        return undefined;
      }),
    createComment: (pullRequest, body) =>
      guarded(`comment on #${pullRequest}`, async () => {
        const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: pullRequest, body });
        return { id: data.id, body: data.body ?? '' };
      }),
    updateComment: (commentId, body) =>
      guarded(`update comment ${commentId}`, async () => {
        const { data } = await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body });
        return { id: data.id, body: data.body ?? '' };
      }),
    pullRequestsOfCommit: (sha) =>
      guarded(`list pull requests of commit ${sha.slice(0, 12)}`, async () => {
        const { data } = await octokit.rest.repos.listPullRequestsAssociatedWithCommit({
          owner,
          repo,
          commit_sha: sha,
          per_page: 100,
        });
        return data.map((pr) => ({
          number: pr.number,
          merged: pr.merged_at !== null && pr.merged_at !== undefined,
          ...(pr.merge_commit_sha ? { mergeCommitSha: pr.merge_commit_sha } : {}),
        }));
      }),
  };
};

/** Wraps a port so that no comment it writes can hold a secret (the API key). */
export const redactingGitHub = (port: GitHubPort, redact: (text: string) => string): GitHubPort => ({
  findComment: (pr, marker) => port.findComment(pr, marker),
  createComment: (pr, body) => port.createComment(pr, redact(body)),
  updateComment: (id, body) => port.updateComment(id, redact(body)),
  pullRequestsOfCommit: (sha) => port.pullRequestsOfCommit(sha),
});
