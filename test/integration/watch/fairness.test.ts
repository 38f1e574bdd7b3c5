/**
 * The fairness of one watcher of many sources: with one source of 1,000 changed entities being
 * applied, a change of another source is written before the last hundred of the big source's
 * writes (by order in the emulator's log, not by time). The figure, 5,000 entities,
 * held the same way (about 5 minutes on a loaded 2-core machine): too slow for the suite, and the
 * order does not depend on the size once the big source's queue is longer than the budget.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
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
} from '../../watch/harness.js';

let emulator: Emulator;
let root: string;
let watch: RunningWatch | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
});
afterEach(async () => {
  await watch?.stop();
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

interface SourcesStatus {
  sources: Record<string, { runs?: { result: string }[] }>;
}
const statusOf = async (w: RunningWatch) => (await (await fetch(`${w.url}/status`)).json()) as SourcesStatus;
const until = async (what: () => Promise<boolean> | boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(watch ? await statusOf(watch) : {})}`);
    await sleep(50);
  }
};
const applied = (s: SourcesStatus, name: string) => (s.sources[name]?.runs ?? []).some((r) => r.result === 'applied');

const BIG = 1000;

it("applies a small source's change while a source of 1,000 changed entities is still being applied", async () => {
  const big: Record<string, string> = {};
  for (let i = 0; i < BIG; i += 1) big[`.cortex/catalog/svc-${i}.yaml`] = serviceYaml(`big-${i}`);
  await writeFiles(join(root, 'big'), big);
  await writeFiles(join(root, 'small'), { '.cortex/catalog/one.yaml': serviceYaml('small-1') });
  await writeFiles(root, {
    'sources.yaml':
      'sources:\n  - {name: big, dir: big, sourceId: big}\n  - {name: small, dir: small, sourceId: small}\n',
  });
  const bigWrites = () =>
    emulator.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/open-api' && r.status === 200).length;
  watch = await startWatch({ config: 'sources.yaml' }, { emulator, cwd: root, env: { CORTEX_SYNC_CONCURRENCY: '4' } });
  const w = watch;
  await until(async () => applied(await statusOf(w), 'small'), 120_000);
  // The big source is writing; the small one changes now.
  await until(() => bigWrites() > 100, 60_000);
  const before = emulator.requests.length;
  await writeFiles(join(root, 'small'), {
    '.cortex/catalog/one.yaml': serviceYaml('small-1', 'changed while big runs'),
  });
  await until(() => entityTitle(emulator, 'small-1') === 'changed while big runs', 60_000);
  // By order in the emulator's log: the small change was written before the big source's last write.
  const log = emulator.requests.slice(before);
  const smallWrite = log.findIndex((r) => r.method === 'POST' && r.path === '/api/v1/open-api' && r.status === 200);
  expect(smallWrite).toBeGreaterThan(-1);
  await until(async () => applied(await statusOf(w), 'big'), 240_000);
  const bigAfter = emulator.requests
    .slice(before + smallWrite + 1)
    .filter((r) => r.method === 'POST' && r.path === '/api/v1/open-api' && r.status === 200).length;
  expect(bigAfter).toBeGreaterThan(100);
}, 360_000);
