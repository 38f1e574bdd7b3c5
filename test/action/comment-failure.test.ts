/**
 * A merge that applied is reported as applied whatever happens to its comment: GitHub answering
 * 5xx or 429 is retried (honouring a bounded `Retry-After`), and a comment that still cannot be
 * written (a read-only token, GitHub down) is a warning, while the outputs and the job summary
 * carry the run report. A refusal whose comment fails still tells its details in the summary.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { type Emulator } from '../e2e/harness.js';
import { type FakeGitHub } from './fake-github.js';
import { PR_NUMBER, pullRequestPayload, runInProcess, TOKEN, workspaceEdits } from './harness.js';
import { runEvent, useActionWorld } from './world.js';

let emulator: Emulator;
let github: FakeGitHub;
let workspace: string;
useActionWorld((world) => ({ emulator, github, workspace } = world));

const run = (eventName: 'pull_request' | 'push', inputs: Record<string, string> = {}) =>
  runEvent({ emulator, github, workspace }, eventName, inputs);

const COMMENTS = /\/issues\/\d+\/comments$/;
const writes = () => emulator.requests.filter((r) => r.method !== 'GET');
const prComments = () => github.comments.filter((c) => c.issue === PR_NUMBER);
const summaryOf = (r: Awaited<ReturnType<typeof run>>) => r.runtime.summaries.join('\n');

/** A merge that applies the reviewed plan; the result comment then fails as `fail` says. */
const mergeWhile = async (fail: () => void) => {
  expect((await run('pull_request')).code).toBe(0);
  fail();
  return run('push');
};

const expectReportedAsApplied = async (merge: Awaited<ReturnType<typeof run>>) => {
  expect(merge.code).toBe(0);
  expect(await workspaceEdits(emulator).entityState('payments-api')).toBe('active');
  const out = merge.runtime.outputs;
  expect(out.get('exit-code')).toBe('0');
  expect(out.get('changes')).toBe('true');
  expect(Number(out.get('create'))).toBeGreaterThan(0);
  expect(await readFile(out.get('plan-json') ?? '', 'utf8')).toContain('"payments-api"');
  expect(await readFile(out.get('plan-log') ?? '', 'utf8')).toContain('"method":"POST"');
  expect(summaryOf(merge)).toMatch(/cortex-sync apply: \d+ ok, 0 failed, 0 skipped/);
};

