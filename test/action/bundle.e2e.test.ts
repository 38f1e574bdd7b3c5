/**
 * End to end: the committed bundle (`dist-action/index.js`, what `action.yml` runs) as a child
 * process with the environment a runner gives it, against the emulator and a local fake of
 * GitHub. A pull request's plan, then its merge applies it; a merge after someone edited the
 * workspace is refused, with a comment saying what differs.
 */
import { spawn } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  API_KEY,
  EXAMPLES,
  type Emulator,
  removeDir,
  serviceYaml,
  startTestEmulator,
  tempDir,
} from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { MERGE_SHA, PR_NUMBER, pullRequestPayload, pushPayload, REPOSITORY, reviewedDigest, TOKEN } from './harness.js';

const BUNDLE = join(import.meta.dirname, '..', '..', 'dist-action', 'index.js');

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-action-e2e-');
  workspace = join(root, 'repo');
  await mkdir(join(root, 'runner-temp'), { recursive: true });
  await cp(EXAMPLES, join(workspace, 'catalog'), { recursive: true });
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

interface BundleRun {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
}

/** `name<<DELIMITER\nvalue\nDELIMITER` blocks, as `@actions/core` writes GITHUB_OUTPUT. */
const parseOutputFile = (text: string): Record<string, string> => {
  const outputs: Record<string, string> = {};
  const re = /^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (const m of text.matchAll(re)) outputs[m[1] ?? ''] = m[3] ?? '';
  return outputs;
};

let runNumber = 0;
const runBundle = async (eventName: 'pull_request' | 'push', payload: unknown): Promise<BundleRun> => {
  runNumber += 1;
  const eventPath = join(root, `event-${runNumber}.json`);
  const outputPath = join(root, `output-${runNumber}.txt`);
  const summaryPath = join(root, `summary-${runNumber}.md`);
  await writeFile(eventPath, JSON.stringify(payload));
  await writeFile(outputPath, '');
  await writeFile(summaryPath, '');
  // Only what a runner sets: nothing of this machine's GITHUB_*, INPUT_* or CORTEX_* leaks in.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_EVENT_NAME: eventName,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: REPOSITORY,
    GITHUB_SHA: eventName === 'push' ? MERGE_SHA : '5e2d1c0b9a8f7e6d5c4b3a29180716253443a2b1',
    GITHUB_REF: eventName === 'push' ? 'refs/heads/main' : `refs/pull/${PR_NUMBER}/merge`,
    GITHUB_API_URL: github.url,
    GITHUB_SERVER_URL: 'https://github.example.test',
    GITHUB_RUN_ID: String(1000 + runNumber),
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_OUTPUT: outputPath,
    GITHUB_STEP_SUMMARY: summaryPath,
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: join(root, 'runner-temp'),
    CORTEX_BASE_URL: emulator.url,
    INPUT_DIR: 'catalog',
    'INPUT_API-KEY': API_KEY,
    'INPUT_GITHUB-TOKEN': TOKEN,
    INPUT_COMMAND: 'auto',
    INPUT_COMMENT: 'true',
    'INPUT_ON-PLAN-DRIFT': 'fail',
    INPUT_PRUNE: 'false',
    'INPUT_ALLOW-MASS-DELETE': 'false',
  };
  const child = spawn(process.execPath, [BUNDLE], { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    code,
    stdout,
    stderr,
    outputs: parseOutputFile(await readFile(outputPath, 'utf8')),
    summary: await readFile(summaryPath, 'utf8'),
  };
};

const writesToWorkspace = () => emulator.requests.filter((r) => r.method !== 'GET');
const prComments = () => github.comments.filter((c) => c.issue === PR_NUMBER);
const merged = () => github.commits.set(MERGE_SHA, [{ number: PR_NUMBER, merged: true, mergeCommitSha: MERGE_SHA }]);

