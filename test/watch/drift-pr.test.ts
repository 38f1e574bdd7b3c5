/**
 * `watch --repo … --on-drift pr` end to end: a bare repository as the remote, the emulator as
 * Cortex and a fake GitHub on 127.0.0.1. Two UI edits become exactly one pull request whose commit
 * changes exactly those two values (a commented file byte-identical elsewhere); a third edit
 * updates the same pull request; closing it unmerged heals; merging it leaves nothing to apply. A
 * source that is not a git repository reports instead.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeGitHub, type FakePull, startFakeGitHub } from '../action/fake-github.js';
import {
  API_KEY,
  createRemote,
  type Emulator,
  entityTitle,
  removeDir,
  type RunningWatch,
  startTestEmulator,
  startWatch,
  tempDir,
  type TestRemote,
  writeFiles,
} from './harness.js';
import { parsePrometheusText, sampleValue } from './prometheus.js';

const BRANCH = 'cortex-sync/drift/acme-catalog';
const TOKEN = 'drift-test-github-token-0123456789';

const SERVICE_A = `# Service A: the platform team's. Keep this comment.
openapi: 3.0.1
info:
  title: "Service A"   # the name people search for
  description: Takes orders.
  x-cortex-tag: svc-a
  x-cortex-type: service
  # groups drive the scorecards
  x-cortex-groups: [tier-1]
`;
const SERVICE_B = `openapi: 3.0.1
info:
  title: Service B
  x-cortex-tag: svc-b
  x-cortex-type: service
`;

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let remote: TestRemote;
let watch: RunningWatch | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir();
  remote = await createRemote(root);
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

const bareGit = (...args: string[]): string =>
  execFileSync('git', args, {
    cwd: join(root, 'remote.git'),
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: root },
  }).trim();

const editInUi = async (tag: string, lines: string): Promise<void> => {
  const response = await fetch(`${emulator.url}/api/v1/open-api`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/openapi;charset=UTF-8' },
    body: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n${lines}`,
  });
  expect(response.ok).toBe(true);
};

const until = async <T>(what: string, find: () => T | undefined, timeoutMs = 20_000): Promise<T> => {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** The +/- lines of the drift branch against main (without the file headers). */
const changedLines = (branch = BRANCH): string[] =>
  bareGit('diff', '--unified=0', 'main', branch)
    .split('\n')
    .filter((l) => /^[+-]/.test(l) && !/^(\+\+\+|---) /.test(l));

/** The watcher of the remote (its checkout and cache in `root`: a restart finds them again). */
const watchRemote = (env: NodeJS.ProcessEnv = {}) =>
  startWatch(
    { repo: remote.url, branch: 'main', interval: 100, healInterval: 300 },
    {
      emulator,
      cwd: root,
      env: { GITHUB_TOKEN: TOKEN, GITHUB_REPOSITORY: 'acme/catalog', GITHUB_API_URL: github.url, ...env },
    },
  );

const startDriftWatch = async () => {
  await remote.push({
    'cortex-sync.yaml': 'sourceId: acme-catalog\nonDrift: pr\n',
    '.cortex/catalog/a.yaml': SERVICE_A,
    '.cortex/catalog/b.yaml': SERVICE_B,
  });
  watch = await watchRemote();
  await watch.waitForRun((r) => r.result === 'applied' && r.summary?.create === 2);
  return watch;
};

