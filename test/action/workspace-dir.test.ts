/**
 * The operator names the manifest folder (`dir`); the pull request controls what that path is. A
 * folder replaced by a symlink that points out of the checkout would have the Action read, plan
 * and apply manifests from anywhere on the runner (another checkout, a cache): refused, before
 * anything is read or sent. A symlink that stays inside the repository is an ordinary folder.
 */
import { cp, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXAMPLES, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { pullRequestPayload, runInProcess } from './harness.js';

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-action-dir-');
  workspace = join(root, 'repo');
  await mkdir(workspace);
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

const plan = () =>
  runInProcess({
    eventName: 'pull_request',
    payload: pullRequestPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog/team' },
  });

describe('the dir input', () => {
  it('a folder on the way that is a symlink out of the checkout is refused, naming the input; nothing is read', async () => {
    const elsewhere = join(root, 'another-checkout');
    await mkdir(elsewhere);
    await cp(EXAMPLES, join(elsewhere, 'team'), { recursive: true });
    await symlink(elsewhere, join(workspace, 'catalog'));
    const run = await plan();
    expect(run.code).toBe(1);
    expect(run.runtime.annotations).toEqual([
      expect.objectContaining({
        severity: 'error',
        message: expect.stringMatching(/^input `dir`: catalog\/team is outside the repository checkout/),
      }),
    ]);
    expect(emulator.requests).toEqual([]);
    expect(github.comments).toEqual([]);
  });

  it('a symlink that stays inside the repository is followed', async () => {
    await cp(EXAMPLES, join(workspace, 'manifests', 'team'), { recursive: true });
    await symlink(join(workspace, 'manifests'), join(workspace, 'catalog'));
    const run = await plan();
    expect(run.code).toBe(0);
    expect(run.runtime.outputs.get('create')).not.toBe('0');
  });

  it('a missing folder is still the loader’s to report (no symlink to judge)', async () => {
    const run = await plan();
    expect(run.code).toBe(1);
    expect(JSON.stringify(run.runtime.annotations)).not.toContain('outside the repository checkout');
  });
});
