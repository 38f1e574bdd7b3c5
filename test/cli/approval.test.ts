/**
 * Approval as Terraform asks it: without a terminal on stdin (`</dev/null`, a pipe, a closed fd:
 * cron, ssh without -t, an IDE task) `apply` writes nothing unless told `--auto-approve` or
 * `CORTEX_SYNC_AUTO_APPROVE=true`; on a terminal the question comes after the whole plan, even
 * when the output goes through a pipe (`apply | cat`, `apply 2>&1 | cat`). The binary as it
 * ships, as a child process, against the emulator on 127.0.0.1, for each kind of stdin; what does
 * not depend on the process (the variable's values, `--dry-run`) runs the same entrypoint
 * in-process (`cli`, stdin not a terminal).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { bundleCli } from '../support/cli-bundle.js';
import { API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';
import { runBin, type SpawnOptions } from './spawn-cli.js';

let emulator: RunningEmulator;
let bundleDir: string;
let entry: string;
let dir: string;

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
  dir = await tempDir();
  n += 1;
  await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml(`approval-${n}`) });
  return () => removeDir(dir);
});

const writesSince = (since: number) => emulator.requests.slice(since).filter((r) => r.method !== 'GET');
const apply = (args: string[], stdin: SpawnOptions['stdin'], env: NodeJS.ProcessEnv = {}) =>
  runBin(entry, ['apply', ...args], {
    cwd: dir,
    emulatorUrl: emulator.url,
    env: { CORTEX_SYNC_SOURCE_ID: `approval-${n}`, ...env },
    stdin,
  });
/** The same entrypoint in-process, stdin not a terminal, no approval unless `env` gives it. */
const applyInProcess = (args: string[], env: NodeJS.ProcessEnv) =>
  cli(['apply', ...args], {
    cwd: dir,
    emulator,
    env: { NO_COLOR: '1', CORTEX_SYNC_SOURCE_ID: `approval-${n}`, CORTEX_SYNC_AUTO_APPROVE: undefined, ...env },
  });

describe('apply without a terminal on stdin', () => {
  for (const [name, stdin] of [
    ['stdin /dev/null', 'dev-null'],
    ['stdin a pipe that says yes', { pipe: 'yes\n' }],
    ['stdin closed', 'closed'],
  ] as const) {
    it(`${name}: exit 1, nothing written, names --auto-approve and CORTEX_SYNC_AUTO_APPROVE=true`, async () => {
      const before = emulator.requests.length;
      const run = await apply([], stdin);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('--auto-approve');
      expect(run.stderr).toContain('CORTEX_SYNC_AUTO_APPROVE=true');
      expect(writesSince(before)).toEqual([]);
      expect(existsSync(join(dir, '.cortex-sync'))).toBe(false);
    });
  }

  it('--auto-approve applies', async () => {
    const before = emulator.requests.length;
    const run = await apply(['--auto-approve'], 'dev-null');
    expect(run.stderr).toBe(run.stderr.replace(/error/i, ''));
    expect(run.code).toBe(0);
    expect(writesSince(before).length).toBeGreaterThan(0);
  });

  it('CORTEX_SYNC_AUTO_APPROVE=true applies', async () => {
    const before = emulator.requests.length;
    const run = await apply([], { pipe: 'yes\n' }, { CORTEX_SYNC_AUTO_APPROVE: 'true' });
    expect(run.code).toBe(0);
    expect(writesSince(before).length).toBeGreaterThan(0);
  });

  for (const value of ['yes', 'TRUE', '1', 'on'])
    it(`CORTEX_SYNC_AUTO_APPROVE=${value} is an error naming the variable, nothing written`, async () => {
      const before = emulator.requests.length;
      const run = await applyInProcess([], { CORTEX_SYNC_AUTO_APPROVE: value });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/CORTEX_SYNC_AUTO_APPROVE: expected true or false/);
      expect(writesSince(before)).toEqual([]);
    });

  it('CORTEX_SYNC_AUTO_APPROVE=false without a terminal: refused like no setting', async () => {
    const before = emulator.requests.length;
    const run = await applyInProcess([], { CORTEX_SYNC_AUTO_APPROVE: 'false' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--auto-approve');
    expect(writesSince(before)).toEqual([]);
  });

  it('--dry-run needs no approval (it writes nothing)', async () => {
    const run = await applyInProcess(['--dry-run'], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Plan: 1 to create');
  });
});

/**
 * A pseudo-terminal from util-linux `script`: stdin and stderr are the terminal, stdout goes
 * through `cat` (a pipe), as in `apply | tee log`. The test answers once the question shows.
 */
const onTerminal = (shellCommand: string, env: NodeJS.ProcessEnv, answer: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn('script', ['-qefc', shellCommand, '/dev/null'], {
      cwd: dir,
      env: { PATH: process.env.PATH, TERM: 'dumb', NO_COLOR: '1', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    let answered = false;
    child.stdout.on('data', (c: Buffer) => {
      screen += c.toString('utf8');
      if (!answered && screen.includes('Enter a value:')) {
        answered = true;
        child.stdin.write(answer);
      }
    });
    child.on('error', reject);
    child.on('close', () => resolve(screen));
  });

const hasScript = (() => {
  try {
    return existsSync('/usr/bin/script') || existsSync('/bin/script');
  } catch {
    return false;
  }
})();

describe.skipIf(!hasScript)('apply on a terminal with its output piped', () => {
  for (const redirect of ['| cat', '2>&1 | cat'])
    it(`apply ${redirect}: the whole plan, then the question; "no" writes no object`, async () => {
      // A plan far larger than a pipe's buffer: it is still being written when the question comes.
      const services = Object.fromEntries(
        Array.from({ length: 600 }, (_, i) => [
          `s${i}/cortex.yaml`,
          serviceYaml(`tty-${n}-${i}`, `  description: ${'a long description '.repeat(8)}\n`),
        ]),
      );
      await writeFiles(dir, services);
      const before = emulator.requests.length;
      const screen = await onTerminal(
        `exec "${process.execPath}" "${entry}" apply --plan-log log.jsonl ${redirect}`,
        { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: API_KEY, CORTEX_SYNC_SOURCE_ID: `tty-${n}` },
        'no\n',
      );
      const planEnd = screen.indexOf('Plan: 601 to create');
      const question = screen.indexOf('Do you want to perform these actions?');
      expect(planEnd).toBeGreaterThan(0);
      expect(question).toBeGreaterThan(planEnd);
      expect(screen.lastIndexOf(`tty-${n}-599`)).toBeLessThan(question);
      // Declined: no entity was written (at most the source's lease was taken and given back).
      const entity = await fetch(`${emulator.url}/api/v1/catalog/tty-${n}-0`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      expect(entity.status).toBe(404);
      expect(writesSince(before).length).toBeLessThan(5);
    });
});
