/**
 * The watcher presents the engine's run report: a run whose only write repairs the ownership
 * record (a catalog page deleted in the UI, its manifest removed) is a run that applied changes,
 * with the report's reason on `/status` and in the log, the record's write in the plan gauge, and
 * every stage's duration in `/metrics`.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  API_KEY,
  CONFIG_YAML,
  type Emulator,
  removeDir,
  type RunningWatch,
  startTestEmulator,
  startWatch,
  tempDir,
  writeFiles,
} from './harness.js';
import { parsePrometheusText, sampleValue } from './prometheus.js';

const page = (slug: string): string =>
  `slug: ${slug}\nname: ${slug}\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`;

let emulator: Emulator;
let root: string;
let manifests: string;
let watch: RunningWatch | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  manifests = join(root, 'manifests');
  await writeFiles(manifests, {
    'cortex-sync.yaml': CONFIG_YAML,
    '.cortex/catalog-pages/alpha.yaml': page('alpha'),
    '.cortex/catalog-pages/beta.yaml': page('beta'),
  });
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

describe('the watcher presents the run report', () => {
  it('a run that only repairs the ownership record applied changes, and says so everywhere', async () => {
    watch = await startWatch({ dir: manifests, pruneSettle: 0 }, { emulator, cwd: root });
    const first = await watch.waitForRun((r) => r.result === 'applied');
    expect(first).toMatchObject({ reason: 'changes-applied' });

    const gone = await fetch(`${emulator.url}/api/v1/catalog-pages/beta`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(gone.ok).toBe(true);
    await rm(join(manifests, '.cortex/catalog-pages/beta.yaml'));

    const repaired = await watch.waitForRun((r) => r.trigger === 'file-change');
    expect(repaired).toMatchObject({
      result: 'applied',
      reason: 'changes-applied',
      summary: { create: 0, update: 0, delete: 0, archive: 0, noop: 1 },
    });
    expect(repaired.writes).toBeGreaterThan(0);
    const line = watch.logs().find((l) => l.runId === repaired.runId && l.result === 'applied');
    expect(line).toMatchObject({ msg: 'run applied changes', reason: 'changes-applied' });

    const metrics = parsePrometheusText(await (await fetch(`${watch.url}/metrics`)).text());
    expect(sampleValue(metrics, 'cortex_sync_plan_objects', { kind: 'inventory', action: 'update' })).toBe(1);
    for (const stage of ['load', 'read-live', 'validate', 'plan', 'lease', 'apply', 'record'])
      expect(
        sampleValue(metrics, 'cortex_sync_reconcile_stage_duration_seconds_count', { stage }),
        stage,
      ).toBeGreaterThan(0);

    // Repaired: the next look finds nothing to change.
    await writeFiles(manifests, { 'notes.txt': 'touch' });
    const after = await watch.waitForRun((r) => r.runId !== repaired.runId && r.runId !== first.runId);
    expect(after).toMatchObject({ result: 'applied', reason: 'in-sync' });
  });
});
