/**
 * The Action behind a corporate proxy: its GitHub client (octokit) goes through `HTTP_PROXY` like
 * its API client, and `NO_PROXY` sends either past it. The proxy sees the token and the key only
 * in the `Authorization` headers it forwards. In-process, against the fake GitHub and the emulator.
 */
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { EXAMPLES, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { startTestProxy, type TestProxy } from '../support/proxy.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { PR_NUMBER, pullRequestPayload, runInProcess, TOKEN } from './harness.js';

let emulator: Emulator;
let github: FakeGitHub;
let proxy: TestProxy;
let root: string;
let workspace: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  proxy = await startTestProxy();
  root = await tempDir('cortex-sync-proxy-');
  workspace = join(root, 'repo');
  await mkdir(workspace);
  await cp(EXAMPLES, join(workspace, 'catalog'), { recursive: true });
});
afterEach(async () => {
  await proxy.stop();
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

const planPr = (env: NodeJS.ProcessEnv) =>
  runInProcess({
    eventName: 'pull_request',
    payload: pullRequestPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog' },
    env,
  });
const through = (origin: string) => proxy.log.filter((e) => e.target.startsWith(`${origin}/`));
const secretLines = (secret: string) =>
  proxy
    .logText()
    .split('\n')
    .filter((line) => line.includes(secret) && !/^authorization: (Bearer|token) /.test(line));

it('HTTP_PROXY: the GitHub calls and the API calls both go through the proxy, secrets only in Authorization', async () => {
  const result = await planPr({ HTTP_PROXY: proxy.url });
  expect(result.code).toBe(0);
  expect(github.comments.filter((c) => c.issue === PR_NUMBER)).toHaveLength(1);
  expect(through(github.url)).toHaveLength(github.calls.length);
  expect(through(github.url).map((e) => e.target)).toContain(
    `${github.url}/repos/example/catalog/issues/${PR_NUMBER}/comments`,
  );
  expect(through(emulator.url)).toHaveLength(emulator.requests.length);
  expect(secretLines(TOKEN)).toEqual([]);
  expect(secretLines(emulator.apiKey)).toEqual([]);
  expect(result.runtime.log.join('\n')).not.toContain(emulator.apiKey);
});

it('NO_PROXY naming GitHub’s host and port sends only the GitHub calls past the proxy', async () => {
  const result = await planPr({ HTTP_PROXY: proxy.url, NO_PROXY: `127.0.0.1:${new URL(github.url).port}` });
  expect(result.code).toBe(0);
  expect(github.calls.length).toBeGreaterThan(0);
  expect(through(github.url)).toEqual([]);
  expect(through(emulator.url)).toHaveLength(emulator.requests.length);
});

it('a proxy that refuses the credentials fails the run naming the proxy’s 407, never its password', async () => {
  const strict = await startTestProxy({ credentials: { user: 'ci', password: 'right' } });
  try {
    const result = await planPr({
      HTTP_PROXY: `http://ci:wr0ngPassw0rd@127.0.0.1:${strict.port}`,
      NO_PROXY: new URL(emulator.url).host,
    });
    expect(result.code).toBe(1);
    expect(github.calls).toEqual([]);
    const error = result.runtime.annotations.find((a) => a.severity === 'error')?.message ?? '';
    expect(error).toContain('failed (HTTP 407 from the proxy): the proxy (HTTP_PROXY) refused the credentials');
    expect(JSON.stringify(result.runtime)).not.toContain('wr0ngPassw0rd');
  } finally {
    await strict.stop();
  }
});
