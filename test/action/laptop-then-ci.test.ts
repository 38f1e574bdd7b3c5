/**
 * Trying it on a laptop first must not lock CI out (the examples' cortex-sync.yaml names the source id): a first apply from a clone of the repository
 * (its git remote, in any spelling) binds the source to the same origin the Action computes from
 * GITHUB_REPOSITORY, so the Action's plan afterwards is an ordinary one. Without a git remote the
 * laptop binds a local folder; the Action's refusal then names both origins with their kinds and
 * says what to do.
 */
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, EXAMPLES, type Emulator, removeDir, startTestEmulator, tempDir, writeFiles } from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { pullRequestPayload, REPOSITORY, runInProcess } from './harness.js';

let emulator: Emulator;
let github: FakeGitHub;
let root: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-laptop-');
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

const gitConfig = (remotes: Record<string, string>): string =>
  [
    '[core]',
    '\tbare = false',
    ...Object.entries(remotes).flatMap(([name, url]) => [`[remote "${name}"]`, `\turl = ${url}`]),
    '',
  ].join('\n');

/** A checkout at `folder` with the examples under `catalog/`. */
const checkout = async (folder: string, config?: string): Promise<string> => {
  await mkdir(join(folder, 'catalog'), { recursive: true });
  await cp(EXAMPLES, join(folder, 'catalog'), { recursive: true });
  if (config !== undefined) await writeFiles(folder, { '.git/config': config });
  return folder;
};

const ciPlan = async () => {
  const workspace = await checkout(join(root, 'ci'));
  return runInProcess({
    eventName: 'pull_request',
    payload: pullRequestPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog' },
  });
};

describe('a first apply from a laptop, then the Action', () => {
  it.each([
    ['an ssh remote', { origin: `git@github.com:${REPOSITORY}.git` }],
    ['an https remote with a token in it', { origin: `https://x-access-token:ghs_secret@github.com/${REPOSITORY}` }],
    ['one remote not named origin', { github: `https://github.com/${REPOSITORY.toUpperCase()}.git` }],
  ])('from a clone with %s: the Action plans as the same origin', async (_name, remotes) => {
    const laptop = await checkout(join(root, 'laptop'), gitConfig(remotes));
    const applied = await cli(['apply', '--dir', 'catalog/', '--plan-log', 'l.jsonl'], {
      cwd: laptop,
      emulator,
    });
    expect(applied.stderr).not.toContain('ghs_secret');
    expect(applied.stdout).not.toContain('ghs_secret');
    expect(applied.code).toBe(0);
    const run = await ciPlan();
    const said = run.runtime.annotations.map((a) => a.message).join('\n');
    expect(said).not.toContain('source-claimed');
    expect(said).not.toContain('belongs to origin');
    expect(run.code).toBe(0);
  });

  it('from a folder with no git remote: the refusal names both origins with their kinds, and what to do', async () => {
    const laptop = await checkout(join(root, 'laptop'));
    const applied = await cli(['apply', '--dir', 'catalog/', '--plan-log', 'l.jsonl'], {
      cwd: laptop,
      emulator,
    });
    expect(applied.code).toBe(0);
    const run = await ciPlan();
    expect(run.code).toBe(1);
    const said = run.runtime.annotations.map((a) => a.message).join('\n');
    expect(said).toContain(`\`path:${join(laptop, 'catalog')}\` (a local folder with no git remote`);
    expect(said).toContain(`\`github.com/${REPOSITORY}//catalog\` (the git repository`);
    expect(said).toContain('--allow-takeover');
  });
});
