/**
 * The watcher's plan log does not grow without bound: once it reaches `--plan-log-max-size`, the
 * next run rotates it (`.1` the newest, `--plan-log-keep` old files, the oldest removed); a symlink
 * planted where a rotated log goes is replaced, never written through; a size that is not one is
 * an error naming the flag.
 */
import { lstat, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cli } from '../cli/run.js';
import {
  CONFIG_YAML,
  type Emulator,
  entityTitle,
  removeDir,
  type RunningWatch,
  serviceYaml,
  sleep,
  startTestEmulator,
  startWatch,
  tempDir,
  writeFiles,
} from './harness.js';

let emulator: Emulator;
let root: string;
let watch: RunningWatch | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  await writeFiles(join(root, 'manifests'), {
    'cortex-sync.yaml': CONFIG_YAML,
    '.cortex/catalog/a.yaml': serviceYaml('svc-a'),
  });
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

const lines = async (file: string): Promise<string[]> => (await readFile(file, 'utf8')).split('\n').filter(Boolean);

it('rotates the plan log once it reaches its size, keeping the newest files, never writing through a planted symlink', async () => {
  const logs = join(root, 'logs');
  const planLog = join(logs, 'plan-log.jsonl');
  const outside = join(root, 'outside.txt');
  await writeFile(outside, 'not a plan log\n');
  await writeFiles(logs, { 'keep.txt': '' });
  // Planted where the first rotation puts the log.
  await symlink(outside, `${planLog}.1`);
  watch = await startWatch(
    { dir: join(root, 'manifests'), planLog, planLogMaxSize: 1, planLogKeep: 2 },
    { emulator, cwd: root },
  );
  await watch.waitForRun((r) => r.result === 'applied');
  for (let i = 1; i <= 4; i += 1) {
    await writeFiles(join(root, 'manifests'), { '.cortex/catalog/a.yaml': serviceYaml('svc-a', `Title ${i}`) });
    while (entityTitle(emulator, 'svc-a') !== `Title ${i}`) await sleep(25);
    await watch.waitForRun((r) => r.result === 'applied' && r.runId === `run-${i + 1}`);
  }
  const files = (await readdir(logs)).filter((f) => f.startsWith('plan-log')).sort();
  expect(files).toEqual(['plan-log.jsonl', 'plan-log.jsonl.1', 'plan-log.jsonl.2']);
  // Each file is one run's log of its write of svc-a: the newest run in the current file, older ones after.
  const written = async (file: string) =>
    (await lines(file))
      .map((l) => JSON.parse(l) as { id: string; method: string; ts: string })
      .filter((l) => l.id === 'svc-a' && l.method !== 'GET');
  const [current, first, second] = [
    await written(planLog),
    await written(`${planLog}.1`),
    await written(`${planLog}.2`),
  ];
  expect([current.length, first.length, second.length]).toEqual([1, 1, 1]);
  expect(second[0]!.ts < first[0]!.ts && first[0]!.ts < current[0]!.ts).toBe(true);
  for (const f of files) expect((await lstat(join(logs, f))).isFile()).toBe(true);
  expect(await readFile(outside, 'utf8')).toBe('not a plan log\n');
}, 60_000);

it('refuses a size or a count that is not one, naming the flag', async () => {
  const size = await cli(['watch', '--dir', 'manifests', '--plan-log-max-size', '10 apples'], { cwd: root });
  expect(size.code).toBe(1);
  expect(size.stderr).toContain("option '--plan-log-max-size <size>' argument '10 apples' is invalid");
  const keep = await cli(['watch', '--dir', 'manifests', '--plan-log-keep', '-1'], { cwd: root });
  expect(keep.code).toBe(1);
  expect(keep.stderr).toContain('--plan-log-keep');
});
