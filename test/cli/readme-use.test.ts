/**
 * The README's "Use" section, run as written: every command line of its `sh` blocks (the quick
 * start and the commands), in order, by `sh -c`, from a clone of a catalog repository (with a git
 * remote) beside a clone of this one, the package installed in it as Install leaves it
 * (`node_modules/.bin/cortex-sync`), against the emulator on 127.0.0.1. No terminal here, as in
 * CI: `CORTEX_SYNC_AUTO_APPROVE=true` is set, as the README says CI must. `npx --no-install` never
 * asks the registry (npm is also told to stay offline).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { bundleCli, ROOT } from '../support/cli-bundle.js';
import { API_KEY, cli, removeDir, startTestEmulator, tempDir } from './run.js';

/** The command lines of the `sh` blocks between `## Use` and the next `## ` heading. */
const useCommands = (): string[] => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Use\n');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
    (block[1] ?? '')
      .split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
};

/** Lines that only set what the test sets itself (a placeholder key). */
const SET_BY_THE_TEST = /^export CORTEX_API_KEY=…$/;

let emulator: RunningEmulator;
let root: string;
let repo: string;

beforeAll(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  // This repository's clone beside the catalog repository, as Install has it.
  await symlink(ROOT, join(root, 'cortex-sync'), 'dir');
  repo = join(root, 'catalog-repo');
  await mkdir(join(repo, '.git'), { recursive: true });
  await writeFile(join(repo, '.git', 'config'), '[remote "origin"]\n\turl = git@github.com:acme/catalog.git\n');
  await writeFile(join(repo, 'package.json'), '{ "name": "catalog-repo", "private": true }\n');
  // What `npm install --save-dev <tarball>` leaves: the package and its bin link.
  const entry = await bundleCli(join(repo, 'node_modules', 'cortex-sync'));
  await mkdir(join(repo, 'node_modules', '.bin'));
  await symlink(entry, join(repo, 'node_modules', '.bin', 'cortex-sync'));
});
afterAll(async () => {
  await emulator.stop();
  await removeDir(root);
});

const sh = (line: string): Promise<{ code: number | null; output: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', line], {
      cwd: repo,
      env: {
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        HOME: root,
        NO_COLOR: '1',
        npm_config_offline: 'true',
        npm_config_update_notifier: 'false',
        CORTEX_BASE_URL: emulator.url,
        CORTEX_API_KEY: API_KEY,
        CORTEX_SYNC_AUTO_APPROVE: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });

describe("the README's Use section, as written", () => {
  it('has the quick start and the commands, each calling the installed package', () => {
    const lines = useCommands();
    expect(lines.filter((l) => l.startsWith('npx --no-install cortex-sync ')).length).toBeGreaterThanOrEqual(6);
    expect(lines.filter((l) => /\bnpx (?!--no-install)/.test(l))).toEqual([]);
  });

  // One test per line, in the README's order (a file's tests run one after another).
  for (const line of useCommands().filter((l) => !SET_BY_THE_TEST.test(l)))
    it(`exits 0: ${line}`, async () => {
      const run = await sh(line);
      expect(run.code, run.output).toBe(0);
    });

  it('the first apply bound the source to the repository, as the Action computes it', async () => {
    // As the Action runs: its origin from GITHUB_REPOSITORY, not from the clone's remote. Not a
    // README line: the same entrypoint in-process, in the same clone.
    const plan = await cli(['plan', '--dir', 'catalog/'], {
      cwd: repo,
      emulator,
      env: { NO_COLOR: '1', GITHUB_REPOSITORY: 'acme/catalog' },
    });
    const output = plan.stdout + plan.stderr;
    expect(output).not.toContain('source-claimed');
    expect(plan.code, output).toBe(0);
    expect(output).toContain('No changes.');
  });
});
