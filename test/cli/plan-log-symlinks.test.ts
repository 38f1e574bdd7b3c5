/**
 * The files the CLI writes by default (the plan log under `.cortex-sync/`) are never written
 * through a symlink: a repository can commit `.cortex-sync` as a symlink at its root, and `apply
 * --dir catalog/` run from that root (as the README shows) must not write where it points. Every
 * component of the path below the working directory is checked; a symlink, a file where a folder
 * belongs, or a FIFO is refused with the path named, before any request is sent. The binary as it
 * ships, as a child process, against the emulator on 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { bundleCli } from '../support/cli-bundle.js';
import { removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';
import { runBin } from './spawn-cli.js';

let emulator: RunningEmulator;
let bundleDir: string;
let entry: string;
let root: string;
let elsewhere: string;

beforeAll(async () => {
  emulator = await startTestEmulator();
  bundleDir = await tempDir();
  entry = await bundleCli(bundleDir);
});
afterAll(async () => {
  await emulator.stop();
  await removeDir(bundleDir);
});

let n = 0;
beforeEach(async () => {
  root = await tempDir();
  elsewhere = await tempDir();
  n += 1;
  await writeFiles(root, { 'catalog/svc/cortex.yaml': serviceYaml(`symlink-log-${n}`) });
  return async () => {
    await removeDir(root);
    await removeDir(elsewhere);
  };
});

const writesSince = (since: number) => emulator.requests.slice(since).filter((r) => r.method !== 'GET');
const apply = (extra: string[] = []) =>
  runBin(entry, ['apply', '--dir', 'catalog/', '--auto-approve', ...extra], {
    cwd: root,
    emulatorUrl: emulator.url,
    env: { CORTEX_SYNC_SOURCE_ID: `symlink-log-${n}` },
  });

/** Refused before anything is sent, naming `named`; nothing in `elsewhere`. */
const expectRefused = async (run: Awaited<ReturnType<typeof apply>>, before: number, named: RegExp) => {
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(named);
  expect(run.stderr).not.toMatch(/internal error/);
  expect(writesSince(before)).toEqual([]);
  expect(readdirSync(elsewhere)).toEqual([]);
};

describe('the default plan log', () => {
  it('is written under a real .cortex-sync/ folder of the working directory', async () => {
    const run = await apply();
    expect(run.code).toBe(0);
    expect(readdirSync(join(root, '.cortex-sync'))).toEqual([expect.stringMatching(/^plan-log-.*\.jsonl$/)]);
  });

  it('a .cortex-sync symlink at the root (committed by the repository) is refused, nothing written where it points', async () => {
    await symlink(elsewhere, join(root, '.cortex-sync'));
    const before = emulator.requests.length;
    await expectRefused(await apply(), before, /\.cortex-sync is a symlink/);
  });

  it('a dangling .cortex-sync symlink is refused (nothing created where it points)', async () => {
    await symlink(join(elsewhere, 'not-yet'), join(root, '.cortex-sync'));
    const before = emulator.requests.length;
    await expectRefused(await apply(), before, /\.cortex-sync is a symlink/);
    expect(existsSync(join(elsewhere, 'not-yet'))).toBe(false);
  });

  it('a .cortex-sync that is a file is refused naming it', async () => {
    await writeFile(join(root, '.cortex-sync'), 'not a folder\n');
    const before = emulator.requests.length;
    await expectRefused(await apply(), before, /\.cortex-sync is a regular file, not a folder/);
  });
});

describe('--plan-log below the working directory', () => {
  it('a symlinked folder on the way, at any depth, is refused', async () => {
    await mkdir(join(root, 'logs', 'a'), { recursive: true });
    await symlink(elsewhere, join(root, 'logs', 'a', 'b'));
    const before = emulator.requests.length;
    await expectRefused(await apply(['--plan-log', 'logs/a/b/c/run.jsonl']), before, /logs\/a\/b is a symlink/);
  });

  it('a symlink in place of the file is refused', async () => {
    await symlink(join(elsewhere, 'run.jsonl'), join(root, 'run.jsonl'));
    const before = emulator.requests.length;
    await expectRefused(await apply(['--plan-log', 'run.jsonl']), before, /run\.jsonl is a symlink/);
  });

  it('a FIFO in place of the file is refused, not waited on', async () => {
    execFileSync('mkfifo', [join(root, 'run.jsonl')]);
    const before = emulator.requests.length;
    await expectRefused(await apply(['--plan-log', 'run.jsonl']), before, /run\.jsonl is a FIFO/);
  });

  it('an existing regular file is appended to', async () => {
    await writeFile(join(root, 'run.jsonl'), '');
    const run = await apply(['--plan-log', 'run.jsonl']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('run.jsonl');
  });
});
