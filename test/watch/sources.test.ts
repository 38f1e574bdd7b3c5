/**
 * `watch --config FILE`: several sources in one process, each applied with its own source id,
 * `/status` and `/metrics` per source, a webhook that runs only the source whose repository it
 * names, and a source that cannot run leaving the others running.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { signBody } from '../../src/watch/webhook.js';
import {
  createRemote,
  type Emulator,
  entityTitle,
  removeDir,
  type RunningWatch,
  serviceYaml,
  sleep,
  startTestEmulator,
  startWatch,
  tempDir,
  WEBHOOK_SECRET,
  writeFiles,
} from './harness.js';

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
  sources: Record<string, { error?: string; runs?: { result: string; trigger: string }[]; onDrift?: string }>;
}
const statusOf = async (w: RunningWatch) => (await (await fetch(`${w.url}/status`)).json()) as SourcesStatus;
const until = async (what: () => Promise<boolean> | boolean, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(watch ? await statusOf(watch) : {})}`);
    await sleep(50);
  }
};
const applied = (s: SourcesStatus, name: string, trigger?: string) =>
  (s.sources[name]?.runs ?? []).some((r) => r.result === 'applied' && (trigger === undefined || r.trigger === trigger));

it('applies every source in one process, reports each, and runs only the source a push names', async () => {
  const remote = await createRemote(join(root, 'remote'));
  await remote.push({ 'catalog/.cortex/catalog/svc-a.yaml': serviceYaml('svc-a') });
  await writeFiles(join(root, 'local'), { '.cortex/catalog/svc-b.yaml': serviceYaml('svc-b') });
  await writeFiles(root, {
    'sources.yaml': [
      'sources:',
      `  - {name: team-a, repo: "${remote.url}", branch: main, path: catalog, sourceId: team-a, onDrift: report}`,
      '  - {name: team-b, dir: local, sourceId: team-b}',
      '  - {name: broken, dir: missing-folder}',
    ].join('\n'),
  });
  watch = await startWatch(
    { config: 'sources.yaml' },
    { emulator, cwd: root, env: { CORTEX_SYNC_WEBHOOK_SECRET: WEBHOOK_SECRET } },
  );
  const w = watch;
  await until(async () => {
    const s = await statusOf(w);
    return applied(s, 'team-a') && applied(s, 'team-b');
  });
  expect(entityTitle(emulator, 'svc-a')).toBe('svc-a');
  expect(entityTitle(emulator, 'svc-b')).toBe('svc-b');
  const status = await statusOf(w);
  expect(status.sources.broken?.error).toMatch(/missing-folder/);
  expect(status.sources['team-a']?.onDrift).toBe('report');

  const metrics = await (await fetch(`${w.url}/metrics`)).text();
  expect(metrics).toMatch(/cortex_sync_reconcile_runs_total\{result="applied",source="team-a"\} 1/);
  expect(metrics).toMatch(/cortex_sync_reconcile_runs_total\{result="applied",source="team-b"\} 1/);
  expect(metrics).toMatch(/^cortex_sync_leader 1$/m);

  // A push to team-a's repository runs team-a alone (another repository's push runs nothing).
  await remote.push({ 'catalog/.cortex/catalog/svc-a.yaml': serviceYaml('svc-a', 'A, pushed') });
  const deliver = async (repository: Record<string, string>) => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: 'abc', repository });
    return fetch(`${w.url}/webhook/github`, {
      method: 'POST',
      headers: {
        'X-GitHub-Event': 'push',
        'X-Hub-Signature-256': signBody(body, WEBHOOK_SECRET),
        'Content-Type': 'application/json',
      },
      body,
    });
  };
  const other = await deliver({ clone_url: 'https://github.com/acme/other.git' });
  expect(other.status).toBe(202);
  expect(await other.json()).toMatchObject({ triggered: false });
  const ours = await deliver({
    clone_url: remote.url.replace(/^file:\/\//, 'file://'),
    html_url: 'https://x.example/y',
  });
  expect(ours.status).toBe(202);
  expect(await ours.json()).toMatchObject({ triggered: true });
  await until(async () => applied(await statusOf(w), 'team-a', 'webhook'));
  expect(entityTitle(emulator, 'svc-a')).toBe('A, pushed');
  expect((await statusOf(w)).sources['team-b']?.runs?.map((r) => r.trigger)).toEqual(['startup']);
});