describe('watch --on-drift pr', () => {
  it('proposes two UI edits as one pull request, updates it for a third, heals once it is closed unmerged', async () => {
    const running = await startDriftWatch();
    await editInUi('svc-a', '  title: Service A (renamed in the UI)\n');
    await editInUi('svc-b', '  title: Service B, fixed at 3 a.m.\n');

    const pull = await until('a pull request for two objects', () =>
      github.pulls.find((p) => p.title === 'Drift: 2 objects changed outside git'),
    );
    expect(github.pulls).toHaveLength(1);
    expect(pull).toMatchObject({ head: BRANCH, base: 'main', state: 'open' });
    expect(pull.body).toContain('<!-- cortex-sync:drift source=acme-catalog head=');
    expect(pull.body).toContain('Service A (renamed in the UI)');
    expect(pull.body).not.toContain(API_KEY);
    expect(pull.body).not.toContain(TOKEN);
    // Exactly the two values; the commented file byte-identical elsewhere (quotes and comment kept).
    expect(changedLines().sort()).toEqual(
      [
        '-  title: "Service A"   # the name people search for',
        '+  title: "Service A (renamed in the UI)"   # the name people search for',
        '-  title: Service B',
        '+  title: Service B, fixed at 3 a.m.',
      ].sort(),
    );
    // Held, not healed, while it is open.
    expect(entityTitle(emulator, 'svc-a')).toBe('Service A (renamed in the UI)');
    const metrics = parsePrometheusText(await (await fetch(`${running.url}/metrics`)).text());
    expect(sampleValue(metrics, 'cortex_sync_drift_objects', { source: 'acme-catalog' })).toBe(2);
    const status = (await (await fetch(`${running.url}/status`)).json()) as {
      drift?: { mode: string; pull?: { number: number } };
    };
    expect(status.drift).toMatchObject({ mode: 'pr', pull: { number: pull.number } });

    await editInUi('svc-a', '  description: Takes orders and refunds.\n');
    await until('the same pull request updated', () =>
      pull.title === 'Drift: 3 objects changed outside git' || changedLines().length === 6 ? true : undefined,
    );
    await until('the branch with the third value', () => (changedLines().length === 6 ? true : undefined));
    expect(github.pulls).toHaveLength(1);
    expect(changedLines()).toContain('+  description: Takes orders and refunds.');

    pull.state = 'closed';
    await until('the heal after closing', () => (entityTitle(emulator, 'svc-a') === 'Service A' ? true : undefined));
    await until('svc-b healed', () => (entityTitle(emulator, 'svc-b') === 'Service B' ? true : undefined));
    expect(github.pulls).toHaveLength(1);
  });

  it('restarted at the commit it applied, holds a UI edit under a drift pull request; a new commit is applied', async () => {
    const first = await startDriftWatch();
    const applied = bareGit('rev-parse', 'main');
    expect(await first.stop()).toBe(0);
    watch = undefined;
    await editInUi('svc-a', '  title: Service A (renamed in the UI)\n');

    // The same commit at the restart: the first run is a heal run, its drift proposed, not healed.
    const running = await watchRemote();
    watch = running;
    const held = await running.waitForRun((r) => r.reason === 'drift-held');
    expect(held.revision).toBe(applied);
    const pull = await until('a pull request', () => github.pulls[0]);
    expect(pull).toMatchObject({ head: BRANCH, title: 'Drift: 1 object changed outside git', state: 'open' });
    expect(changedLines()).toContain('+  title: "Service A (renamed in the UI)"   # the name people search for');
    expect(entityTitle(emulator, 'svc-a')).toBe('Service A (renamed in the UI)');
    const said = running.logs().find((l) => String(l.msg).startsWith('first run since start at'));
    expect(String(said?.msg)).toContain("the commit the source's lease record says was applied last");
    // Further heal runs hold it too (they take the lease themselves), and open no second pull request.
    await running.waitForRun((r) => r.reason === 'drift-held' && Number(r.runId.slice(4)) >= 5, 30_000);
    expect((await running.status()).runs.filter((r) => r.result === 'applied')).toEqual([]);
    expect(entityTitle(emulator, 'svc-a')).toBe('Service A (renamed in the UI)');
    expect(github.pulls).toHaveLength(1);

    // Restarted again (the held runs left no mark): still held, the same pull request kept.
    expect(await running.stop()).toBe(0);
    const again = await watchRemote();
    watch = again;
    await again.waitForRun((r) => r.reason === 'drift-held' && r.trigger === 'startup');
    expect(entityTitle(emulator, 'svc-a')).toBe('Service A (renamed in the UI)');
    expect(github.pulls).toHaveLength(1);
    expect(pull.state).toBe('open');

    // A new commit that changes another entity is applied.
    await remote.push({ '.cortex/catalog/b.yaml': SERVICE_B.replace('Service B', 'Service B v2') }, 'rename b');
    const next = bareGit('rev-parse', 'main');
    const run = await again.waitForRun((r) => r.revision === next && r.result === 'applied');
    expect(run.summary?.update ?? 0).toBeGreaterThanOrEqual(1);
    expect(entityTitle(emulator, 'svc-b')).toBe('Service B v2');
    // svc-a is not asserted here: a run after a new commit applies the whole plan, held objects included.
  });

  it('restarted at another commit than the one applied, applies it and says why', async () => {
    const first = await startDriftWatch();
    expect(await first.stop()).toBe(0);
    watch = undefined;
    await editInUi('svc-a', '  title: Service A (renamed in the UI)\n');
    await remote.push({ '.cortex/catalog/b.yaml': SERVICE_B.replace('Service B', 'Service B v2') }, 'rename b');
    const next = bareGit('rev-parse', 'main');

    watch = await watchRemote();
    const run = await watch.waitForRun((r) => r.revision === next && r.result === 'applied');
    expect(run.trigger).toBe('startup');
    expect(entityTitle(emulator, 'svc-b')).toBe('Service B v2');
    // Not known to be drift: git's value is applied, as before the lease record was read.
    expect(entityTitle(emulator, 'svc-a')).toBe('Service A');
    const said = watch.logs().find((l) => String(l.msg).startsWith('first run since start applies every change'));
    expect(String(said?.msg)).toContain("the last clean apply the source's lease record remembers is not this commit");
    expect(github.pulls).toEqual([]);
  });

  it('restarted at the same commit with other plan settings, applies and says why', async () => {
    const first = await startDriftWatch();
    expect(await first.stop()).toBe(0);
    watch = undefined;
    await editInUi('svc-a', '  title: Service A (renamed in the UI)\n');

    watch = await watchRemote({ CORTEX_SYNC_PROTECT: 'entity/svc-z' });
    const run = await watch.waitForRun((r) => r.trigger === 'startup');
    expect(run.result).toBe('applied');
    expect(entityTitle(emulator, 'svc-a')).toBe('Service A');
    const said = watch.logs().find((l) => String(l.msg).startsWith('first run since start applies every change'));
    expect(String(said?.msg)).toContain('another version of cortex-sync or with other settings');
  });

  it('a merged pull request leaves nothing to apply', async () => {
    const running = await startDriftWatch();
    await editInUi('svc-b', '  title: Service B, fixed at 3 a.m.\n');
    const pull: FakePull = await until('a pull request', () => github.pulls[0]);
    const head = bareGit('rev-parse', BRANCH);
    // The merge: main moves to the proposal's commit (a fast-forward), GitHub says merged.
    bareGit('update-ref', 'refs/heads/main', head);
    pull.state = 'closed';
    pull.merged = true;
    const run = await running.waitForRun((r) => r.revision === head);
    expect(run.result).toBe('applied');
    expect(run.summary?.update ?? 0).toBe(0);
    expect(run.writes ?? 0).toBe(0);
    expect(entityTitle(emulator, 'svc-b')).toBe('Service B, fixed at 3 a.m.');
  });

  it('a source that is not a git repository reports the drift instead, saying why, and heals nothing', async () => {
    const manifests = join(root, 'manifests');
    await writeFiles(manifests, {
      'cortex-sync.yaml': 'sourceId: acme-catalog\nonDrift: pr\n',
      '.cortex/catalog/b.yaml': SERVICE_B,
    });
    watch = await startWatch({ dir: manifests, healInterval: 300 }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied' && r.summary?.create === 1);
    await editInUi('svc-b', '  title: Service B, fixed at 3 a.m.\n');
    const held = await watch.waitForRun((r) => r.reason === 'drift-held');
    expect(held.result).toBe('deferred');
    const line = watch.logs().find((l) => String(l.msg).startsWith('drift: 1 object(s) changed outside git'));
    expect(String(line?.msg)).toContain('reported only: the source is not a git repository');
    expect(entityTitle(emulator, 'svc-b')).toBe('Service B, fixed at 3 a.m.');
    expect(github.pulls).toEqual([]);
  });
});
