/**
 * The Action's port to GitHub — who the token is, the comments of a pull request, the pull
 * requests of a commit — and its `@octokit/rest` adapter, which calls the REST API at `GITHUB_API_URL` (GitHub Enterprise
 * Server; tests point it at a local fake).
 */
import { z } from 'zod';
import type { Octokit } from '@octokit/rest';
import { createOctokit } from '../api/octokit.js';
import { isProxyAuthError, proxyOf, type ProxySettings } from '../api/proxy.js';
import type { RepoRef } from './event.js';

/** Tolerant: only the fields used. */
const viewerSchema = z.looseObject({
  viewer: z.looseObject({ login: z.string().min(1), databaseId: z.number().int().nullable().optional() }),
});

/** Who wrote a comment, or who a token is: a login and, when GitHub gave it, the account's numeric id. */
export interface GitHubIdentity {
  login: string;
  id?: number;
}

/** An account found by its login: its id never changes, its login may (a rename). */
interface GitHubAccount {
  login: string;
  id: number;
  /** `User`, `Bot` or `Organization`. */
  type: string;
}

export interface IssueComment {
  id: number;
  body: string;
  author?: GitHubIdentity;
  /** GitHub's `created_at` and `updated_at` (ISO 8601, to the second), when given. */
  createdAt?: string;
  updatedAt?: string;
}

export interface AssociatedPullRequest {
  number: number;
  /** Merged pull requests have `merged_at` set; open ones do not. */
  merged: boolean;
  mergeCommitSha?: string;
}

/** A review of a pull request: its state, who submitted it and when (a pending one has no time). */
export interface PullRequestReview {
  state: string;
  author?: GitHubIdentity;
  /** GitHub's `submitted_at` (ISO 8601, to the second). */
  submittedAt?: string;
}

export interface GitHubPort {
  /** Who the token is: the identity its comments are written by. */
  tokenIdentity(): Promise<GitHubIdentity>;
  /** The account with this login (any letter case), or undefined when GitHub has none (404). */
  account(login: string): Promise<GitHubAccount | undefined>;
  /** Every comment on the pull request, oldest first. */
  listComments(pullRequest: number): Promise<IssueComment[]>;
  createComment(pullRequest: number, body: string): Promise<IssueComment>;
  updateComment(commentId: number, body: string): Promise<IssueComment>;
  deleteComment(commentId: number): Promise<void>;
  pullRequestsOfCommit(sha: string): Promise<AssociatedPullRequest[]>;
  /** Every review of the pull request, oldest first (`GET /repos/{o}/{r}/pulls/{n}/reviews`). */
  listReviews(pullRequest: number): Promise<PullRequestReview[]>;
  /** The commit at the head of a branch now. */
  branchHead(branch: string): Promise<string>;
  /** A commit's first parent, or undefined for a root commit or a commit GitHub does not have (404). */
  firstParent(sha: string): Promise<string | undefined>;
}

/** A failure talking to GitHub, with the operation and status; never the token. */
export class GitHubError extends Error {
  override readonly name = 'GitHubError';
}

const describe = (operation: string, error: unknown, proxy?: string): GitHubError => {
  if (isProxyAuthError(error) || isProxyAuthError((error as { cause?: unknown }).cause))
    // Octokit reports a failed fetch as a 500; it was the proxy's 407.
    return new GitHubError(
      `GitHub API: ${operation} failed (HTTP 407 from the proxy): the proxy (${proxy ?? 'HTTPS_PROXY or HTTP_PROXY'}) refused the credentials of its URL, or needs some`,
      { cause: error },
    );
  const status = (error as { status?: unknown }).status;
  const message = `${proxy !== undefined ? `through the proxy (${proxy}): ` : ''}${error instanceof Error ? error.message : String(error)}`;
  return new GitHubError(
    `GitHub API: ${operation} failed${typeof status === 'number' ? ` (HTTP ${status})` : ''}: ${message}`,
    { cause: error },
  );
};

