/**
 * The plan comment's visible text is bound to the plan its trailer records: an edit of what it
 * shows (even one that keeps the first line and the trailer), or any edit GitHub dates after its
 * creation, is not a review. A plan that changes is a new comment (never the reviewed one
 * rewritten in place); two plan runs racing on one pull request leave one comment.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Emulator } from '../e2e/harness.js';
import { type FakeGitHub } from './fake-github.js';
import { PR_NUMBER, reviewedDigest, workspaceEdits } from './harness.js';
import { runEvent, useActionWorld } from './world.js';

let emulator: Emulator;
let github: FakeGitHub;
let workspace: string;
useActionWorld((world) => ({ emulator, github, workspace } = world));

const run = (eventName: 'pull_request' | 'push', inputs: Record<string, string> = {}) =>
  runEvent({ emulator, github, workspace }, eventName, { prune: 'true', ...inputs });

const planComments = () =>
  github.comments.filter((c) => c.issue === PR_NUMBER && c.body.startsWith('<!-- cortex-sync:plan'));
const errorOf = (r: Awaited<ReturnType<typeof run>>) =>
  r.runtime.annotations.find((a) => a.severity === 'error')?.message ?? '';

/** The catalog applied, then a pull request that archives `notifications`, planned. */
const reviewedArchive = async () => {
  expect((await run('push', { 'on-plan-drift': 'apply', comment: 'false' })).code).toBe(0);
  await rm(join(workspace, 'catalog', '.cortex/catalog/notifications.yaml'));
  expect((await run('pull_request')).code).toBe(0);
  const [comment] = planComments();
  expect(comment?.body).toContain('archive `notifications`');
  return comment!;
};

const expectNotArchived = async (merge: Awaited<ReturnType<typeof run>>) => {
  expect(merge.code).toBe(1);
  expect(await workspaceEdits(emulator).entityState('notifications')).toBe('active');
};

describe('an edited plan comment is not a review', () => {
  it('an edit that removes the archive line but keeps the first line and the trailer (same second): nothing archived', async () => {
    const comment = await reviewedArchive();
    comment.body = comment.body
      .split('\n')
      .filter((line) => !line.includes('notifications'))
      .join('\n');
    expect(reviewedDigest(comment.body)).toBeUndefined();
    const merge = await run('push');
    await expectNotArchived(merge);
    expect(errorOf(merge)).toContain('its visible text was edited after cortex-sync wrote it');
  });

  it('an edit GitHub dates after the comment (by the bot’s token or a maintainer), text digest intact: nothing archived', async () => {
    const comment = await reviewedArchive();
    comment.updatedAt = '2027-01-01T00:00:00Z';
    const merge = await run('push');
    await expectNotArchived(merge);
    expect(errorOf(merge)).toContain('its plan comment was edited after cortex-sync wrote it');
  });

  it('the unedited comment is the reviewed plan: archived', async () => {
    await reviewedArchive();
    expect((await run('push')).code).toBe(0);
    expect(await workspaceEdits(emulator).entityState('notifications')).toBe('archived');
  });
});

describe('re-planning a pull request with no new commit', () => {
  it('a changed plan is a new comment (the reviewed one is never rewritten in place), and the old one goes', async () => {
    const reviewed = await reviewedArchive();
    const reviewedBody = reviewed.body;
    await workspaceEdits(emulator).createService('billing-api'); // a UI edit: the plan now differs
    await workspaceEdits(emulator).deleteEntity('search-api');
    const replanned = await run('pull_request');
    expect(replanned.code).toBe(0);
    expect(github.calls.filter((c) => c.method === 'PATCH')).toEqual([]);
    const [only, ...more] = planComments();
    expect(more).toEqual([]);
    expect(only?.id).not.toBe(reviewed.id);
    expect(reviewedDigest(only?.body ?? '')).not.toBe(reviewedDigest(reviewedBody));
    expect(replanned.runtime.log).toContain(`Wrote a new plan comment on #${PR_NUMBER} (and removed 1 earlier one).`);
  });

  it('the same plan leaves the reviewed comment as it is: no write to GitHub', async () => {
    const reviewed = await reviewedArchive();
    const before = github.writes().length;
    const replanned = await run('pull_request');
    expect(replanned.code).toBe(0);
    expect(github.writes()).toHaveLength(before);
    expect(planComments()).toEqual([reviewed]);
    expect(replanned.runtime.log).toContain(
      `The plan comment on #${PR_NUMBER} already shows this plan: left as it is.`,
    );
  });
});

describe('two plan runs racing on one pull request', () => {
  it('both list before either writes: one plan comment is left, and it is the reviewed plan on merge', async () => {
    github.barriers.push({ method: 'POST', path: /\/issues\/\d+\/comments$/, count: 2 });
    const [a, b] = await Promise.all([run('pull_request'), run('pull_request')]);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(github.calls.filter((c) => c.method === 'POST' && /comments$/.test(c.path))).toHaveLength(2);
    expect(planComments()).toHaveLength(1);
    expect((await run('push')).code).toBe(0);
  });
});
