/**
 * The end-to-end promise of the watcher's noted-changes load, driven through the real `watch --dir`
 * against the emulator: an event the watcher missed (a folder it cannot watch) only delays a
 * change; it never turns into a delete, even with `--prune-settle 0`.
 */
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FsSpy, spyOnFs, systemError } from './fs-spy.js';
import {
  type Emulator,
  removeDir,
  type RunningWatch,
  serviceYaml,
  startTestEmulator,
  startWatch,
  tempDir,
  writeFiles,
} from './harness.js';

let emulator: Emulator;
let root: string;
let manifests: string;
let watch: RunningWatch | undefined;
let spy: FsSpy | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  manifests = join(root, 'manifests');
  const files: Record<string, string> = {
    'cortex-sync.yaml': 'sourceId: missed-events\npruneEntities: delete\n',
    'services/moved/cortex.yaml': serviceYaml('svc-moved'),
    'parked/README.md': 'a folder the watcher cannot watch',
  };
  for (const tag of ['svc-a', 'svc-b', 'svc-c', 'svc-d']) files[`.cortex/catalog/${tag}.yaml`] = serviceYaml(tag);
  await writeFiles(manifests, files);
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  spy?.restore();
  spy = undefined;
  await emulator.stop();
  await removeDir(root);
});

const deletes = () => emulator.requests.filter((r) => r.method === 'DELETE');

describe('watch --dir: a missed event never deletes', () => {
  it('a manifest moved into a folder that cannot be watched: its removal is seen, its arrival missed; nothing is deleted', async () => {
    spy = spyOnFs();
    const parked = join(manifests, 'parked');
    spy.failWatch = (path) => (path === parked ? systemError('ENOSPC', 'ENOSPC: System limit reached') : undefined);
    watch = await startWatch({ dir: manifests, prune: true, pruneSettle: 0 }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied' && r.summary?.create === 5);
    // The folder's failure reported `.`: the run it asked for walks, and finds nothing to change.
    await watch.waitForRun((r) => r.trigger === 'file-change' && r.result === 'applied');
    const id = emulator.state.entities.idByTag['svc-moved'];
    expect(id).toBeDefined();

    await rename(join(manifests, 'services/moved/cortex.yaml'), join(parked, 'cortex.yaml'));
    // The events name the file gone; a load that looked only at them must not be the one to delete:
    // the removal is confirmed (or not) by a run that walks, which finds the manifest where it went.
    const after = await watch.waitForRun(
      (r) => r.result === 'applied' && (r.trigger === 'settle' || (r.summary?.delete ?? 0) > 0),
    );
    expect(deletes()).toEqual([]);
    expect(after.summary).toMatchObject({ delete: 0, archive: 0 });
    expect(emulator.state.entities.idByTag['svc-moved']).toBe(id);
  });
});