/** How often and how long a GitHub call is retried when GitHub answers 5xx or 429. */
export const GITHUB_RETRY = {
  /** Tries in all, the first included. */
  attempts: 4,
  /** The pause before the second try, doubled before each next one, when GitHub names none. */
  firstPauseMs: 1_000,
  /** The longest `Retry-After` waited for: a run does not sit for minutes on a comment. */
  maxWaitMs: 60_000,
} as const;

const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** The `Retry-After` of a failed call, in ms (seconds or an HTTP date), if it has one. */
const retryAfterMs = (error: unknown, now: number): number | undefined => {
  const headers = (error as { response?: { headers?: Record<string, unknown> } }).response?.headers;
  const value = headers?.['retry-after'];
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  // Only an HTTP date (`Fri, 27 Nov 2026 10:00:30 GMT`): `-5` or `soon` is no Retry-After at all.
  if (!HTTP_DATE.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
};

/** GitHub's transient answers: a server error, too many requests, or a secondary rate limit (403 with `Retry-After`). */
const isTransient = (error: unknown): boolean => {
  const status = (error as { status?: unknown }).status;
  if (typeof status !== 'number') return false;
  return status >= 500 || status === 429 || (status === 403 && retryAfterMs(error, 0) !== undefined);
};

/**
 * Calls `call`, again after a pause while GitHub answers 5xx or 429 (at most `GITHUB_RETRY.attempts`
 * tries): the pause is GitHub's `Retry-After`, else 1 s, 2 s, 4 s. A `Retry-After` longer than
 * `GITHUB_RETRY.maxWaitMs` is not waited for: the call fails saying when GitHub asked to be tried again.
 */
export const withRetry = async <T>(
  call: () => Promise<T>,
  sleep: (ms: number) => Promise<void>,
  now: () => number = Date.now,
): Promise<T> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (!isTransient(error) || attempt >= GITHUB_RETRY.attempts) throw error;
      const asked = retryAfterMs(error, now());
      if (asked !== undefined && asked > GITHUB_RETRY.maxWaitMs) {
        const seconds = Math.ceil(asked / 1_000);
        throw Object.assign(error instanceof Error ? error : new Error(String(error)), {
          message: `${error instanceof Error ? error.message : String(error)} (GitHub asked to be tried again after Retry-After ${seconds} s, longer than the ${GITHUB_RETRY.maxWaitMs / 1_000} s a run waits)`,
        });
      }
      await sleep(asked ?? GITHUB_RETRY.firstPauseMs * 2 ** (attempt - 1));
    }
  }
};

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const guardedVia =
  (proxy: string | undefined, sleep: (ms: number) => Promise<void>) =>
  async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await withRetry(call, sleep);
    } catch (error) {
      throw describe(operation, error, proxy);
    }
  };

/** What the Action's GitHub client is made with. */
type OctokitOptions = {
  token: string;
  apiUrl: string;
  repository: RepoRef;
  userAgent: string;
  /** The proxy from the environment (`HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`), as the API client's. */
  proxy?: ProxySettings;
  /** How a pause before a retry is waited (tests record it instead). */
  sleep?: (ms: number) => Promise<void>;
};

/** The Octokit of `options`: its proxy, quiet, and the pause guard of its calls. */
const octokitOf = (options: OctokitOptions) => {
  const baseUrl = options.apiUrl.replace(/\/+$/, '');
  const guarded = guardedVia(proxyOf(options.proxy, baseUrl)?.from, options.sleep ?? realSleep);
  const octokit = createOctokit(options);
  return { octokit, guarded };
};

