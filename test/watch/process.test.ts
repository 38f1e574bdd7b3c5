/**
 * The binary as a container runs it (`cortex-sync watch`, built into dist/ by `npm ci`): the first
 * stdout line is the address, and SIGTERM in the middle of an apply stops starting changes, lets
 * those in flight finish, records every change in the plan log (done or skipped) and exits 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  API_KEY,
  CONFIG_YAML,
  type Emulator,
  removeDir,
  serviceYaml,
  sleep,
  startTestEmulator,
  tempDir,
  writeFiles,
} from './harness.js';

const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'bin', 'cortex-sync.js');
const SERVICES = 30;

let emulator: Emulator;
let root: string;
let child: ChildProcess | undefined;

beforeEach(async () => {
  if (!existsSync(join(REPO, 'dist', 'watch', 'command.js'))) {
    throw new Error('dist/ has no watch command: run `npm run build` (npm ci does it through prepare)');
  }
  emulator = await startTestEmulator({ faults: { latencyMs: 100 } });
  root = await tempDir();
});
afterEach(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  await emulator.stop();
  await removeDir(root);
});

const entityWrites = () =>
  emulator.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/open-api' && r.status === 200);

it('SIGTERM during an apply lets in-flight work finish, records it, and exits 0', async () => {
  const files: Record<string, string> = { 'cortex-sync.yaml': CONFIG_YAML };
  for (let i = 0; i < SERVICES; i += 1) files[`.cortex/catalog/svc-${i}.yaml`] = serviceYaml(`svc-${i}`);
  await writeFiles(join(root, 'manifests'), files);

  const proc = spawn(
    process.execPath,
    [BIN, 'watch', '--dir', 'manifests', '--listen', '127.0.0.1:0', '--heal-interval', '0'],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        CORTEX_API_KEY: API_KEY,
        CORTEX_BASE_URL: emulator.url,
        CORTEX_SYNC_CACHE_DIR: join(root, 'cache'),
        CORTEX_SYNC_CONCURRENCY: '2',
        NO_COLOR: '1',
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

  const deadline = Date.now() + 20_000;
  while (entityWrites().length < 3) {
    if (Date.now() > deadline) throw new Error(`no writes arrived; stdout: ${stdout}`);
    await sleep(20);
  }
  proc.kill('SIGTERM');
  expect(await exited).toBe(0);

  const lines = stdout.split('\n').filter(Boolean);
  expect(lines[0]).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
  const logs = lines.slice(1).map((l) => JSON.parse(l) as Record<string, unknown>);
  const run = logs.find((l) => l.runId === 'run-1' && typeof l.result === 'string');
  expect(run).toMatchObject({ result: 'interrupted', revision: 'local' });
  expect(logs.at(-1)).toMatchObject({ msg: 'stopped', result: 'finished' });
  expect(stdout).not.toContain(API_KEY);

  // The plan log is in the source's own folder of the cache directory.
  const folders = (await readdir(join(root, 'cache'))).filter((f) => /^dir-.*-manifests-[0-9a-f]{12}$/.test(f));
  expect(folders).toHaveLength(1);
  const log = (await readFile(join(root, 'cache', folders[0] ?? '', 'plan-log.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; id: string; outcome: string });
  const done = log.filter((l) => l.kind === 'entity' && l.outcome === 'ok');
  const skipped = log.filter((l) => l.kind === 'entity' && l.outcome === 'skipped');
  // Every service that reached the workspace is recorded as done; every other one as skipped.
  const created = Object.keys(emulator.state.entities.idByTag).filter((tag) => tag.startsWith('svc-'));
  expect(done.map((l) => l.id).sort()).toEqual(created.sort());
  expect(done.length).toBeLessThan(SERVICES);
  expect(done.length + skipped.length).toBe(SERVICES);
});
