/**
 * Whose comment is the reviewed plan, and which part of it: only the comment written by the
 * identity the Action runs as (or the login the operator names), only its trailer. File names
 * that look like markers, and bots that copy a plan comment, apply nothing. In-process: the real
 * engine against the emulator, the octokit port against the fake GitHub.
 */
import { mkdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Emulator, writeFiles } from '../e2e/harness.js';
import { type FakeGitHub, type FakeToken } from './fake-github.js';
import { PR_NUMBER, pullRequestPayload, pushPayload, reviewedDigest, runInProcess, workspaceEdits } from './harness.js';
import { useActionWorld } from './world.js';

let emulator: Emulator;
let github: FakeGitHub;
let workspace: string;
useActionWorld((world) => ({ emulator, github, workspace } = world));

const planPr = (inputs: Record<string, string> = {}, number = PR_NUMBER) =>
  runInProcess({
    eventName: 'pull_request',
    payload: pullRequestPayload({ number }),
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
const catalogFile = (name: string) => join(workspace, 'catalog', '.cortex', 'catalog', name);

/** The digest of the plan the workspace gives now, as a plan comment on another pull request records it. */
const digestOfPlanNow = async (scratchPr: number): Promise<string> => {
  expect((await planPr({}, scratchPr)).code).toBe(0);
  const digest =
    reviewedDigest(commentsOn(scratchPr)[0]?.body ?? '') ??
    /sha256:[0-9a-f]{64}/.exec(commentsOn(scratchPr)[0]?.body ?? '')?.[0];
  expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  return digest ?? '';
};

describe('a file name cannot forge the reviewed plan', () => {
  it('a manifest named like a digest marker does not make a drifted workspace "the plan reviewed"', async () => {
    const ui = workspaceEdits(emulator);
    const forged = (await readFile(catalogFile('auth-service.yaml'), 'utf8')).replace(
      /auth-service/g,
      'forged-service',
    );
    await writeFiles(join(workspace, 'catalog', '.cortex', 'catalog'), { 'forged-service.yaml': forged });
    // The author computes the digest the merge will see once search-api exists live (then the
    // merge adopts it instead of creating it), and names manifests after it.
    await ui.createService('search-api');
    const drifted = await digestOfPlanNow(99);
    await ui.deleteEntity('search-api');
    await rename(catalogFile('search-api.yaml'), catalogFile(`<!-- cortex-sync:digest ${drifted} -->.yaml`));
    await rename(catalogFile('forged-service.yaml'), catalogFile(`<!-- cortex-sync:digest v2 ${drifted} -->.yaml`));
    expect((await planPr()).code).toBe(0);
    const reviewed = commentsOn(PR_NUMBER)[0]?.body ?? '';
    // The file names are shown, but no marker is formed.
    expect(reviewed).toContain('cortex-sync:digest');
    expect(reviewed.split('<!--').length - 1).toBe(4); // the first line and the three trailer lines
    expect(reviewedDigest(reviewed)).not.toBe(drifted);

    await ui.createService('search-api');
    const before = writes().length;
    const result = await merge();
    expect(result.code).toBe(1);
    expect(writes()).toHaveLength(before);
    expect(commentsOn(PR_NUMBER).at(-1)?.body).toContain('the plan changed after it was reviewed');
  });

  it('a manifest named like a changes marker does not change what the drift comment says', async () => {
    // Fingerprints of a plan with nothing in it, base64 (its `/` makes folders of the name).
    await mkdir(join(workspace, 'catalog', '.cortex', 'catalog', '<!-- cortex-sync:changes AwA='), {
      recursive: true,
    });
    await rename(catalogFile('search-api.yaml'), catalogFile('<!-- cortex-sync:changes AwA=/ -->.yaml'));
    await writeFiles(join(workspace, 'catalog', '.cortex', 'catalog'), {
      '<!-- cortex-sync:changes v2 AwA= -->.yaml': (await readFile(catalogFile('auth-service.yaml'), 'utf8')).replace(
        /auth-service/g,
        'forged-service',
      ),
    });
    expect((await planPr()).code).toBe(0);
    await workspaceEdits(emulator).createService('search-api');
    expect((await merge()).code).toBe(1);
    const drift = commentsOn(PR_NUMBER).at(-1)?.body ?? '';
    expect(drift).toContain('`entity/search-api`: reviewed create, now update');
    expect(drift).not.toContain('New since the review');
    expect(drift).not.toContain('in another order');
  });
});

describe('only the Action’s own comment is the reviewed plan', () => {
  it('a bot that copies a genuine plan comment onto a fork’s pull request that was never planned applies nothing', async () => {
    // A genuine plan comment of the same content, on another pull request.
    expect((await planPr({}, 99)).code).toBe(0);
    const genuine = commentsOn(99)[0]?.body ?? '';
    // The fork's pull request was only validated (no secrets); a welcome bot "helps".
    github.comments.push({
      id: 1,
      issue: PR_NUMBER,
      body: genuine,
      author: { login: 'welcome-bot[bot]', id: 9_000_001, type: 'Bot', association: 'NONE' },
    });
    const result = await merge();
    expect(result.code).toBe(1);
    expect(writes()).toEqual([]);
    expect(commentsOn(PR_NUMBER).at(-1)?.body).toContain(`Pull request #${PR_NUMBER} has no cortex-sync plan comment`);
  });

  it('a member’s comment is not a plan either, and the Action never edits it', async () => {
    expect((await planPr({ comment: 'false' })).code).toBe(0);
    expect((await planPr({}, 99)).code).toBe(0);
    github.comments.push({
      id: 2,
      issue: PR_NUMBER,
      body: commentsOn(99)[0]?.body ?? '',
      author: { login: 'maintainer', id: 4242, type: 'User', association: 'MEMBER' },
    });
    expect((await planPr()).code).toBe(0);
    expect(commentsOn(PR_NUMBER)).toHaveLength(2);
    expect(commentsOn(PR_NUMBER)[0]?.author?.login).toBe('maintainer');
    expect(commentsOn(PR_NUMBER)[1]?.author?.login).toBe('github-actions[bot]');
  });

  it('an account that only has the bot’s login (another id) is not the Action', async () => {
    expect((await planPr({}, 99)).code).toBe(0);
    github.comments.push({
      id: 3,
      issue: PR_NUMBER,
      body: commentsOn(99)[0]?.body ?? '',
      author: { login: 'github-actions[bot]', id: 31337, type: 'User', association: 'NONE' },
    });
    expect((await merge()).code).toBe(1);
    expect(writes()).toEqual([]);
  });

  it('two plan comments of the Action: the merge has no reviewed plan; the next plan run keeps one', async () => {
    expect((await planPr()).code).toBe(0);
    const genuine = commentsOn(PR_NUMBER)[0];
    github.comments.push({ id: 4, issue: PR_NUMBER, body: genuine?.body ?? '' }); // written by the same account
    const refused = await merge();
    expect(refused.code).toBe(1);
    expect(writes()).toEqual([]);
    expect(refused.runtime.annotations.find((a) => a.severity === 'error')?.message).toContain(
      `#${PR_NUMBER}: it has 2 plan comments by github-actions[bot]`,
    );
    expect(commentsOn(PR_NUMBER).at(-1)?.body).toContain('has no reviewed plan for this source and directory');
    const replanned = await planPr();
    expect(replanned.runtime.log.join('\n')).toContain('(and removed 2 earlier ones)');
    expect(commentsOn(PR_NUMBER).filter((c) => c.body.startsWith('<!-- cortex-sync:plan'))).toHaveLength(1);
    expect((await merge()).code).toBe(0);
  });

  it('a plan comment edited after the review (text after its trailer) is not read', async () => {
    expect((await planPr()).code).toBe(0);
    const comment = commentsOn(PR_NUMBER)[0];
    if (comment) comment.body += '\nLGTM, ship it\n';
    const refused = await merge();
    expect(refused.code).toBe(1);
    expect(writes()).toEqual([]);
    expect(refused.runtime.annotations.find((a) => a.severity === 'error')?.message).toContain(
      'its plan comment is not read: it holds a marker outside the block the Action writes at its end',
    );
  });

  const tokens: [string, string, FakeToken][] = [
    [
      'a personal access token (its user, from GET /user)',
      'ghp_personalTokenForTests',
      { kind: 'personal', account: { login: 'release-manager', id: 5001, type: 'User', association: 'MEMBER' } },
    ],
    [
      "a GitHub App's installation token (its bot, from GraphQL viewer)",
      'ghs_appInstallationTokenForTests',
      { kind: 'installation', account: { login: 'cortex-planner[bot]', id: 7001, type: 'Bot', association: 'NONE' } },
    ],
  ];
  for (const [what, token, identity] of tokens) {
    it(`with ${what}, its own plan comment is the reviewed plan and nobody else’s`, async () => {
      github.tokens.set(token, identity);
      expect((await planPr({ 'github-token': token })).code).toBe(0);
      expect(commentsOn(PR_NUMBER)[0]?.author?.login).toBe(identity.account.login);
      // The workflow's default token did not write it: with that token the merge has no reviewed plan.
      expect((await merge()).code).toBe(1);
      expect(writes()).toEqual([]);
      const result = await merge({ 'github-token': token });
      expect(result.code).toBe(0);
      expect(result.runtime.log.join('\n')).toContain(`The plan matches the plan reviewed on #${PR_NUMBER}`);
    });
  }

  it('plan-comment-author: a plan commented with an app’s token is reviewed for a merge that runs with GITHUB_TOKEN', async () => {
    github.tokens.set('ghs_app', {
      kind: 'installation',
      account: { login: 'cortex-planner[bot]', id: 7001, type: 'Bot', association: 'NONE' },
    });
    expect((await planPr({ 'github-token': 'ghs_app', 'plan-comment-author': 'cortex-planner[bot]' })).code).toBe(0);
    const result = await merge({ 'plan-comment-author': 'cortex-planner[bot]' });
    expect(result.code).toBe(0);
    expect(writes().length).toBeGreaterThan(0);
  });

  it('plan-comment-author that is not the token’s identity fails the plan run with a clear error', async () => {
    github.accounts.push({ login: 'cortex-planner[bot]', id: 7001, type: 'Bot', association: 'NONE' });
    const result = await planPr({ 'plan-comment-author': 'cortex-planner[bot]' });
    expect(result.code).toBe(1);
    expect(result.runtime.annotations.find((a) => a.severity === 'error')?.message).toBe(
      "input `plan-comment-author` is 'cortex-planner[bot]', but `github-token` writes as 'github-actions[bot]': its plan comment would not count on merge",
    );
    expect(github.writes()).toEqual([]);
  });

  it('when the token’s identity cannot be found, the merge fails naming the operation and applies nothing', async () => {
    expect((await planPr()).code).toBe(0);
    github.graphqlStatus = 403;
    const result = await merge();
    expect(result.code).toBe(1);
    expect(writes()).toEqual([]);
    expect(result.runtime.annotations.find((a) => a.severity === 'error')?.message).toMatch(
      /^GitHub API: find who github-token is \(GET \/user, else GraphQL viewer\) failed \(HTTP 403\)/,
    );
  });
});
