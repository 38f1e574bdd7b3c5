/**
 * The world most Action tests run in, fresh for each test: the emulator, a fake GitHub, and a
 * workspace holding `examples/` as `catalog/`, whose merge commit `MERGE_SHA` is pull request
 * `PR_NUMBER`, merged.
 */
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { EXAMPLES, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { MERGE_SHA, PR_NUMBER, pullRequestPayload, pushPayload, runInProcess } from './harness.js';

export interface ActionWorld {
  emulator: Emulator;
  github: FakeGitHub;
  root: string;
  workspace: string;
}

/** Registers the hooks that make and remove the world; `use` receives each test's. */
export const useActionWorld = (use: (world: ActionWorld) => void): void => {
  let world: ActionWorld | undefined;
  beforeEach(async () => {
    const emulator = await startTestEmulator();
    const github = await startFakeGitHub();
    const root = await tempDir('cortex-sync-action-');
    const workspace = join(root, 'repo');
    await mkdir(workspace);
    await cp(EXAMPLES, join(workspace, 'catalog'), { recursive: true });
    github.commits.set(MERGE_SHA, [{ number: PR_NUMBER, merged: true, mergeCommitSha: MERGE_SHA }]);
    world = { emulator, github, root, workspace };
    use(world);
  });
  afterEach(async () => {
    if (world === undefined) return;
    await world.emulator.stop();
    await world.github.stop();
    await removeDir(world.root);
  });
};

/** The Action run in-process for a pull request or a push event, on `catalog/`. */
export const runEvent = (
  world: Pick<ActionWorld, 'emulator' | 'github' | 'workspace'>,
  eventName: 'pull_request' | 'push',
  inputs: Record<string, string> = {},
) =>
  runInProcess({
    eventName,
    payload: eventName === 'push' ? pushPayload() : pullRequestPayload(),
    workspace: world.workspace,
    emulator: world.emulator,
    github: world.github,
    inputs: { dir: 'catalog', ...inputs },
  });