describe('a successful apply whose result comment fails', () => {
  it('a re-run of the same run applies nothing again, though the workspace changed back, and says why', async () => {
    const merge = await mergeWhile(() =>
      github.faults.push({ method: 'POST', path: COMMENTS, status: 502, times: Number.POSITIVE_INFINITY }),
    );
    await expectReportedAsApplied(merge);
    // No record on the pull request: every comment failed.
    expect(prComments().filter((c) => c.body.includes('cortex-sync:merge'))).toEqual([]);
    github.faults.length = 0;
    // Someone deletes what the merge created: the plan at the head would create it again.
    await workspaceEdits(emulator).deleteEntity('payments-api');
    const before = writes().length;
    const rerun = await run('push');
    expect(rerun.code).toBe(0);
    expect(writes().length).toBe(before);
    expect(await workspaceEdits(emulator).entityState('payments-api')).toBe('absent');
    expect(summaryOf(rerun)).toContain('applied this plan already');
    // The pull request hears it now, with the record a later run reads.
    expect(prComments().at(-1)?.body).toContain('applied by an earlier run');
    expect(prComments().at(-1)?.body).toContain('outcome=applied');
  });

  it('GitHub answering 502 to every try: the run passes, the outputs and summary say what was applied, a warning says the PR was not told', async () => {
    const merge = await mergeWhile(() =>
      github.faults.push({ method: 'POST', path: COMMENTS, status: 502, times: Number.POSITIVE_INFINITY }),
    );
    await expectReportedAsApplied(merge);
    const warning = merge.runtime.annotations.find((a) => a.title === 'cortex-sync: comment not written');
    expect(warning?.severity).toBe('warning');
    expect(warning?.message).toMatch(new RegExp(`comment on #${PR_NUMBER} failed \\(HTTP 502\\)`));
    // Retried with a growing pause before giving up.
    expect(merge.waits.length).toBeGreaterThanOrEqual(2);
    expect(merge.waits).toEqual([...merge.waits].sort((a, b) => a - b));
    expect(summaryOf(merge)).toContain(`not commented on #${PR_NUMBER}`);
  });

  it('one 502: retried, and the pull request hears the result', async () => {
    const merge = await mergeWhile(() => github.faults.push({ method: 'POST', path: COMMENTS, status: 502, times: 1 }));
    await expectReportedAsApplied(merge);
    expect(merge.waits).toHaveLength(1);
    expect(prComments().at(-1)?.body).toMatch(/cortex-sync apply: \d+ ok/);
    expect(merge.runtime.annotations.filter((a) => a.severity !== 'notice')).toEqual([]);
  });

  it('a merge token with pull-requests: read (403): not retried, the run passes with a warning', async () => {
    const merge = await mergeWhile(() => github.readOnlyTokens.add(TOKEN));
    await expectReportedAsApplied(merge);
    expect(merge.waits).toEqual([]);
    expect(merge.runtime.annotations).toContainEqual(
      expect.objectContaining({ severity: 'warning', title: 'cortex-sync: comment not written' }),
    );
  });

  it('429 with Retry-After: 3 waits 3 s before the next try', async () => {
    const merge = await mergeWhile(() =>
      github.faults.push({ method: 'POST', path: COMMENTS, status: 429, headers: { 'retry-after': '3' }, times: 1 }),
    );
    await expectReportedAsApplied(merge);
    expect(merge.waits).toEqual([3_000]);
    expect(prComments().at(-1)?.body).toMatch(/cortex-sync apply/);
  });

  it('429 with Retry-After: 600 is not waited for (bounded): the run passes and says when GitHub asked to be tried again', async () => {
    const merge = await mergeWhile(() =>
      github.faults.push({
        method: 'POST',
        path: COMMENTS,
        status: 429,
        headers: { 'retry-after': '600' },
        times: Number.POSITIVE_INFINITY,
      }),
    );
    await expectReportedAsApplied(merge);
    expect(merge.waits).toEqual([]);
    expect(merge.runtime.annotations.find((a) => a.title === 'cortex-sync: comment not written')?.message).toContain(
      'Retry-After 600 s',
    );
  });

  it('429 forever without Retry-After: a bounded number of tries, then a warning', async () => {
    const merge = await mergeWhile(() =>
      github.faults.push({ method: 'POST', path: COMMENTS, status: 429, times: Number.POSITIVE_INFINITY }),
    );
    await expectReportedAsApplied(merge);
    const tries = github.calls.filter((c) => c.method === 'POST' && COMMENTS.test(c.path)).length;
    expect(tries).toBe(merge.waits.length + 1 + 1); // the plan comment, then each try of the result
    expect(merge.waits.length).toBeLessThanOrEqual(4);
  });
});

describe('a refusal whose comment fails', () => {
  it('keeps the drift details in the job summary, and names the plan file', async () => {
    expect((await run('pull_request')).code).toBe(0);
    await workspaceEdits(emulator).createService('search-api');
    github.faults.push({ method: 'POST', path: COMMENTS, status: 502, times: Number.POSITIVE_INFINITY });
    const before = writes().length;
    const merge = await run('push');
    expect(merge.code).toBe(1);
    expect(writes()).toHaveLength(before);
    expect(summaryOf(merge)).toContain('`entity/search-api`: reviewed create, now update');
    expect(merge.runtime.annotations).toContainEqual(
      expect.objectContaining({ severity: 'warning', title: 'cortex-sync: comment not written' }),
    );
    expect(await readFile(merge.runtime.outputs.get('plan-json') ?? '', 'utf8')).toContain('"search-api"');
  });

  it('without a github-token, says it could not look for the reviewed plan (not that there is none)', async () => {
    expect((await run('pull_request')).code).toBe(0);
    const merge = await run('push', { 'github-token': '' });
    expect(merge.code).toBe(1);
    expect(summaryOf(merge)).toContain('no `github-token`');
    expect(summaryOf(merge)).not.toContain('belongs to no pull request with a cortex-sync plan comment');
    expect(merge.runtime.outputs.get('plan-json')).not.toBe('');
  });

  it('a pull request from a fork: the note says what its merge does, and the merge does that', async () => {
    const pr = await runInProcess({
      eventName: 'pull_request',
      payload: pullRequestPayload({ fork: true }),
      workspace,
      emulator,
      github,
      inputs: { dir: 'catalog' },
    });
    expect(pr.code).toBe(0);
    const note = summaryOf(pr);
    expect(note).not.toContain('The plan runs when a maintainer merges it');
    expect(note).toContain('its merge applies nothing');
    const merge = await run('push');
    expect(merge.code).toBe(1);
    expect(writes()).toEqual([]);
  });
});
