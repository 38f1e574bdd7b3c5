/**
 * A delete or archive needs the manifest to be missing on two looks a settle time apart: a file
 * gone for a moment (with `pruneEntities: delete`) deletes nothing and the entity keeps its id; a
 * file gone for good is removed once the settle time has passed.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RemovalSettle } from '../../src/watch/removal-settle.js';
import type { Plan } from '../../src/core/model.js';
import {
  type Emulator,
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

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  manifests = join(root, 'manifests');
  const files: Record<string, string> = { 'cortex-sync.yaml': 'sourceId: settle-test\npruneEntities: delete\n' };
  for (const tag of ['svc-a', 'svc-b', 'svc-c', 'svc-d']) files[`.cortex/catalog/${tag}.yaml`] = serviceYaml(tag);
  await writeFiles(manifests, files);
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

const deletes = () => emulator.requests.filter((r) => r.method === 'DELETE');

describe('removals wait for a second look', () => {
  it('a manifest gone for a moment deletes nothing; gone for good, it is deleted after the settle time', async () => {
    watch = await startWatch({ dir: manifests, prune: true, pruneSettle: 1500 }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied' && r.summary?.create === 4);
    const id = emulator.state.entities.idByTag['svc-d'];
    expect(id).toBeDefined();

    const text = serviceYaml('svc-d');
    await writeFiles(manifests, { '.cortex/catalog/svc-d.yaml': null });
    const deferred = await watch.waitForRun((r) => r.result === 'deferred');
    expect(deferred).toMatchObject({ waitingRemovals: ['entity/svc-d'] });
    await writeFiles(manifests, { '.cortex/catalog/svc-d.yaml': text });
    await sleep(2500);
    expect(deletes()).toEqual([]);
    expect(emulator.state.entities.idByTag['svc-d']).toBe(id);

    await writeFiles(manifests, { '.cortex/catalog/svc-d.yaml': null });
    const removed = await watch.waitForRun((r) => r.result === 'applied' && r.summary?.delete === 1, 10_000);
    expect(removed.trigger).toBe('settle');
    expect(emulator.state.entities.idByTag['svc-d']).toBeUndefined();
    expect(deletes()).toHaveLength(1);
  });
});

describe('the settle rule', () => {
  const plan = (...removed: string[]): Plan =>
    ({
      changes: removed.map((id) => ({ kind: 'entity', id, action: 'delete', diff: [], waitsFor: [] })),
      diagnostics: [],
      summary: { create: 0, update: 0, delete: removed.length, archive: 0, noop: 0 },
    }) as Plan;

  it('confirms a removal only when the run that sees it again started a settle time after the first look', () => {
    const settle = new RemovalSettle(1000);
    expect(settle.check(plan('a'), 0, 10)).toMatchObject({ approved: false, retryInMs: 1000 });
    // Planned again at 1,500 but that run began looking at 900: too early.
    expect(settle.check(plan('a'), 900, 1500).approved).toBe(false);
    expect(settle.check(plan('a'), 1010, 1100).approved).toBe(true);
    // A removal that disappears from a plan (its file came back) starts over.
    expect(settle.check(plan(), 1200, 1200).approved).toBe(true);
    expect(settle.check(plan('a'), 5000, 5000).approved).toBe(false);
    // A new removal next to a confirmed one holds the whole run.
    expect(settle.check(plan('a', 'b'), 6100, 6100)).toMatchObject({ approved: false, waiting: [{ key: 'entity/b' }] });
    expect(new RemovalSettle(0).check(plan('a'), 0, 0).approved).toBe(true);
  });

  it('confirms a removal only on a run whose load walked (not one that looked at the noted paths alone)', () => {
    const settle = new RemovalSettle(1000);
    expect(settle.check(plan('a'), 0, 10, false)).toMatchObject({ approved: false, retryInMs: 1000 });
    // Settled, but the run looked only at what its events named: a walk must confirm it, at once.
    expect(settle.check(plan('a'), 1010, 1100, false)).toMatchObject({ approved: false, retryInMs: 0 });
    expect(settle.check(plan('a'), 1110, 1120, true).approved).toBe(true);
    // With no settle time, too.
    const atOnce = new RemovalSettle(0);
    expect(atOnce.check(plan('a'), 0, 0, false)).toMatchObject({ approved: false, retryInMs: 0 });
    expect(atOnce.check(plan('a'), 5, 5, true).approved).toBe(true);
    // A plan without removals needs no walk.
    expect(atOnce.check(plan(), 6, 6, false).approved).toBe(true);
  });
});