describe('the committed bundle, as a runner runs it', () => {
  it('plans on the pull request, then applies the reviewed plan on merge', async () => {
    const plan = await runBundle('pull_request', pullRequestPayload());
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(plan.outputs.changes).toBe('true');
    expect(plan.outputs['exit-code']).toBe('0');
    expect(JSON.parse(await readFile(plan.outputs['plan-json'] ?? '', 'utf8'))).toMatchObject({ formatVersion: 1 });
    expect(plan.summary).toContain('### cortex-sync plan for catalog');
    expect(writesToWorkspace()).toEqual([]);
    expect(prComments()).toHaveLength(1);
    const reviewed = reviewedDigest(prComments()[0]?.body ?? '');
    expect(reviewed).toBeDefined();

    merged();
    const apply = await runBundle('push', pushPayload());
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain(`The plan matches the plan reviewed on #${PR_NUMBER}`);
    expect(writesToWorkspace().length).toBeGreaterThan(0);
    expect(apply.outputs['exit-code']).toBe('0');
    expect(Number(apply.outputs.create)).toBe(Number(plan.outputs.create));
    // The result on the pull request, and the plan log as a file the workflow can upload.
    expect(prComments()).toHaveLength(2);
    expect(prComments()[1]?.body).toMatch(/^### ✅ cortex-sync apply: \d+ ok, 0 failed, 0 skipped/);
    const log = (await readFile(apply.outputs['plan-log'] ?? '', 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { outcome: string });
    expect(log.length).toBeGreaterThan(0);
    expect(log.every((l) => l.outcome === 'ok')).toBe(true);
    expect(apply.summary).toContain('cortex-sync apply');
    // The key never reaches the log, a comment or the summary; the runner is asked to mask it.
    expect(plan.stdout).toContain(`::add-mask::${API_KEY}`);
    const withoutMaskCommand = (text: string) => text.replace(`::add-mask::${API_KEY}`, '');
    for (const text of [plan.stdout, apply.stdout].map(withoutMaskCommand)) expect(text).not.toContain(API_KEY);
    for (const text of [plan.summary, apply.summary, ...github.comments.map((c) => c.body)])
      expect(text).not.toContain(API_KEY);
  }, 120_000);

  it('refuses a merge whose plan changed after the review (the workspace was edited) and says what differs', async () => {
    const plan = await runBundle('pull_request', pullRequestPayload());
    expect(plan.code).toBe(0);

    // Someone creates search-api in the UI: at merge the plan adopts it instead of creating it.
    const edit = await fetch(`${emulator.url}/api/v1/open-api`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/openapi;charset=UTF-8' },
      body: serviceYaml('search-api'),
    });
    expect(edit.status).toBe(200);
    const writesBefore = writesToWorkspace().length;

    merged();
    const apply = await runBundle('push', pushPayload());
    expect(apply.code).toBe(1);
    expect(apply.outputs['exit-code']).toBe('1');
    expect(writesToWorkspace()).toHaveLength(writesBefore);
    expect(apply.stdout).toMatch(
      /::error title=cortex-sync%3A plan drift::The plan at 9d8c7b6a5f4e differs from the plan reviewed on #7: nothing applied/,
    );
    expect(prComments()).toHaveLength(2);
    const drift = prComments()[1]?.body ?? '';
    expect(drift).toContain('the plan changed after it was reviewed');
    expect(drift).toContain('**Nothing was applied**');
    expect(drift).toMatch(/Planned differently\*\* \(1\):\n- `entity\/search-api`: reviewed create, now update/);
    expect(apply.summary).toContain('the plan changed after it was reviewed');
  }, 120_000);

  it('refuses a push with changes that no pull request reviewed', async () => {
    const apply = await runBundle('push', pushPayload());
    expect(apply.code).toBe(1);
    expect(writesToWorkspace()).toEqual([]);
    expect(apply.summary).toContain('no reviewed plan');
    expect(github.writes()).toEqual([]);
  }, 60_000);
});
