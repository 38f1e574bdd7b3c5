/**
 * The Action on a merge, in-process: `on-plan-drift: apply` applies a drifted or unreviewed plan
 * and says so loudly; a merge with nothing to apply passes quietly; a GitHub failure is named.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planDigest } from '../../src/action/digest.js';
import type { Plan } from '../../src/core/model.js';
import { type Emulator, serviceYaml } from '../e2e/harness.js';
import { type FakeGitHub } from './fake-github.js';
import { PR_NUMBER, pushPayload, runInProcess, TOKEN } from './harness.js';
import { runEvent, useActionWorld } from './world.js';

let emulator: Emulator;
let github: FakeGitHub;
let workspace: string;
useActionWorld((world) => ({ emulator, github, workspace } = world));

const run = (eventName: 'pull_request' | 'push', inputs: Record<string, string> = {}) =>
  runEvent({ emulator, github, workspace }, eventName, inputs);

const writes = () => emulator.requests.filter((r) => r.method !== 'GET');
const prComments = () => github.comments.filter((c) => c.issue === PR_NUMBER);

describe('on merge', () => {
  it('with on-plan-drift: apply, applies a drifted plan and comments loudly what differs', async () => {
    expect((await run('pull_request')).code).toBe(0);
    const edit = await fetch(`${emulator.url}/api/v1/open-api`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emulator.apiKey}`, 'content-type': 'application/openapi;charset=UTF-8' },
      body: serviceYaml('search-api'),
    });
    expect(edit.status).toBe(200);
    const before = writes().length;
    const merge = await run('push', { 'on-plan-drift': 'apply' });
    expect(merge.code).toBe(0);
    expect(writes().length).toBeGreaterThan(before);
    const [, drift, result] = prComments().map((c) => c.body);
    expect(drift).toContain('**Applied anyway**');
    expect(drift).toContain('`entity/search-api`: reviewed create, now update');
    expect(result).toContain('a plan that differed from the reviewed one');
    expect(merge.runtime.annotations).toContainEqual(
      expect.objectContaining({ severity: 'warning', title: 'cortex-sync: plan drift' }),
    );
  });

  it('writes nothing when the workspace changes between the digest check and the apply', async () => {
    expect((await run('pull_request')).code).toBe(0);
    const merge = await runInProcess({
      eventName: 'push',
      payload: pushPayload(),
      workspace,
      emulator,
      github,
      inputs: { dir: 'catalog' },
      // A UI edit lands after the Action compared digests, before the engine writes.
      wrapEngine: (engine) => ({
        ...engine,
        apply: (config, planLog, hooks) =>
          engine.apply(config, planLog, {
            ...hooks,
            onPlanned: async (pass) => {
              const go = (await hooks?.onPlanned?.(pass)) ?? true;
              const edit = await fetch(`${emulator.url}/api/v1/open-api`, {
                method: 'POST',
                headers: {
                  authorization: `Bearer ${emulator.apiKey}`,
                  'content-type': 'application/openapi;charset=UTF-8',
                },
                body: serviceYaml('search-api'),
              });
              expect(edit.status).toBe(200);
              return go;
            },
          }),
      }),
    });
    expect(merge.code).toBe(1);
    const catalog = await fetch(`${emulator.url}/api/v1/catalog/auth-service`, {
      headers: { authorization: `Bearer ${emulator.apiKey}` },
    });
    expect(catalog.status).toBe(404);
    expect(merge.runtime.annotations).toContainEqual(
      expect.objectContaining({ severity: 'error', title: 'cortex-sync: plan drift' }),
    );
    expect(prComments().at(-1)?.body).toContain('nothing was applied');
    // Nothing was written, so there is no plan log: the output names none rather than a missing file.
    // The lease was taken and given back: the plan log holds those writes and the output names it.
    const log = await readFile(merge.runtime.outputs.get('plan-log') ?? '', 'utf8');
    expect(log).toContain('"method":"POST"');
  });

  it('names no plan log when the apply wrote nothing (the manifests turned invalid before the engine read them)', async () => {
    expect((await run('pull_request')).code).toBe(0);
    const merge = await runInProcess({
      eventName: 'push',
      payload: pushPayload(),
      workspace,
      emulator,
      github,
      inputs: { dir: 'catalog' },
      wrapEngine: (engine) => ({
        ...engine,
        apply: async (config, planLog, hooks) => {
          await writeFile(join(workspace, 'catalog', 'cortex.yaml'), 'openapi: [unclosed\n');
          return engine.apply(config, planLog, hooks);
        },
      }),
    });
    expect(merge.code).toBe(1);
    expect(writes()).toEqual([]);
    expect(merge.runtime.outputs.get('plan-log')).toBe('');
  });

  it('with no reviewed plan and on-plan-drift: apply, applies and says no plan was reviewed', async () => {
    const merge = await run('push', { 'on-plan-drift': 'apply' });
    expect(merge.code).toBe(0);
    expect(writes().length).toBeGreaterThan(0);
    expect(prComments()[0]?.body).toContain(`Pull request #${PR_NUMBER} has no cortex-sync plan comment`);
    expect(prComments()[0]?.body).toContain('**Applied anyway**');
  });

  it('does not take a reviewed digest from a comment by someone without write access', async () => {
    // An outsider posts the marker with the digest of exactly the plan the merge will make.
    const plan = await run('pull_request', { comment: 'false' });
    const planned = JSON.parse(await readFile(plan.runtime.outputs.get('plan-json') ?? '', 'utf8')) as Plan;
    github.comments.push({
      id: 1,
      issue: PR_NUMBER,
      body: `<!-- cortex-sync:plan source=example-catalog dir=catalog -->\n<!-- cortex-sync:digest ${planDigest(planned)} -->`,
      author: { login: 'stranger', type: 'User', association: 'CONTRIBUTOR' },
    });
    const merge = await run('push');
    expect(merge.code).toBe(1);
    expect(writes()).toEqual([]);
    expect(prComments()[1]?.body).toContain('has no cortex-sync plan comment');
  });

  it('with nothing to apply, passes without a comment', async () => {
    expect((await run('push', { 'on-plan-drift': 'apply' })).code).toBe(0);
    const commentsBefore = github.comments.length;
    const again = await run('push');
    expect(again.code).toBe(0);
    expect(again.runtime.outputs.get('changes')).toBe('false');
    expect(again.runtime.summaries.join('\n')).toContain('Nothing to apply.');
    expect(github.comments.length).toBe(commentsBefore);
  });

  it('names the GitHub operation and status that failed, never the token', async () => {
    github.readOnlyTokens.add(TOKEN);
    const plan = await run('pull_request');
    expect(plan.code).toBe(1);
    const [error] = plan.runtime.annotations.filter((a) => a.severity === 'error');
    expect(error?.message).toMatch(
      /^GitHub API: comment on #7 failed \(HTTP 403\): Resource not accessible by integration/,
    );
    expect(error?.message).not.toContain(TOKEN);
    expect(plan.runtime.outputs.get('exit-code')).toBe('1');
  });
});
