/**
 * A mistyped `dir:` must not go green: a manifest folder holding no manifest fails the Action's
 * run (`no-manifests`), on a pull request and on a merge, and nothing is sent.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { pullRequestPayload, runInProcess } from './harness.js';

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-action-empty-');
  workspace = join(root, 'repo');
  await mkdir(join(workspace, 'catalog'), { recursive: true });
  await writeFile(join(workspace, 'catalog', 'README.md'), 'the manifests went elsewhere\n');
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

describe('the dir input names a folder with no manifest', () => {
  it('the pull request run fails with no-manifests; nothing is sent', async () => {
    const run = await runInProcess({
      eventName: 'pull_request',
      payload: pullRequestPayload(),
      workspace,
      emulator,
      github,
      inputs: { dir: 'catalog' },
    });
    expect(run.code).toBe(1);
    expect(JSON.stringify(run.runtime.annotations)).toMatch(/no manifests found/);
    expect(emulator.requests).toEqual([]);
  });
});
