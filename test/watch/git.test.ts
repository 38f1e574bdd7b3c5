/**
 * `watch --repo` against a bare repository (`file://`) and the emulator: a pushed commit is
 * applied, a signed webhook triggers at once while unsigned or mis-signed ones run nothing, and a
 * broken commit applies nothing, is reported on `/status` and in metrics, and leaves the pod ready.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signBody } from '../../src/watch/webhook.js';
import {
  CONFIG_YAML,
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
  type TestRemote,
  WEBHOOK_SECRET,
  writesSince,
} from './harness.js';
import { parsePrometheusText, sampleValue } from './prometheus.js';

let emulator: Emulator;
let root: string;
let remote: TestRemote;
let watch: RunningWatch | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  remote = await createRemote(root);
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

describe('watch --repo', () => {
  it('applies the branch at start, then each pushed commit it sees', async () => {
    const first = await remote.push({
      'cortex-sync.yaml': CONFIG_YAML,
      '.cortex/catalog/a.yaml': serviceYaml('svc-a'),
    });
    watch = await startWatch({ repo: remote.url, branch: 'main', interval: 100 }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.revision === first && r.result === 'applied');
    expect(entityTitle(emulator, 'svc-a')).toBe('svc-a');

    const second = await remote.push({ '.cortex/catalog/b.yaml': serviceYaml('svc-b') });
    const run = await watch.waitForRun((r) => r.revision === second);
    expect(run).toMatchObject({ trigger: 'commit', result: 'applied', summary: { create: 1 } });
    expect(entityTitle(emulator, 'svc-b')).toBe('svc-b');
    expect((await watch.status()).appliedRevision).toBe(second);
    const logged = watch.logs().find((l) => l.runId === run.runId && l.result === 'applied');
    expect(logged).toMatchObject({ level: 'info', revision: second, trigger: 'commit' });
    expect(JSON.stringify(watch.logs())).not.toContain('watch-test-key');
  });

  it('runs at once on a validly signed push webhook; a missing or wrong signature gets 401 and runs nothing', async () => {
    await remote.push({ 'cortex-sync.yaml': CONFIG_YAML, '.cortex/catalog/a.yaml': serviceYaml('svc-a') });
    watch = await startWatch(
      { repo: remote.url, branch: 'main', interval: 0 },
      { emulator, cwd: root, env: { CORTEX_SYNC_WEBHOOK_SECRET: WEBHOOK_SECRET } },
    );
    await watch.waitForRun((r) => r.result === 'applied');
    const pushed = await remote.push({ '.cortex/catalog/b.yaml': serviceYaml('svc-b') });
    const body = JSON.stringify({ ref: 'refs/heads/main', after: pushed });
    const post = (headers: Record<string, string>, payload = body) =>
      fetch(`${watch?.url}/webhook/github`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'push', ...headers },
        body: payload,
      });

    const before = emulator.requests.length;
    expect((await post({})).status).toBe(401);
    expect((await post({ 'X-Hub-Signature-256': signBody(body, 'not-the-secret') })).status).toBe(401);
    expect((await post({ 'X-Hub-Signature-256': signBody(body, WEBHOOK_SECRET) }, `${body} `)).status).toBe(401);
    const otherBranch = JSON.stringify({ ref: 'refs/heads/feature', after: pushed });
    expect((await post({ 'X-Hub-Signature-256': signBody(otherBranch, WEBHOOK_SECRET) }, otherBranch)).status).toBe(
      202,
    );
    // An unsigned body is refused on its headers, before any of it is read; a signed one over 1 MB is
    // 413. The watcher answers before the sender has finished sending and closes the connection, so
    // a sender still writing may see the connection reset instead of the answer (as from any server
    // that refuses a body unread): either is a refusal; what counts is that nothing runs.
    const refusal = (sent: Promise<Response>) =>
      sent.then(
        (r) => r.status,
        (error: unknown) => {
          const code = (error as { cause?: { code?: string } }).cause?.code;
          if (code === 'ECONNRESET' || code === 'EPIPE') return 'reset';
          throw error;
        },
      );
    expect([401, 'reset']).toContain(await refusal(post({}, 'x'.repeat(2 * 1024 * 1024))));
    const big = 'x'.repeat(2 * 1024 * 1024);
    expect([413, 'reset']).toContain(
      await refusal(post({ 'X-Hub-Signature-256': signBody(big, WEBHOOK_SECRET) }, big)),
    );
    await sleep(300);
    expect((await watch.status()).runs).toHaveLength(1);
    expect(emulator.requests.length).toBe(before);
    expect(entityTitle(emulator, 'svc-b')).toBeUndefined();

    const accepted = await post({ 'X-Hub-Signature-256': signBody(body, WEBHOOK_SECRET) });
    expect(accepted.status).toBe(202);
    const run = await watch.waitForRun((r) => r.trigger === 'webhook');
    expect(run).toMatchObject({ revision: pushed, result: 'applied', summary: { create: 1 } });
    expect(entityTitle(emulator, 'svc-b')).toBe('svc-b');
  });

  it('a broken commit applies and prunes nothing, is reported on /status and in metrics, and the pod stays ready for the fixing push', async () => {
    await remote.push({
      'cortex-sync.yaml': CONFIG_YAML,
      '.cortex/catalog/a.yaml': serviceYaml('svc-a'),
      '.cortex/catalog/b.yaml': serviceYaml('svc-b'),
    });
    watch = await startWatch(
      { repo: remote.url, branch: 'main', interval: 0, prune: true },
      { emulator, cwd: root, env: { CORTEX_SYNC_WEBHOOK_SECRET: WEBHOOK_SECRET } },
    );
    await watch.waitForRun((r) => r.result === 'applied');
    expect((await fetch(`${watch.url}/readyz`)).status).toBe(200);
    const push = async (revision: string) => {
      const body = JSON.stringify({ ref: 'refs/heads/main', after: revision });
      return fetch(`${watch?.url}/webhook/github`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-GitHub-Event': 'push',
          'X-Hub-Signature-256': signBody(body, WEBHOOK_SECRET),
        },
        body,
      });
    };

    const before = emulator.requests.length;
    const broken = await remote.push({
      '.cortex/catalog/a.yaml': `${serviceYaml('svc-a', 'renamed')}  x-cortex-groups: [unclosed\n`,
      '.cortex/catalog/b.yaml': null,
    });
    expect((await push(broken)).status).toBe(202);
    const run = await watch.waitForRun((r) => r.revision === broken);
    expect(run.result).toBe('invalid');
    expect(run.errors.join('\n')).toMatch(/\.cortex\/catalog\/a\.yaml:\d+/);
    expect(writesSince(emulator, before)).toEqual([]);
    expect(entityTitle(emulator, 'svc-a')).toBe('svc-a');
    expect(entityTitle(emulator, 'svc-b')).toBe('svc-b');

    // Readiness means "can serve": the Service keeps sending it traffic (the next webhook).
    const ready = await fetch(`${watch.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toContain(`invalid at ${broken}`);
    expect((await fetch(`${watch.url}/healthz`)).status).toBe(200);
    const metrics = parsePrometheusText(await (await fetch(`${watch.url}/metrics`)).text());
    expect(sampleValue(metrics, 'cortex_sync_last_run_ok')).toBe(0);

    const fixed = await remote.push({
      '.cortex/catalog/a.yaml': serviceYaml('svc-a', 'renamed'),
      '.cortex/catalog/b.yaml': serviceYaml('svc-b'),
    });
    expect((await push(fixed)).status).toBe(202);
    const healed = await watch.waitForRun((r) => r.revision === fixed);
    expect(healed).toMatchObject({ trigger: 'webhook', result: 'applied' });
    expect(entityTitle(emulator, 'svc-a')).toBe('renamed');
    const after = parsePrometheusText(await (await fetch(`${watch.url}/metrics`)).text());
    expect(sampleValue(after, 'cortex_sync_last_run_ok')).toBe(1);
  });
});
