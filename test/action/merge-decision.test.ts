/**
 * The merge decision, end to end through the Action (the fake GitHub, the emulator): a run applies
 * only at the head of its branch and never a reviewed plan twice; a reviewed step the head dropped
 * is never reported as done; every merged pull request's reviewed plan is applied or its pull
 * request is told why not (several merges in one push, a run GitHub cancelled while pending); two
 * runs of one merge do not contradict each other.
 */
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/action/engine.js';
import { EXAMPLES, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { pullRequestPayload, pushPayload, reviewedDigest, runInProcess, workspaceEdits } from './harness.js';

const M0 = 'a'.repeat(40);
const M1 = 'b'.repeat(40);
const M2 = 'c'.repeat(40);
const M3 = 'd'.repeat(40);
/** Each test is several runs of the Action against the emulator: slow on a loaded machine. */
const SLOW = { timeout: 180_000 };
const STRANGER = { login: 'mallory', id: 666, type: 'User' as const, association: 'CONTRIBUTOR' };

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;
let catalog: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-action-');
  workspace = join(root, 'repo');
  catalog = join(workspace, 'catalog');
  await mkdir(workspace);
  await cp(EXAMPLES, catalog, { recursive: true });
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

const planPr = (pr: number, inputs: Record<string, string> = {}) =>
  runInProcess({
    eventName: 'pull_request',
    payload: pullRequestPayload({ number: pr }),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', ...inputs },
  });
/** The run of a push to main whose head is `after`. */
const push = (
  after: string,
  before: string | undefined,
  inputs: Record<string, string> = {},
  wrapEngine?: (engine: Engine) => Engine,
) =>
  runInProcess({
    eventName: 'push',
    payload: { ...pushPayload(), after, before: before ?? '0'.repeat(40) },
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', ...inputs },
    ...(wrapEngine ? { wrapEngine } : {}),
  });
/** Pull request `pr` merged as commit `sha` on top of `parent`. */
const merged = (pr: number, sha: string, parent: string) => {
  github.commits.set(sha, [{ number: pr, merged: true, mergeCommitSha: sha }]);
  github.parents.set(sha, parent);
  github.branches.set('main', sha);
};
/** The catalog as it was before any pull request: applied at M0. */
const baseline = async () => {
  github.branches.set('main', M0);
  expect((await push(M0, undefined, { 'on-plan-drift': 'apply', comment: 'false' })).code).toBe(0);
};

const writes = () => emulator.requests.filter((r) => r.method !== 'GET');
const commentsOn = (pr: number) => github.comments.filter((c) => c.issue === pr);
const file = (tag: string) => join(catalog, `.cortex/catalog/${tag}.yaml`);
const describeAs = async (tag: string, text: string) => {
  const yaml = await readFile(file(tag), 'utf8');
  await writeFile(file(tag), yaml.replace(/description: .*/, `description: ${text}`));
};
const restore = (tag: string) => cp(join(EXAMPLES, `.cortex/catalog/${tag}.yaml`), file(tag));

describe('a run applies only at the head of its branch, and never a reviewed plan twice', () => {
  it(
    're-running an old merge run after a later merge restored what it archived writes nothing and says why',
    SLOW,
    async () => {
      await baseline();
      await rm(file('notifications'));
      expect((await planPr(7, { prune: 'true' })).code).toBe(0);
      merged(7, M1, M0);
      expect((await push(M1, M0, { prune: 'true' })).code).toBe(0);
      const ui = workspaceEdits(emulator);
      expect(await ui.entityState('notifications')).toBe('archived');

      await restore('notifications');
      expect((await planPr(8, { prune: 'true' })).code).toBe(0);
      merged(8, M2, M1);
      expect((await push(M2, M1, { prune: 'true' })).code).toBe(0);
      expect(await ui.entityState('notifications')).toBe('active');

      // Re-run M1's run: its checkout has no manifest for notifications.
      await rm(file('notifications'));
      const before = writes().length;
      const commentsBefore = github.comments.length;
      const rerun = await push(M1, M0, { prune: 'true' });
      expect(rerun.code).toBe(0);
      expect(writes()).toHaveLength(before);
      expect(await ui.entityState('notifications')).toBe('active');
      expect(github.comments).toHaveLength(commentsBefore);
      const summary = rerun.runtime.summaries.join('\n');
      expect(summary).toContain('not the head of the branch');
      expect(summary).toContain(`the head of \`main\` is \`${M2.slice(0, 12)}\``);
      expect(summary).toContain('Nothing was applied');
      expect(rerun.runtime.outputs.get('changes')).toBe('false');

      // After a revert commit pushed on top (no pull request), re-running M2's run writes nothing either.
      await restore('notifications');
      github.branches.set('main', M3);
      const again = await push(M2, M1, { prune: 'true' });
      expect(again.code).toBe(0);
      expect(writes()).toHaveLength(before);
    },
  );

  it('re-running the head’s run after its reviewed plan was applied does not apply it again', SLOW, async () => {
    await baseline();
    const ui = workspaceEdits(emulator);
    await ui.archiveEntity('notifications');
    await describeAs('search-api', 'Product and catalog search.');
    const plan = await planPr(7);
    expect(plan.code).toBe(0);
    expect(commentsOn(7)[0]?.body).toContain('notifications');
    merged(7, M1, M0);
    expect((await push(M1, M0)).code).toBe(0);
    expect(await ui.entityState('notifications')).toBe('active');

    // Archived again in the UI; the reviewed plan said "unarchive" once, and it was done.
    await ui.archiveEntity('notifications');
    const before = writes().length;
    const rerun = await push(M1, M0);
    expect(rerun.code).toBe(1);
    expect(writes()).toHaveLength(before);
    expect(await ui.entityState('notifications')).toBe('archived');
    expect(rerun.runtime.summaries.join('\n')).toContain('The plan reviewed on #7 was applied already');
  });
});

describe('a reviewed step the head dropped is never reported as done', () => {
  it(
    'reviewed "update search-api and notifications", the head reverts notifications: refused, naming it',
    SLOW,
    async () => {
      await baseline();
      await describeAs('search-api', 'Product and catalog search.');
      await describeAs('notifications', 'Sends every notification.');
      expect((await planPr(7)).code).toBe(0);
      await restore('notifications'); // pushed after the review; its plan run was cancelled
      merged(7, M1, M0);
      const before = writes().length;
      const result = await push(M1, M0);
      expect(result.code).toBe(1);
      expect(writes()).toHaveLength(before);
      const comment = commentsOn(7).at(-1)?.body ?? '';
      expect(comment).toContain('**Reviewed, neither planned now nor live as reviewed:**');
      expect(comment).toContain(
        'update `entity/notifications`: reviewed, but neither planned now nor live as reviewed',
      );
      expect(comment).not.toContain('already done');
      expect(result.runtime.summaries.join('\n')).toContain('Nothing was applied');
    },
  );

  it(
    'a dropped step that is live as reviewed (done by hand meanwhile) is the rest of the plan, and applies',
    SLOW,
    async () => {
      await baseline();
      await describeAs('search-api', 'Product and catalog search.');
      await describeAs('notifications', 'Sends every notification.');
      expect((await planPr(7)).code).toBe(0);
      // The notifications change is applied by another run of the same manifests (a laptop).
      await restore('search-api');
      merged(7, M1, M0);
      expect((await push(M1, M0, { 'on-plan-drift': 'apply', comment: 'false' })).code).toBe(0);
      await describeAs('search-api', 'Product and catalog search.');
      const result = await push(M1, M0);
      expect(result.code).toBe(0);
      expect(commentsOn(7).at(-1)?.body).toContain('**the rest of the reviewed plan** (1 of its 2 steps');
    },
  );
});

describe('every merged pull request’s reviewed plan is applied, or its pull request is told why not', () => {
  /** #7 changes search-api and #8 notifications, both planned against the same state. */
  const twoPullRequests = async () => {
    await baseline();
    await describeAs('search-api', 'Product and catalog search.');
    expect((await planPr(7)).code).toBe(0);
    await restore('search-api');
    await describeAs('notifications', 'Sends every notification.');
    expect((await planPr(8)).code).toBe(0);
    await describeAs('search-api', 'Product and catalog search.');
    merged(7, M1, M0);
    merged(8, M2, M1);
  };

  const appliedTogether = async (before: string) => {
    const result = await push(M2, before);
    expect(result.code).toBe(0);
    const summary = result.runtime.summaries.join('\n');
    expect(summary).toContain(', the plan that was reviewed.');
    expect(summary).toContain('The reviewed plans of #7, #8, in merge order.');
    for (const [pr, other] of [
      [7, 8],
      [8, 7],
    ] as const) {
      const body = commentsOn(pr).at(-1)?.body ?? '';
      expect(body).toMatch(/^### ✅ cortex-sync apply: 2 ok, 0 failed, 0 skipped/);
      expect(body).toContain(`Applied in one plan with #${other}`);
    }
    const again = await push(M2, before);
    expect(again.code).toBe(0);
    expect(again.runtime.summaries.join('\n')).toContain('Nothing to apply.');
  };

  it('two pull requests merged in one push: each one’s reviewed plan is applied, and each is told', SLOW, async () => {
    await twoPullRequests();
    await appliedTogether(M0);
  });

  it(
    'a merge whose run was cancelled while pending is picked up by the next run and reported on its pull request',
    SLOW,
    async () => {
      await twoPullRequests();
      // Someone else forges the Action's record on #7, as if its merge had been answered.
      github.comments.push({
        id: 9_001,
        issue: 7,
        author: STRANGER,
        body: `ok\n<!-- cortex-sync:merge source=example-catalog dir=catalog outcome=applied digest=${reviewedDigest(commentsOn(7)[0]?.body ?? '')} -->`,
      });
      await appliedTogether(M1);
    },
  );

  it(
    'a pull request that changed no manifest (no plan comment), merged last in the push, does not stop the others',
    SLOW,
    async () => {
      await baseline();
      await describeAs('search-api', 'Product and catalog search.');
      expect((await planPr(7)).code).toBe(0);
      merged(7, M1, M0);
      merged(8, M2, M1); // a README change: its plan job planned nothing
      const result = await push(M2, M0);
      expect(result.code).toBe(0);
      expect(commentsOn(7).at(-1)?.body).toMatch(/^### ✅ cortex-sync apply: 1 ok, 0 failed, 0 skipped/);
      expect(commentsOn(8)).toEqual([]);
    },
  );

  it('three pull requests in one push, the middle one’s plan stale: nothing applied, each told why', SLOW, async () => {
    await baseline();
    await describeAs('search-api', 'Product and catalog search.');
    expect((await planPr(7)).code).toBe(0);
    await restore('search-api');
    await describeAs('notifications', 'Sends every notification.');
    expect((await planPr(8)).code).toBe(0);
    await restore('notifications');
    await describeAs('ledger-service', 'Keeps the ledger.');
    expect((await planPr(9)).code).toBe(0);
    await describeAs('search-api', 'Product and catalog search.');
    await describeAs('notifications', 'Sends every notification.');
    await workspaceEdits(emulator).archiveEntity('notifications'); // after #8's review: its plan is stale
    merged(7, M1, M0);
    merged(8, M2, M1);
    merged(9, M3, M2);
    const before = writes().length;
    const result = await push(M3, M0);
    expect(result.code).toBe(1);
    expect(writes()).toHaveLength(before);
    const own = commentsOn(8).at(-1)?.body ?? '';
    expect(own).toContain('**Nothing was applied**');
    expect(own).toMatch(
      /\*\*On this pull request:\*\*\n- `entity\/notifications`: reviewed update, now update with other field values\n/,
    );
    for (const pr of [7, 9]) {
      const body = commentsOn(pr).at(-1)?.body ?? '';
      expect(body).toContain('**Nothing was applied**');
      expect(body).toContain('- `entity/notifications` (reviewed on #8): reviewed update, now update');
      expect(body).not.toContain('**On this pull request:**');
    }
  });
});

describe('two runs of one merge at once', () => {
  it('the second sees the first applied the reviewed plan and says so, instead of "Rerun the job"', SLOW, async () => {
    await baseline();
    await describeAs('search-api', 'Product and catalog search.');
    expect((await planPr(7)).code).toBe(0);
    merged(7, M1, M0);
    // The first run applies between the second's check and its apply.
    const second = await push(M1, M0, {}, (engine) => ({
      ...engine,
      apply: (config, planLog, hooks) =>
        engine.apply(config, planLog, {
          ...hooks,
          onPlanned: async (pass) => {
            const go = (await hooks?.onPlanned?.(pass)) ?? true;
            expect((await push(M1, M0)).code).toBe(0);
            return go;
          },
        }),
    }));
    expect(second.code).toBe(0);
    expect(second.runtime.summaries.join('\n')).toContain('another run applied it');
    const bodies = commentsOn(7).map((c) => c.body);
    expect(bodies.filter((b) => b.includes('Rerun the job'))).toEqual([]);
    expect(bodies.filter((b) => b.startsWith('### ✅ cortex-sync apply'))).toHaveLength(1);
  });
});
