/**
 * `watch --dir` when the root itself changes: moved away and back, or swapped for a symlink to
 * another folder (what a git-sync sidecar does). The file watcher is armed again on the folder now
 * at the path, and later changes are applied; while the root is missing nothing is applied.
 */
import { cp, mkdir, rename, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
  writesSince,
} from './harness.js';

let emulator: Emulator;
let root: string;
let manifests: string;
let watch: RunningWatch | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  manifests = join(root, 'manifests');
  await writeFiles(manifests, { 'cortex-sync.yaml': CONFIG_YAML, '.cortex/catalog/a.yaml': serviceYaml('svc-a') });
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

describe('watch --dir when the root moves', () => {
  it('a root moved away and back is watched again', async () => {
    watch = await startWatch({ dir: manifests }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied');

    await rename(manifests, join(root, 'away'));
    await sleep(1500);
    const before = emulator.requests.length;
    const whileAway = (await watch.status()).runs.length;
    await rename(join(root, 'away'), manifests);
    await sleep(1500);
    expect(writesSince(emulator, before)).toEqual([]);

    await writeFiles(manifests, { '.cortex/catalog/a.yaml': serviceYaml('svc-a', 'Back again') });
    await watch.waitForRun((r) => r.summary?.update === 1 && r.result === 'applied');
    expect(entityTitle(emulator, 'svc-a')).toBe('Back again');
    expect((await watch.status()).runs.length).toBeGreaterThan(whileAway);
    expect(JSON.stringify(watch.logs())).toContain('is gone; watching for it to come back');
  });

  it('a root swapped for a symlink to another folder is followed there', async () => {
    const live = join(root, 'live');
    await mkdir(live);
    const linked = join(live, 'current');
    await symlink(manifests, linked);
    watch = await startWatch({ dir: linked }, { emulator, cwd: root });
    const first = await watch.waitForRun((r) => r.result === 'applied');

    const next = join(root, 'rev-2');
    await cp(manifests, next, { recursive: true });
    await writeFiles(next, { '.cortex/catalog/a.yaml': serviceYaml('svc-a', 'Revision 2') });
    // Swap the symlink atomically, as git-sync does.
    await symlink(next, join(live, 'tmp-link'));
    await rename(join(live, 'tmp-link'), linked);
    await watch.waitForRun((r) => r.summary?.update === 1 && r.result === 'applied');
    expect(entityTitle(emulator, 'svc-a')).toBe('Revision 2');

    await writeFiles(next, { '.cortex/catalog/b.yaml': serviceYaml('svc-b') });
    await watch.waitForRun((r) => r.runId !== first.runId && r.summary?.create === 1 && r.result === 'applied');
    expect(entityTitle(emulator, 'svc-b')).toBe('svc-b');
  });
});
