/**
 * `watch --dir` against the emulator: a file change is applied, a UI edit (a write straight to
 * the API) is put back at the next heal interval, and `/metrics` is Prometheus text carrying the
 * runs, durations, plan, drift, API requests, 429s and pauses, and the applied revision.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  API_KEY,
  CONFIG_YAML,
  type Emulator,
  entityTitle,
  removeDir,
  type RunningWatch,
  serviceYaml,
  startTestEmulator,
  startWatch,
  tempDir,
  writeFiles,
} from './harness.js';
import { parsePrometheusText, sampleValue } from './prometheus.js';

let emulator: Emulator;
let root: string;
let manifests: string;
let watch: RunningWatch | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  manifests = `${root}/manifests`;
  await writeFiles(manifests, {
    'cortex-sync.yaml': CONFIG_YAML,
    '.cortex/catalog/a.yaml': serviceYaml('svc-a'),
    '.cortex/catalog/b.yaml': serviceYaml('svc-b'),
  });
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

/** What someone does in the vendor's UI: changes the entity's title behind the repository's back. */
const editInUi = async (tag: string, title: string): Promise<void> => {
  const response = await fetch(`${emulator.url}/api/v1/open-api`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/openapi;charset=UTF-8' },
    body: `openapi: 3.0.1\ninfo:\n  title: ${title}\n  x-cortex-tag: ${tag}\n`,
  });
  expect(response.ok).toBe(true);
};

describe('watch --dir', () => {
  it('applies a changed file', async () => {
    watch = await startWatch({ dir: manifests }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied' && r.summary?.create === 2);

    await writeFiles(manifests, { '.cortex/catalog/a.yaml': serviceYaml('svc-a', 'Service A') });
    const run = await watch.waitForRun((r) => r.trigger === 'file-change');
    expect(run).toMatchObject({ result: 'applied', summary: { update: 1 } });
    expect(entityTitle(emulator, 'svc-a')).toBe('Service A');
    const metrics = parsePrometheusText(await (await fetch(`${watch.url}/metrics`)).text());
    expect(sampleValue(metrics, 'cortex_sync_drift_changes_total')).toBe(0);
  });

  it('applies a manifest in a new nested folder, then an edit of it (the load trusts the paths reported)', async () => {
    watch = await startWatch({ dir: manifests }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied' && r.summary?.create === 2);

    await writeFiles(manifests, { 'teams/new/svc-n/cortex.yaml': serviceYaml('svc-n') });
    await watch.waitForRun((r) => r.trigger === 'file-change' && r.summary?.create === 1);
    expect(entityTitle(emulator, 'svc-n')).toBe('svc-n');

    await writeFiles(manifests, { 'teams/new/svc-n/cortex.yaml': serviceYaml('svc-n', 'Edited in a new folder') });
    const edited = await watch.waitForRun((r) => r.trigger === 'file-change' && r.summary?.update === 1);
    expect(edited.result).toBe('applied');
    expect(entityTitle(emulator, 'svc-n')).toBe('Edited in a new folder');
  });

  it('puts back an edit made in the UI at the next heal interval, and counts it as drift', async () => {
    watch = await startWatch({ dir: manifests, healInterval: 300 }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied' && r.summary?.create === 2);

    await editInUi('svc-b', 'Edited in the UI');
    expect(entityTitle(emulator, 'svc-b')).toBe('Edited in the UI');
    const healed = await watch.waitForRun((r) => r.trigger === 'heal' && r.summary?.update === 1);
    expect(healed.result).toBe('applied');
    expect(entityTitle(emulator, 'svc-b')).toBe('svc-b');

    const metrics = parsePrometheusText(await (await fetch(`${watch.url}/metrics`)).text());
    expect(sampleValue(metrics, 'cortex_sync_drift_changes_total')).toBe(1);
  });

  it('serves /metrics as Prometheus text with every documented metric', async () => {
    emulator.setFaults({ every429: 12, retryAfterSeconds: 0 });
    watch = await startWatch({ dir: manifests }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied');

    const response = await fetch(`${watch.url}/metrics`);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const metrics = parsePrometheusText(await response.text());
    expect(sampleValue(metrics, 'cortex_sync_reconcile_runs_total', { result: 'applied' })).toBe(1);
    expect(metrics.types.get('cortex_sync_reconcile_duration_seconds')).toBe('histogram');
    expect(sampleValue(metrics, 'cortex_sync_reconcile_duration_seconds_count')).toBe(1);
    expect(sampleValue(metrics, 'cortex_sync_reconcile_duration_seconds_bucket', { le: '+Inf' })).toBe(1);
    expect(sampleValue(metrics, 'cortex_sync_last_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(sampleValue(metrics, 'cortex_sync_plan_objects', { kind: 'entity', action: 'create' })).toBe(2);
    expect(sampleValue(metrics, 'cortex_sync_drift_changes_total')).toBe(0);
    expect(sampleValue(metrics, 'cortex_sync_api_requests_total', { method: 'GET', status: '200' })).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'cortex_sync_api_requests_total', { method: 'POST', status: '200' })).toBeGreaterThan(
      0,
    );
    const throttled = emulator.requests.filter((r) => r.status === 429).length;
    expect(throttled).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'cortex_sync_api_rate_limited_total')).toBe(throttled);
    expect(metrics.types.get('cortex_sync_api_paused_seconds_total')).toBe('counter');
    expect(sampleValue(metrics, 'cortex_sync_applied_revision_info', { revision: 'local' })).toBe(1);
  });
});
