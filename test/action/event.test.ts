/** What a run does, from the `command` input and the event: the rules of `auto`, forks, inputs. */
import { describe, expect, it } from 'vitest';
import { decideRun, describeRun } from '../../src/action/event.js';
import { InputError, readInputs } from '../../src/action/inputs.js';
import { pullRequestPayload, pushPayload } from './harness.js';

const env = (eventName: string): NodeJS.ProcessEnv => ({
  GITHUB_EVENT_NAME: eventName,
  GITHUB_REPOSITORY: 'example/catalog',
});
const withKey = { command: 'auto' as const, apiKey: 'k' };

describe('decideRun', () => {
  it('auto: plans a pull request, applies a push to the default branch, plans a push elsewhere', () => {
    expect(decideRun(withKey, describeRun(env('pull_request'), pullRequestPayload()))).toEqual({
      mode: 'plan',
      pullRequest: 7,
    });
    expect(decideRun(withKey, describeRun(env('push'), pushPayload()))).toEqual({ mode: 'apply' });
    const elsewhere = { ...pushPayload(), ref: 'refs/heads/feature' };
    expect(decideRun(withKey, describeRun(env('push'), elsewhere))).toEqual({ mode: 'plan' });
    expect(decideRun(withKey, describeRun(env('workflow_dispatch'), {}))).toEqual({ mode: 'plan' });
  });

  it('a pull request from a fork, or without a key, only validates and says why', () => {
    const fork = decideRun(withKey, describeRun(env('pull_request'), pullRequestPayload({ fork: true })));
    expect(fork).toMatchObject({ mode: 'validate', reason: expect.stringContaining('fork') });
    const noKey = decideRun({ command: 'auto', apiKey: '' }, describeRun(env('pull_request'), pullRequestPayload()));
    expect(noKey).toMatchObject({ mode: 'validate', reason: expect.stringContaining('api-key') });
    // A deleted fork (head.repo null) has no secrets either.
    const deleted = pullRequestPayload();
    (deleted.pull_request as { head: { repo: unknown } }).head.repo = null;
    expect(decideRun(withKey, describeRun(env('pull_request'), deleted)).mode).toBe('validate');
  });

  it('an explicit command wins over the event', () => {
    expect(decideRun({ command: 'validate', apiKey: 'k' }, describeRun(env('push'), pushPayload()))).toEqual({
      mode: 'validate',
    });
    expect(decideRun({ command: 'apply', apiKey: 'k' }, describeRun(env('workflow_dispatch'), {}))).toEqual({
      mode: 'apply',
    });
  });

  it('reads the commit of a push from the payload and refuses a malformed repository name', () => {
    expect(describeRun(env('push'), pushPayload()).sha).toBe('9d8c7b6a5f4e3d2c1b0a99887766554433221100');
    expect(() => describeRun({ GITHUB_REPOSITORY: 'no-slash' }, {})).toThrow(/GITHUB_REPOSITORY must be owner\/name/);
  });
});

describe('readInputs', () => {
  const get = (values: Record<string, string>) => (name: string) => values[name] ?? '';

  it('has the documented defaults', () => {
    expect(readInputs(get({}))).toEqual({
      command: 'auto',
      dir: '.',
      apiKey: '',
      githubToken: '',
      comment: true,
      onPlanDrift: 'fail',
      planCommentAuthor: '',
      requireApproval: false,
      // Always said, `false` included: cortex-sync.yaml cannot turn these on under the Action.
      said: {
        dir: '.',
        prune: false,
        allowMassDelete: false,
        forceEntityTypeSchema: false,
        allowTakeover: false,
        forceConflicts: false,
      },
    });
  });

  it('names the input of a bad value', () => {
    expect(() => readInputs(get({ command: 'deploy' }))).toThrow(InputError);
    expect(() => readInputs(get({ command: 'deploy' }))).toThrow(
      /input `command`: expected one of auto, validate, plan, apply/,
    );
    expect(() => readInputs(get({ 'on-plan-drift': 'ignore' }))).toThrow(/input `on-plan-drift`/);
    expect(() => readInputs(get({ prune: 'yes' }))).toThrow(/input `prune`: expected true or false, got 'yes'/);
    expect(() => readInputs(get({ 'plan-comment-author': '@team' }))).toThrow(/input `plan-comment-author`/);
    expect(readInputs(get({ 'plan-comment-author': 'cortex-planner[bot]' })).planCommentAuthor).toBe(
      'cortex-planner[bot]',
    );
  });
});

describe('describeRun: the push a merge run answers for', () => {
  it('takes the push’s before, but not from a forced push (it may not be an ancestor) nor a new branch', () => {
    expect(describeRun(env('push'), pushPayload()).before).toBe('1f0c3a8b6d2e4f5a7b9c0d1e2f3a4b5c6d7e8f90');
    expect(describeRun(env('push'), { ...pushPayload(), forced: true }).before).toBeUndefined();
    expect(describeRun(env('push'), { ...pushPayload(), before: '0'.repeat(40) }).before).toBeUndefined();
  });
});
