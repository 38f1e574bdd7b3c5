/**
 * The GitHub side of a drift pull request, through `@octokit/rest` at `GITHUB_API_URL`: who the
 * token is, a branch's pull requests (any state), open one, update one. A failure names the
 * operation, the status and GitHub's message, never the token.
 */
import { createOctokit } from '../api/octokit.js';
import type { ProxySettings } from '../api/proxy.js';

export interface DriftPull {
  number: number;
  state: 'open' | 'closed';
  merged: boolean;
  body: string;
  /** The account that opened it (its numeric id). */
  authorId?: number;
  url?: string;
}

export interface DriftPullPort {
  /** The numeric id of the account the token is. */
  identity(): Promise<number>;
  /** The pull requests whose head is `branch` of this repository, newest first. */
  pullsOf(branch: string): Promise<DriftPull[]>;
  create(input: { branch: string; base: string; title: string; body: string }): Promise<DriftPull>;
  update(number: number, input: { title: string; body: string }): Promise<DriftPull>;
}

const REQUEST_TIMEOUT_MS = 30_000;

export class DriftGitHubError extends Error {
  override readonly name = 'DriftGitHubError';
}

const failed = (operation: string, error: unknown): DriftGitHubError => {
  const status = (error as { status?: unknown }).status;
  const message = error instanceof Error ? error.message : String(error);
  return new DriftGitHubError(
    `GitHub API: ${operation} failed${typeof status === 'number' ? ` (HTTP ${status})` : ''}: ${message}`,
    { cause: error },
  );
};

interface PullJson {
  number: number;
  state: string;
  merged_at?: string | null;
  body?: string | null;
  user?: { id?: number } | null;
  html_url?: string;
}

const pullOf = (p: PullJson): DriftPull => ({
  number: p.number,
  state: p.state === 'open' ? 'open' : 'closed',
  merged: typeof p.merged_at === 'string',
  body: p.body ?? '',
  ...(typeof p.user?.id === 'number' ? { authorId: p.user.id } : {}),
  ...(p.html_url ? { url: p.html_url } : {}),
});

export interface DriftGitHubOptions {
  token: string;
  apiUrl: string;
  owner: string;
  repo: string;
  userAgent: string;
  proxy?: ProxySettings;
}

/** The port over `@octokit/rest`. */
export const octokitDriftPulls = (options: DriftGitHubOptions): DriftPullPort => {
  const octokit = createOctokit(options);
  // A hung GitHub must not hold a run (the watcher asks under the apply lease): each call has 30 s.
  octokit.hook.before('request', (request) => {
    request.request = {
      ...request.request,
      signal: request.request?.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    };
  });
  const repo = { owner: options.owner, repo: options.repo };
  const call = async <T>(operation: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw failed(operation, error);
    }
  };
  return {
    identity: () =>
      call('who the token is', async () => {
        // A personal token is its user; an installation token (the workflow's) is its app's bot, as GraphQL's viewer.
        try {
          return (await octokit.rest.users.getAuthenticated()).data.id;
        } catch (error) {
          if ((error as { status?: unknown }).status !== 403) throw error;
          const viewer = await octokit.graphql<{ viewer: { databaseId: number } }>('query { viewer { databaseId } }');
          return viewer.viewer.databaseId;
        }
      }),
    pullsOf: (branch) =>
      call(`list the pull requests of ${branch}`, async () => {
        const { data } = await octokit.rest.pulls.list({
          ...repo,
          state: 'all',
          head: `${options.owner}:${branch}`,
          sort: 'created',
          direction: 'desc',
          per_page: 50,
        });
        return (data as PullJson[]).map(pullOf);
      }),
    create: (input) =>
      call('open the drift pull request', async () => {
        const { data } = await octokit.rest.pulls.create({
          ...repo,
          head: input.branch,
          base: input.base,
          title: input.title,
          body: input.body,
        });
        return pullOf(data);
      }),
    update: (number, input) =>
      call(`update pull request #${number}`, async () => {
        const { data } = await octokit.rest.pulls.update({
          ...repo,
          pull_number: number,
          title: input.title,
          body: input.body,
        });
        return pullOf(data);
      }),
  };
};
