/**
 * The Action's `strict` input makes every warning an error: a merge whose manifests only warn
 * applies without it and fails, writing nothing, with it. Empty: `strict` in cortex-sync.yaml decides.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readInputs } from '../../src/action/inputs.js';
import { type Emulator, removeDir, serviceYaml, startTestEmulator, tempDir } from '../e2e/harness.js';
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
  await mkdir(join(workspace, 'catalog'), { recursive: true });
  await writeFile(
    join(workspace, 'catalog', 'cortex.yaml'),
    `${serviceYaml('strict-action')}  x-cortex-description: dropped\n`,
  );
  github.commits.set(MERGE_SHA, [{ number: PR_NUMBER, merged: true, mergeCommitSha: MERGE_SHA }]);
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

const merge = (inputs: Record<string, string> = {}) =>
  runInProcess({
    eventName: 'push',
    payload: pushPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', 'on-plan-drift': 'apply', ...inputs },
  });
const writes = () => emulator.requests.filter((r) => r.method !== 'GET');

describe('the Action input `strict`', () => {
  it('true: a warning is an error annotated at file:line, and nothing is written', async () => {
    const run = await merge({ strict: 'true' });
    expect(run.code).toBe(1);
    expect(writes()).toEqual([]);
    const annotation = run.runtime.annotations.find((a) => a.message.includes('x-cortex-description'));
    expect(annotation).toMatchObject({ severity: 'error', file: 'catalog/cortex.yaml', line: 6 });
    expect(annotation?.message).toContain('strict mode makes it an error');
  });

  it('not given: the warning stays a warning and the merge applies', async () => {
    const run = await merge();
    expect(run.code).toBe(0);
    expect(writes().length).toBeGreaterThan(0);
  });

  it('is read as true or false, and a bad value is an error naming the input', () => {
    const inputs = (strict: string) => readInputs((name) => (name === 'strict' ? strict : ''));
    expect(inputs('true').said.strict).toBe(true);
    expect(inputs('false').said.strict).toBe(false);
    expect(inputs('').said.strict).toBeUndefined();
    expect(() => inputs('yes')).toThrow("input `strict`: expected true or false, got 'yes'");
  });
});
