/**
 * `require-approval`: on merge, the plan comment is the reviewed plan only when an approving
 * review was submitted after the comment was last written (GitHub's `pulls/{n}/reviews`). A plan
 * re-made after the approval (a new commit) was not approved: nothing is applied, and the pull
 * request is told why. End to end through the Action with the fake GitHub and the emulator.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Emulator } from '../e2e/harness.js';
import { ACTIONS_BOT, type FakeGitHub } from './fake-github.js';
import { PR_NUMBER } from './harness.js';
import { runEvent, useActionWorld } from './world.js';

let emulator: Emulator;
let github: FakeGitHub;
let workspace: string;
useActionWorld((world) => ({ emulator, github, workspace } = world));

const world = () => ({ emulator, github, workspace });
const writes = () => emulator.requests.filter((r) => r.method !== 'GET');
const lastComment = () => github.comments.filter((c) => c.issue === PR_NUMBER).at(-1)?.body ?? '';
const describeSearch = async (text: string) => {
  const file = join(workspace, 'catalog/.cortex/catalog/search-api.yaml');
  await writeFile(file, (await readFile(file, 'utf8')).replace(/description: .*/, `description: ${text}`));
};

describe('require-approval: a plan changed after the last approval is not a review', { timeout: 180_000 }, () => {
  it('approved after the plan comment: applied', async () => {
    expect((await runEvent(world(), 'pull_request')).code).toBe(0);
    github.review(PR_NUMBER, 'APPROVED');
    const merge = await runEvent(world(), 'push', { 'require-approval': 'true' });
    expect(merge.code, merge.runtime.summaries.join('\n')).toBe(0);
    expect(writes().length).toBeGreaterThan(0);
  });

  it('the plan re-made after the approval: nothing applied, the pull request told why', async () => {
    expect((await runEvent(world(), 'pull_request')).code).toBe(0);
    github.review(PR_NUMBER, 'APPROVED');
    // A new commit after the approval: a new plan comment nobody approved.
    await describeSearch('Changed after the approval.');
    expect((await runEvent(world(), 'pull_request')).code).toBe(0);
    const before = writes().length;
    const merge = await runEvent(world(), 'push', { 'require-approval': 'true' });
    expect(merge.code).toBe(1);
    expect(writes().length).toBe(before);
    expect(lastComment()).toContain('after the last approving review');
    expect(github.calls.some((c) => c.path.endsWith(`/pulls/${PR_NUMBER}/reviews`))).toBe(true);
  });

  it('no approval, an approval withdrawn (changes requested, dismissed), or one by the plan comment’s own account', async () => {
    expect((await runEvent(world(), 'pull_request')).code).toBe(0);
    const refused = async () => {
      const merge = await runEvent(world(), 'push', { 'require-approval': 'true' });
      expect(merge.code).toBe(1);
      expect(writes()).toEqual([]);
      expect(lastComment()).toContain('no approving review standing');
    };
    await refused();
    github.review(PR_NUMBER, 'APPROVED', ACTIONS_BOT);
    await refused();
    github.review(PR_NUMBER, 'APPROVED');
    github.review(PR_NUMBER, 'CHANGES_REQUESTED');
    await refused();
    github.review(PR_NUMBER, 'APPROVED');
    const approval = github.reviews.at(-1);
    if (approval) approval.state = 'DISMISSED';
    await refused();
  });

  it('without require-approval the plan comment counts as it stands (no reviews read)', async () => {
    expect((await runEvent(world(), 'pull_request')).code).toBe(0);
    expect((await runEvent(world(), 'push')).code).toBe(0);
    expect(github.calls.some((c) => c.path.includes('/reviews'))).toBe(false);
  });
});
