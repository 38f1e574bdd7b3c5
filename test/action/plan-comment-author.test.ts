/**
 * `plan-comment-author` names an account by login; the Action resolves it to the account's id
 * (`GET /users/{login}`) once per run and counts only comments whose author has that id, on pull
 * request runs and merges alike. A login that lacks the `[bot]` of the app it means is refused,
 * saying what to write: a personal account registered under the bare name must never stand in for
 * the app. In-process: the real engine against the emulator, the octokit port against the fake GitHub.
 */
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXAMPLES, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { type FakeAccount, type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { MERGE_SHA, PR_NUMBER, pullRequestPayload, pushPayload, runInProcess } from './harness.js';

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;

const APP_TOKEN = 'ghs_appInstallationTokenForTests';
const APP: FakeAccount = { login: 'cortex-planner[bot]', id: 7001, type: 'Bot', association: 'NONE' };
/** Anyone may register the app's name without `[bot]` as a personal account. */
const SQUATTER: FakeAccount = { login: 'cortex-planner', id: 666, type: 'User', association: 'NONE' };

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  github.tokens.set(APP_TOKEN, { kind: 'installation', account: APP });
  root = await tempDir('cortex-sync-author-');
  workspace = join(root, 'repo');
  await mkdir(workspace);
  await cp(EXAMPLES, join(workspace, 'catalog'), { recursive: true });
  github.commits.set(MERGE_SHA, [{ number: PR_NUMBER, merged: true, mergeCommitSha: MERGE_SHA }]);
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

const planPr = (inputs: Record<string, string> = {}) =>
  runInProcess({
    eventName: 'pull_request',
    payload: pullRequestPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', ...inputs },
  });
const merge = (inputs: Record<string, string> = {}) =>
  runInProcess({
    eventName: 'push',
    payload: pushPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', ...inputs },
  });

const writes = () => emulator.requests.filter((r) => r.method !== 'GET');
const commentsOn = (pr: number) => github.comments.filter((c) => c.issue === pr);
const errorOf = (run: Awaited<ReturnType<typeof planPr>>) =>
  run.runtime.annotations.find((a) => a.severity === 'error')?.message;
/** The app's genuine plan comment, and a copy of it posted by `account`. */
const planByAppThenCopyBy = async (account: FakeAccount) => {
  expect((await planPr({ 'github-token': APP_TOKEN, 'plan-comment-author': 'cortex-planner[bot]' })).code).toBe(0);
  const genuine = commentsOn(PR_NUMBER)[0];
  expect(genuine?.author?.id).toBe(APP.id);
  github.comments.push({ id: 1, issue: PR_NUMBER, body: genuine?.body ?? '', author: account });
};

const WRITE_THE_BOT =
  "input `plan-comment-author` is 'cortex-planner', but the app's comments are written by its bot account 'cortex-planner[bot]': write `plan-comment-author: cortex-planner[bot]`";

describe('plan-comment-author without [bot]', () => {
  it('is refused on a pull request run that comments with the app’s token, saying what to write; nothing is commented', async () => {
    const result = await planPr({ 'github-token': APP_TOKEN, 'plan-comment-author': 'cortex-planner' });
    expect(result.code).toBe(1);
    expect(errorOf(result)).toContain(WRITE_THE_BOT);
    expect(github.writes()).toEqual([]);
  });

  it('is refused on the merge, where a personal account of that name copied the plan: nothing is applied', async () => {
    github.accounts.push(SQUATTER);
    await planByAppThenCopyBy(SQUATTER);
    const result = await merge({ 'plan-comment-author': 'cortex-planner' });
    expect(result.code).toBe(1);
    expect(writes()).toEqual([]);
    expect(errorOf(result)).toContain(WRITE_THE_BOT);
  });

  it('is refused on the merge even when no account of the bare name exists', async () => {
    await planByAppThenCopyBy({ ...SQUATTER, id: 667 });
    const result = await merge({ 'plan-comment-author': 'cortex-planner' });
    expect(result.code).toBe(1);
    expect(writes()).toEqual([]);
    expect(errorOf(result)).toContain(WRITE_THE_BOT);
  });
});

describe('plan-comment-author is matched by account id', () => {
  it('written in another letter case, it is the same account on both runs', async () => {
    expect((await planPr({ 'github-token': APP_TOKEN, 'plan-comment-author': 'Cortex-Planner[BOT]' })).code).toBe(0);
    const result = await merge({ 'plan-comment-author': 'CORTEX-PLANNER[bot]' });
    expect(result.code).toBe(0);
    expect(writes().length).toBeGreaterThan(0);
  });

  it('a comment by another account with the same login (another id) does not count, and makes no second plan', async () => {
    await planByAppThenCopyBy({ ...APP, id: 31337, type: 'User' });
    const result = await merge({ 'plan-comment-author': 'cortex-planner[bot]' });
    expect(result.code).toBe(0);
    expect(result.runtime.log.join('\n')).toContain(`The plan matches the plan reviewed on #${PR_NUMBER}`);
  });

  it('a look-alike account (`cortex-planner-bot`) copying the plan is not a review', async () => {
    const lookalike: FakeAccount = { login: 'cortex-planner-bot', id: 668, type: 'User', association: 'NONE' };
    github.accounts.push(lookalike);
    expect((await planPr({ 'github-token': APP_TOKEN, 'plan-comment-author': 'cortex-planner[bot]' })).code).toBe(0);
    const genuine = commentsOn(PR_NUMBER)[0];
    // Only the look-alike's copy is left: the app's own comment is gone.
    github.comments.splice(github.comments.indexOf(genuine!), 1, { ...genuine!, id: 2, author: lookalike });
    const result = await merge({ 'plan-comment-author': 'cortex-planner[bot]' });
    expect(result.code).toBe(1);
    expect(writes()).toEqual([]);
  });

  it('an account renamed after the review still counts once the input names its new login', async () => {
    const person: FakeAccount = { login: 'release-manager', id: 5001, type: 'User', association: 'MEMBER' };
    github.tokens.set('ghp_personal', { kind: 'personal', account: person });
    expect((await planPr({ 'github-token': 'ghp_personal', 'plan-comment-author': 'release-manager' })).code).toBe(0);
    person.login = 'release-lead';
    for (const c of github.comments) if (c.author?.id === person.id) c.author = person;
    const result = await merge({ 'plan-comment-author': 'release-lead' });
    expect(result.code).toBe(0);
    expect(writes().length).toBeGreaterThan(0);
  });

  it('an account that no longer exists (404) refuses the merge, naming the input', async () => {
    await planByAppThenCopyBy(SQUATTER);
    const result = await merge({ 'plan-comment-author': 'gone-user' });
    expect(result.code).toBe(1);
    expect(writes()).toEqual([]);
    expect(errorOf(result)).toContain(
      "input `plan-comment-author`: GitHub has no account 'gone-user' (GET /users/gone-user: 404)",
    );
  });
});
