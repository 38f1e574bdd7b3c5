/**
 * Stopping the watcher gives back the apply lease it keeps between runs: an apply of the same
 * source that follows does not wait for it (a lease wait of 0 succeeds at once), in-process and as
 * the binary a container or a terminal runs, on SIGTERM and on SIGHUP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { readLease } from '../../src/engine/lease.js';
import { cli } from '../e2e/harness.js';
import {
  API_KEY,
  type Emulator,
  entityTitle,
  removeDir,
  serviceYaml,
  sleep,
  startTestEmulator,
  startWatch,
  tempDir,
  writeFiles,
} from './harness.js';

const SOURCE = 'lease-release-test';
const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'bin', 'cortex-sync.js');

let emulator: Emulator;
let root: string;
let manifests: string;
let child: ChildProcess | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  manifests = join(root, 'manifests');
  await writeFiles(manifests, {
    'cortex-sync.yaml': `sourceId: ${SOURCE}\n`,
    '.cortex/catalog/a.yaml': serviceYaml('svc-a'),
  });
});
afterEach(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  await emulator.stop();
  await removeDir(root);
});

const env = () => ({
  CORTEX_BASE_URL: emulator.url,
  CORTEX_API_KEY: API_KEY,
  CORTEX_SYNC_ORIGIN: 'github.com/acme/lease-release',
});

/** Resolves once the watcher keeps the source's lease idle between its runs (after a clean apply). */
const keptIdle = async (): Promise<void> => {
  const api = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
  try {
    while ((await readLease(api, SOURCE))?.idle !== true) await sleep(20);
  } finally {
    await api.close();
  }
};

/** After the watcher stopped: the lease is released, and an apply that will not wait for it is done. */
const expectLeaseGivenBack = async (): Promise<void> => {
  const api = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
  try {
    expect(await readLease(api, SOURCE)).toMatchObject({ expiresAt: 0 });
  } finally {
    await api.close();
  }
  const clone = join(root, 'clone');
  await cp(manifests, clone, { recursive: true });
  await writeFiles(clone, { '.cortex/catalog/a.yaml': serviceYaml('svc-a', 'From the CLI') });
  const run = await cli(['apply', '--dir', '.', '--auto-approve'], {
    cwd: clone,
    env: { ...env(), CORTEX_SYNC_LEASE_WAIT: '0' },
  });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).not.toMatch(/kept idle by a watcher/);
  expect(entityTitle(emulator, 'svc-a')).toBe('From the CLI');
};

it('stopping the watcher releases the lease it kept after a clean apply', async () => {
  const watch = await startWatch({ dir: manifests }, { emulator, cwd: root, env: env() });
  await watch.waitForRun((r) => r.result === 'applied' && r.summary?.create === 1);
  await keptIdle();
  expect(await watch.stop()).toBe(0);
  await expectLeaseGivenBack();
});

it.each(['SIGTERM', 'SIGHUP'] as const)(
  'the binary on %s releases the lease it kept, and exits 0',
  async (signal) => {
    if (!existsSync(join(REPO, 'dist', 'watch', 'command.js'))) throw new Error('dist/ is stale: npm run build');
    const proc = spawn(
      process.execPath,
      [BIN, 'watch', '--dir', 'manifests', '--listen', '127.0.0.1:0', '--heal-interval', '0'],
      {
        cwd: root,
        env: { PATH: process.env.PATH, ...env(), CORTEX_SYNC_CACHE_DIR: join(root, 'cache'), NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = proc;
    let stdout = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    await keptIdle();
    proc.kill(signal);
    expect(await exited, stdout).toBe(0);
    expect(stdout).toContain('"msg":"stopped"');
    await expectLeaseGivenBack();
  },
  60_000,
);