/** Who the token is and who a login is. */
const accountCalls = (
  octokit: Octokit,
  guarded: ReturnType<typeof guardedVia>,
): Pick<GitHubPort, 'tokenIdentity' | 'account'> => ({
  tokenIdentity: () =>
    guarded('find who github-token is (GET /user, else GraphQL viewer)', async () => {
      try {
        const { data } = await octokit.rest.users.getAuthenticated();
        return { login: data.login, id: data.id };
      } catch (error) {
        // An installation token (the workflow's GITHUB_TOKEN, a GitHub App's) may not read
        // /user ("Resource not accessible by integration"); GraphQL's viewer is its bot account.
        if ((error as { status?: unknown }).status !== 403) throw error;
      }
      const parsed = viewerSchema.safeParse(await octokit.graphql('query { viewer { login databaseId } }'));
      if (!parsed.success) throw new Error('the GraphQL answer has no viewer login');
      const { login, databaseId } = parsed.data.viewer;
      return typeof databaseId === 'number' ? { login, id: databaseId } : { login };
    }),
  account: (login) =>
    guarded(`find the account ${login} (GET /users/${login})`, async () => {
      try {
        const { data } = await octokit.rest.users.getByUsername({ username: login });
        return { login: data.login, id: data.id, type: data.type };
      } catch (error) {
        if ((error as { status?: unknown }).status === 404) return undefined;
        throw error;
      }
    }),
});

export const octokitGitHub = (options: OctokitOptions): GitHubPort => {
  const { octokit, guarded } = octokitOf(options);
  const { owner, repo } = options.repository;
  return {
    ...accountCalls(octokit, guarded),
    listComments: (pullRequest) =>
      guarded(`list comments of #${pullRequest}`, async () => {
        const comments: IssueComment[] = [];
        const pages = octokit.paginate.iterator(octokit.rest.issues.listComments, {
          owner,
          repo,
          issue_number: pullRequest,
          per_page: 100,
        });
        for await (const page of pages)
          for (const c of page.data)
            comments.push({
              id: c.id,
              body: c.body ?? '',
              ...(c.user ? { author: { login: c.user.login, id: c.user.id } } : {}),
              ...(c.created_at ? { createdAt: c.created_at } : {}),
              ...(c.updated_at ? { updatedAt: c.updated_at } : {}),
            });
        return comments;
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
    deleteComment: (commentId) =>
      guarded(`delete comment ${commentId}`, async () => {
        try {
          await octokit.rest.issues.deleteComment({ owner, repo, comment_id: commentId });
        } catch (error) {
          // Already gone (another run of the same pull request removed it): what was asked is done.
          if ((error as { status?: unknown }).status !== 404) throw error;
        }
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
    listReviews: (pullRequest) =>
      guarded(
        `list reviews of #${pullRequest} (GET /repos/${owner}/${repo}/pulls/${pullRequest}/reviews)`,
        async () => {
          const reviews: PullRequestReview[] = [];
          const pages = octokit.paginate.iterator(octokit.rest.pulls.listReviews, {
            owner,
            repo,
            pull_number: pullRequest,
            per_page: 100,
          });
          for await (const page of pages)
            for (const r of page.data)
              reviews.push({
                state: r.state,
                ...(r.user ? { author: { login: r.user.login, id: r.user.id } } : {}),
                ...(r.submitted_at ? { submittedAt: r.submitted_at } : {}),
              });
          return reviews;
        },
      ),
    branchHead: (branch) =>
      guarded(`read the head of ${branch} (GET /repos/${owner}/${repo}/git/ref/heads/${branch})`, async () => {
        const { data } = await octokit.rest.git.getRef({ owner, repo, ref: `heads/${branch}` });
        return data.object.sha;
      }),
    firstParent: (sha) =>
      guarded(`read commit ${sha.slice(0, 12)}`, async () => {
        try {
          const { data } = await octokit.rest.repos.getCommit({ owner, repo, ref: sha, per_page: 1 });
          return data.parents[0]?.sha;
        } catch (error) {
          if ((error as { status?: unknown }).status === 404) return undefined;
          throw error;
        }
      }),
  };
};

/** Wraps a port so that no comment it writes can hold a secret (the API key). */
export const redactingGitHub = (port: GitHubPort, redact: (text: string) => string): GitHubPort => ({
  ...port,
  createComment: (pr, body) => port.createComment(pr, redact(body)),
  updateComment: (id, body) => port.updateComment(id, redact(body)),
});
