/**
 * The Action's `command: drift` (a scheduled workflow): the workspace is a checkout of a bare
 * repository, a fake GitHub takes the pull request. `on-drift: pr` writes the UI edit into the
 * manifest in place and opens one pull request pushed with the checkout's credentials; a push git
 * refuses falls back to a report saying so; `report` writes nothing and opens nothing.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { configureRun } from '../../src/engine/config.js';
import { createEngineContext } from '../../src/engine/context.js';
import { reconcile } from '../../src/engine/reconcile.js';
import { pushPayload, REPOSITORY, runInProcess } from './harness.js';
import { type ActionWorld, useActionWorld } from './world.js';

let world: ActionWorld;
useActionWorld((w) => {
  world = w;
});

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

/** The workspace as a checkout of `remote.git` (main), its manifests applied, one title edited in the UI. */
const checkoutWithDrift = async (): Promise<string> => {
  const bare = join(world.root, 'remote.git');
  git(world.root, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
  git(world.workspace, 'init', '--quiet', '--initial-branch=main');
  git(world.workspace, 'add', '--all');
  git(world.workspace, 'commit', '--quiet', '-m', 'catalog');
  git(world.workspace, 'remote', 'add', 'origin', bare);
  git(world.workspace, 'push', '--quiet', 'origin', 'main');
  // As the Action will: its origin is the repository GITHUB_REPOSITORY names.
  const env = {
    CORTEX_API_KEY: world.emulator.apiKey,
    CORTEX_BASE_URL: world.emulator.url,
    GITHUB_REPOSITORY: REPOSITORY,
  };
  const { config } = await configureRun({ said: { dir: join(world.workspace, 'catalog') } }, env, world.workspace);
  const client = createApiClient({ baseUrl: world.emulator.url, apiKey: world.emulator.apiKey, maxAttempts: 1 });
  expect((await reconcile({ config, mode: 'apply' }, createEngineContext(client))).status).toBe('applied');
  await client.close();
  const edited = await fetch(`${world.emulator.url}/api/v1/open-api`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${world.emulator.apiKey}`, 'content-type': 'application/openapi;charset=UTF-8' },
    body: 'openapi: 3.0.1\ninfo:\n  x-cortex-tag: payments-api\n  title: Payments API (renamed in the UI)\n',
  });
  expect(edited.ok).toBe(true);
  return bare;
};

const drift = (onDrift: string) =>
  runInProcess({
    eventName: 'push',
    payload: pushPayload(),
    workspace: world.workspace,
    emulator: world.emulator,
    github: world.github,
    inputs: { dir: 'catalog', command: 'drift', 'on-drift': onDrift },
    env: { GITHUB_REF_NAME: 'main' },
  });

describe('command: drift', () => {
  it('on-drift pr: one pull request whose commit changes exactly the edited value', async () => {
    const bare = await checkoutWithDrift();
    const run = await drift('pr');
    expect(run.code).toBe(0);
    expect(world.github.pulls).toHaveLength(1);
    const pull = world.github.pulls[0];
    expect(pull).toMatchObject({
      head: 'cortex-sync/drift/example-catalog',
      base: 'main',
      title: 'Drift: 1 object changed outside git',
    });
    const diff = git(bare, 'diff', '--unified=0', 'main', 'cortex-sync/drift/example-catalog')
      .split('\n')
      .filter((l) => /^[+-]/.test(l) && !/^(\+\+\+|---) /.test(l));
    expect(diff).toEqual(['-  title: Payments API', '+  title: Payments API (renamed in the UI)']);
    expect(run.runtime.summaries.join('\n')).toContain('1 object changed outside git');

    // A second scheduled run with the same drift: the same pull request, nothing pushed again.
    const head = git(bare, 'rev-parse', 'cortex-sync/drift/example-catalog');
    expect((await drift('pr')).code).toBe(0);
    expect(world.github.pulls).toHaveLength(1);
    expect(git(bare, 'rev-parse', 'cortex-sync/drift/example-catalog')).toBe(head);
  });

  it('a branch someone else pushed to is not pushed over: a new pull request says why', async () => {
    const bare = await checkoutWithDrift();
    git(world.workspace, 'push', '--quiet', 'origin', 'main:refs/heads/cortex-sync/drift/example-catalog');
    const theirs = git(bare, 'rev-parse', 'cortex-sync/drift/example-catalog');
    expect((await drift('pr')).code).toBe(0);
    expect(git(bare, 'rev-parse', 'cortex-sync/drift/example-catalog')).toBe(theirs);
    expect(world.github.pulls).toHaveLength(1);
    expect(world.github.pulls[0]?.head).toMatch(/^cortex-sync\/drift\/example-catalog-[0-9a-f]{8}$/);
    expect(world.github.pulls[0]?.body).toContain('it is not pushed over');
  });

  it('a push git refuses falls back to report, with the reason in the log', async () => {
    await checkoutWithDrift();
    git(world.workspace, 'remote', 'set-url', '--push', 'origin', join(world.root, 'no-such-remote.git'));
    const run = await drift('pr');
    expect(run.code).toBe(0);
    expect(world.github.pulls).toHaveLength(0);
    expect(run.runtime.log.join('\n')).toMatch(
      /could not push cortex-sync\/drift\/example-catalog .*reporting drift only/,
    );
  });

  it('on-drift report: the job summary only; nothing pushed, nothing healed', async () => {
    const bare = await checkoutWithDrift();
    const run = await drift('report');
    expect(run.code).toBe(0);
    expect(world.github.pulls).toHaveLength(0);
    expect(() => git(bare, 'rev-parse', '--verify', '--quiet', 'cortex-sync/drift/example-catalog')).toThrow();
    expect(run.runtime.summaries.join('\n')).toContain('Payments API (renamed in the UI)');
  });
});
