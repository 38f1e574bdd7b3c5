/**
 * What the run is about, from the runner's environment and the event payload
 * (`GITHUB_EVENT_PATH`), and what to do about it (pure): `auto` plans on a pull request and
 * applies on a push to the default branch; a pull request from a fork (no secrets, read-only
 * token) only validates.
 */
import { z } from 'zod';
import type { ActionInputs } from './inputs.js';

export interface RepoRef {
  owner: string;
  repo: string;
}

interface PullRequestEvent {
  number: number;
  /** The head is another repository (a fork): the run has no secrets and a read-only token. */
  fromFork: boolean;
}

export interface GitHubRun {
  eventName: string;
  repository: RepoRef;
  /** The commit the run is for (`after` of a push, `GITHUB_SHA` otherwise). */
  sha: string;
  /** `refs/heads/main`, `refs/pull/7/merge`, … */
  ref: string;
  /** A push's `before`: the branch's head before this push (its merges are the commits after it). */
  before?: string;
  defaultBranch?: string;
  pullRequest?: PullRequestEvent;
}

const repoSchema = z.looseObject({ full_name: z.string().optional(), fork: z.boolean().optional() });
/** Tolerant: only the fields used here; anything else in the payload is ignored. */
const payloadSchema = z.looseObject({
  ref: z.string().optional(),
  after: z.string().optional(),
  before: z.string().optional(),
  forced: z.boolean().optional(),
  repository: z.looseObject({ default_branch: z.string().optional(), full_name: z.string().optional() }).optional(),
  pull_request: z
    .looseObject({
      number: z.number().int(),
      head: z.looseObject({ repo: repoSchema.nullable().optional() }).optional(),
      base: z.looseObject({ repo: repoSchema.nullable().optional() }).optional(),
    })
    .optional(),
});

export class EventError extends Error {
  override readonly name = 'EventError';
}

const splitRepository = (fullName: string | undefined): RepoRef => {
  const [owner, repo, ...rest] = (fullName ?? '').split('/');
  if (!owner || !repo || rest.length > 0)
    throw new EventError(`GITHUB_REPOSITORY must be owner/name, got '${fullName ?? ''}'`);
  return { owner, repo };
};

/** Reads the run from the runner's variables and the parsed event payload (`{}` when there is none). */
export const describeRun = (env: NodeJS.ProcessEnv, payload: unknown): GitHubRun => {
  const parsed = payloadSchema.safeParse(payload ?? {});
  if (!parsed.success)
    throw new EventError(`the event payload (GITHUB_EVENT_PATH) is not a GitHub event: ${parsed.error.message}`);
  const event = parsed.data;
  const repository = splitRepository(env.GITHUB_REPOSITORY ?? event.repository?.full_name);
  const run: GitHubRun = {
    eventName: env.GITHUB_EVENT_NAME ?? '',
    repository,
    sha: event.after ?? env.GITHUB_SHA ?? '',
    ref: event.ref ?? env.GITHUB_REF ?? '',
  };
  // A forced push's `before` may not be an ancestor: then only the merges no run answered count.
  if (event.before && !event.forced && /^[0-9a-f]{40}$/.test(event.before) && !/^0+$/.test(event.before))
    run.before = event.before;
  if (event.repository?.default_branch) run.defaultBranch = event.repository.default_branch;
  const pr = event.pull_request;
  if (pr) {
    const head = pr.head?.repo;
    const base = pr.base?.repo;
    // A deleted fork has `head.repo: null`; treat it as a fork (it certainly has no secrets).
    const fromFork =
      head === null || head?.fork === true || (head?.full_name !== undefined && head.full_name !== base?.full_name);
    run.pullRequest = { number: pr.number, fromFork };
  }
  return run;
};

type RunPlan =
  | { mode: 'validate'; /** Why a plan was wanted but cannot run (shown in the job summary). */ reason?: string }
  | { mode: 'plan'; pullRequest?: number }
  | { mode: 'apply' }
  | { mode: 'drift' };

const PULL_REQUEST_EVENTS = new Set(['pull_request', 'pull_request_target']);

/** What this run does, from the `command` input and the event. */
export const decideRun = (inputs: Pick<ActionInputs, 'command' | 'apiKey'>, run: GitHubRun): RunPlan => {
  // A scheduled drift check (`command: drift`): its own mode, whatever the event.
  if (inputs.command === 'drift') return { mode: 'drift' };
  const isPullRequest = PULL_REQUEST_EVENTS.has(run.eventName) && run.pullRequest !== undefined;
  let mode: 'validate' | 'plan' | 'apply' = inputs.command === 'auto' ? 'plan' : inputs.command;
  if (inputs.command === 'auto' && run.eventName === 'push') {
    mode = run.defaultBranch !== undefined && run.ref === `refs/heads/${run.defaultBranch}` ? 'apply' : 'plan';
  }
  if (mode === 'validate') return { mode };
  if (isPullRequest && run.pullRequest?.fromFork) {
    return {
      mode: 'validate',
      reason:
        'This pull request comes from a fork: GitHub gives its workflow runs no secrets and a read-only token, so the manifests were validated but not planned, and no plan is reviewed here: with `on-plan-drift: fail` its merge applies nothing (the merge says so). To have its plan reviewed and applied, a maintainer pushes its commits to a branch of this repository and opens a pull request from it.',
    };
  }
  if (isPullRequest && inputs.apiKey === '') {
    return {
      mode: 'validate',
      reason:
        'No `api-key` was given to this run (a pull request from Dependabot, or a secret not set), so the manifests were validated but not planned.',
    };
  }
  if (mode === 'plan')
    return isPullRequest && run.pullRequest ? { mode, pullRequest: run.pullRequest.number } : { mode };
  return { mode };
};
