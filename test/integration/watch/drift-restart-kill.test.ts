/**
 * The binary with `--on-drift pr`, killed (SIGKILL) after it applied a commit, a UI edit while it
 * was gone, started again at the same commit: the workspace's lease record says that commit was
 * applied, so its first run is a heal run — the edit is proposed as a pull request, not
 * overwritten. A new commit is then applied.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from '../../action/fake-github.js';
import {
  API_KEY,
  createRemote,
  type Emulator,
  entityTitle,
  removeDir,
  sleep,
  startTestEmulator,
  tempDir,
  type TestRemote,
} from '../../watch/harness.js';

const REPO = join(import.meta.dirname, '..', '..', '..');
const BIN = join(REPO, 'bin', 'cortex-sync.js');
const TOKEN = 'drift-kill-github-token-0123456789';

const service = (tag: string, title: string) =>
  `openapi: 3.0.1\ninfo:\n  title: ${title}\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n`;

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let remote: TestRemote;
const children: ChildProcess[] = [];

beforeEach(async () => {
  if (!existsSync(join(REPO, 'dist', 'bundle', 'cli.js'))) throw new Error('dist/ is stale: npm run build');
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir();
  remote = await createRemote(root);
});
afterEach(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  children.length = 0;
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

/** `cortex-sync watch --repo …` as a process; its JSON log lines as they come. */
const startBinary = () => {
  const proc = spawn(
    process.execPath,
    [
      BIN,
      'watch',
      '--repo',
      remote.url,
      '--branch',
      'main',
      '--interval',
      '100ms',
      '--heal-interval',
      '300ms',
      '--listen',
      '127.0.0.1:0',
    ],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: root,
        CORTEX_API_KEY: API_KEY,
        CORTEX_BASE_URL: emulator.url,
        CORTEX_SYNC_CACHE_DIR: join(root, 'cache'),
        GITHUB_TOKEN: TOKEN,
        GITHUB_REPOSITORY: 'acme/catalog',
        GITHUB_API_URL: github.url,
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(proc);
  let stdout = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  const logs = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const waitFor = async (what: string, found: (l: Record<string, unknown>) => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = logs().find(found);
      if (line) return line;
      if (Date.now() > deadline) throw new Error(`no ${what}; stdout: ${stdout}`);
      await sleep(20);
    }
  };
  return { proc, logs, waitFor };
};

const editInUi = async (tag: string, title: string): Promise<void> => {
  const response = await fetch(`${emulator.url}/api/v1/open-api`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/openapi;charset=UTF-8' },
    body: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  title: ${title}\n`,
  });
  expect(response.ok).toBe(true);
};

const head = (): string =>
  execFileSync('git', ['rev-parse', 'main'], { cwd: join(root, 'remote.git'), encoding: 'utf8' }).trim();

it('killed after an apply, started again at the same commit: the UI edit is proposed, not overwritten', async () => {
  await remote.push({
    'cortex-sync.yaml': 'sourceId: acme-catalog\nonDrift: pr\n',
    '.cortex/catalog/a.yaml': service('svc-a', 'Service A'),
    '.cortex/catalog/b.yaml': service('svc-b', 'Service B'),
  });
  const applied = head();
  const first = startBinary();
  await first.waitFor('the first apply', (l) => l.msg === 'run applied changes' && l.revision === applied);
  const killed = new Promise((resolve) => first.proc.once('exit', resolve));
  first.proc.kill('SIGKILL');
  await killed;

  await editInUi('svc-a', 'Service A (renamed in the UI)');
  const second = startBinary();
  // The heal run's plan is judged under the apply lease, which the killed process kept idle: it
  // waits until that lease ends by itself (unchanged for its ttl, 60 s), healing nothing meanwhile.
  await second.waitFor('the first run held as drift', (l) => l.runId === 'run-1' && l.reason === 'drift-held', 100_000);
  await second.waitFor('the pull request', () => github.pulls.length > 0);
  expect(github.pulls).toHaveLength(1);
  expect(entityTitle(emulator, 'svc-a')).toBe('Service A (renamed in the UI)');
  expect(second.logs().find((l) => l.msg === 'run applied changes')).toBeUndefined();

  await remote.push({ '.cortex/catalog/b.yaml': service('svc-b', 'Service B v2') }, 'rename b');
  const next = head();
  await second.waitFor('the new commit applied', (l) => l.msg === 'run applied changes' && l.revision === next);
  expect(entityTitle(emulator, 'svc-b')).toBe('Service B v2');
}, 200_000);
