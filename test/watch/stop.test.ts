/**
 * Stopping while git hangs: a remote on 127.0.0.1 that accepts connections and never answers
 * keeps `git fetch` (and the `git remote-http` it starts) waiting. On stop, the whole git process
 * group is killed: the connection closes at once and the process exits within the shutdown
 * timeout, in-process and as the binary a container runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { API_KEY, type Emulator, removeDir, sleep, startTestEmulator, startWatch, tempDir } from './harness.js';

const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'bin', 'cortex-sync.js');

let emulator: Emulator;
let root: string;
let hung: { server: Server; url: string; open: Set<Socket>; accepted: number };
let child: ChildProcess | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    hung.accepted += 1;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => {});
    // Reads the request, never answers.
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  hung = { server, url: `http://127.0.0.1:${port}/catalog.git`, open, accepted: 0 };
});
afterEach(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  for (const socket of hung.open) socket.destroy();
  await new Promise((resolve) => hung.server.close(resolve));
  await emulator.stop();
  await removeDir(root);
});

/** Waits for `condition`, however long a busy machine takes (the test's own timeout bounds it). */
const until = async (condition: () => boolean) => {
  while (!condition()) await sleep(20);
};

it('stop kills the git fetch hanging on a remote that never answers, with everything it started', async () => {
  const watch = await startWatch(
    { repo: hung.url, branch: 'main', shutdownTimeout: 1000 },
    { emulator, cwd: root, env: { PATH: process.env.PATH ?? '' } },
  );
  await until(() => hung.open.size > 0); // git connected
  // The fetch never ends by itself: stop returning at all is the proof it did not wait for it.
  expect(await watch.stop()).toBe(0);
  // The connection git remote-http held is closed: nothing of the fetch is left running.
  await until(() => hung.open.size === 0);
  expect(JSON.stringify(watch.logs().find((l) => l.result === 'interrupted'))).toContain('git fetch');
});

it('the binary exits 0 on SIGTERM within the shutdown timeout while git hangs', async () => {
  if (!existsSync(join(REPO, 'dist', 'watch', 'git-process.js'))) throw new Error('dist/ is stale: npm run build');
  const proc = spawn(
    process.execPath,
    [BIN, 'watch', '--repo', hung.url, '--branch', 'main', '--listen', '127.0.0.1:0', '--shutdown-timeout', '2s'],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        CORTEX_API_KEY: API_KEY,
        CORTEX_BASE_URL: emulator.url,
        CORTEX_SYNC_CACHE_DIR: join(root, 'cache'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child = proc;
  let stdout = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  await until(() => hung.open.size > 0); // git connected
  proc.kill('SIGTERM');
  // The fetch never ends by itself: exiting at all is the proof the shutdown did not wait for it.
  expect(await exited).toBe(0);
  expect(stdout).toContain('"msg":"stopped"');
  await until(() => hung.open.size === 0);
});
