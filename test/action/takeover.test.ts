/**
 * A repository renamed (or moved to another organisation) is another origin for its source id:
 * the Action refuses to apply as that source until the operator says `allow-takeover: true` in
 * the workflow, as `--allow-takeover` does for the CLI. The input is the operator's; nothing in
 * the repository's files turns it on.
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXAMPLES, type Emulator, removeDir, serviceYaml, startTestEmulator, tempDir } from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { MERGE_SHA, PR_NUMBER, pushPayload, runInProcess } from './harness.js';

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-action-');
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

const merge = (repository: string | undefined, inputs: Record<string, string> = {}) =>
  runInProcess({
    eventName: 'push',
    payload: pushPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', 'on-plan-drift': 'apply', ...inputs },
    ...(repository !== undefined ? { env: { GITHUB_REPOSITORY: repository } } : {}),
  });

const writes = () => emulator.requests.filter((r) => r.method !== 'GET');
const addService = async (tag: string) => {
  await mkdir(join(workspace, 'catalog', 'services', tag));
  await writeFile(join(workspace, 'catalog', 'services', tag, 'cortex.yaml'), serviceYaml(tag));
};

describe('the Action under a renamed repository', () => {
  it('refuses to apply as a source bound to the old name, and applies with allow-takeover', async () => {
    expect((await merge(undefined)).code).toBe(0);
    await addService('renamed-api');

    const writesBefore = writes().length;
    const refused = await merge('example/catalog-renamed');
    expect(refused.code).toBe(1);
    expect(writes()).toHaveLength(writesBefore);
    const refusal = refused.runtime.annotations.map((a) => a.message).join('\n');
    expect(refusal).toContain('source-claimed');

    const taken = await merge('example/catalog-renamed', { 'allow-takeover': 'true' });
    expect(taken.code).toBe(0);
    const created = await fetch(`${emulator.url}/api/v1/catalog/renamed-api`, {
      headers: { authorization: `Bearer ${emulator.apiKey}` },
    });
    expect(created.status).toBe(200);
    // The reviewer sees that this run could take objects over: the plan's header says so.
    expect(taken.runtime.summaries.join('\n')).toContain('`allowTakeover`: `true` from **Action input**');

    // Bound to the new name now: the next merge from there needs no input.
    await addService('after-rename');
    expect((await merge('example/catalog-renamed')).code).toBe(0);
  });

  it('rejects a value that is not a boolean, naming the input, before anything runs', async () => {
    const run = await merge(undefined, { 'allow-takeover': 'yes please' });
    expect(run.code).toBe(1);
    expect(run.runtime.annotations.map((a) => a.message).join('\n')).toContain('allow-takeover');
    expect(writes()).toEqual([]);
  });
});
