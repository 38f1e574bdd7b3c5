/**
 * `watch --dir` beside a tool that rewrites one manifest every 0.1 s, without end: the debounce
 * (300 ms of quiet) would wait forever; its maximum wait lets a change to another manifest through,
 * and `/status` says that debounces were cut short. (The time this takes is measured by
 * `packages/bench/src/debounce.ts`; the test waits on the emulator's state, not on a clock.)
 */
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
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
let manifests: string;
let watch: RunningWatch | undefined;
let churning = false;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  manifests = join(root, 'manifests');
  await writeFiles(manifests, {
    'cortex-sync.yaml': CONFIG_YAML,
    '.cortex/catalog/busy.yaml': serviceYaml('svc-busy'),
    '.cortex/catalog/quiet.yaml': serviceYaml('svc-quiet'),
  });
});
afterEach(async () => {
  churning = false;
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

/** Rewrites `busy.yaml` every 0.1 s (whole, by rename, as an editor or generator does) until stopped. */
const churn = async (): Promise<void> => {
  const file = join(manifests, '.cortex', 'catalog', 'busy.yaml');
  for (let i = 0; churning; i += 1) {
    await writeFile(`${file}.tmp`, serviceYaml('svc-busy', `Busy ${i}`));
    await rename(`${file}.tmp`, file);
    await sleep(100);
  }
};

it('applies a change to one manifest while another is rewritten every 0.1 s, and says the debounce was cut', async () => {
  watch = await startWatch({ dir: manifests }, { emulator, cwd: root });
  await watch.waitForRun((r) => r.result === 'applied' && r.summary?.create === 2);
  churning = true;
  const churned = churn();
  await sleep(500);
  await writeFiles(manifests, { '.cortex/catalog/quiet.yaml': serviceYaml('svc-quiet', 'Quiet changed') });
  while (entityTitle(emulator, 'svc-quiet') !== 'Quiet changed') await sleep(50);
  const status = (await (await fetch(`${watch.url}/status`)).json()) as {
    sourceEvents?: { cutByMaxWait?: number; maxWaitMs?: number };
  };
  expect(status.sourceEvents?.cutByMaxWait).toBeGreaterThan(0);
  expect(status.sourceEvents?.maxWaitMs).toBeGreaterThan(0);
  churning = false;
  await churned;
}, 120_000);
