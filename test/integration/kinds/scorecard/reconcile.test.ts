/**
 * Scorecards through `reconcile` against the emulator: created before the Initiatives that name
 * them and removed after them, planned as field diffs and as noops after the emulator rewrites
 * what it stores, retried while an evaluation refuses writes, and held to the same ownership,
 * protection and permission rules as every kind.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../../src/api/client.js';
import type { ApiClient, RequestEvent } from '../../../../src/api/types.js';
import type { ReconcileResult } from '../../../../src/core/model.js';
import { type RunningEmulator, startEmulator } from '../../../../packages/emulator/src/server.js';
import type { SyncConfig } from '../../../../src/engine/config.js';
import { createEngineContext } from '../../../../src/engine/context.js';
import { reconcile } from '../../../../src/engine/reconcile.js';
import { testClient } from '../../../kinds/initiative/harness.js';

const SCORECARD = `tag: release-readiness
name: Release readiness
description: What a service needs before a release
filter:
  types:
    include: [service]
ladder:
  levels:
    - name: Ready
      rank: 1
    - name: Started
      rank: 2
rules:
  - title: Has a runbook
    expression: links("runbook").length > 0
    level: Ready
  - expression: git != null
    level: Started
`;

const INITIATIVE = `name: Releases ready
scorecardTag: release-readiness
targetDate: "2099-12-31"
isDraft: false
emphasizedLevels: [{rank: 1}]
emphasizedRules: [{expression: links("runbook").length > 0}]
`;

let emulator: RunningEmulator;
let dir: string;

beforeEach(async () => {
  emulator = await startEmulator({ rateLimitPerMinute: 0 });
  dir = await mkdtemp(join(tmpdir(), 'cortex-sync-scorecards-'));
  await mkdir(join(dir, '.cortex/scorecards'), { recursive: true });
  await mkdir(join(dir, '.cortex/initiatives'), { recursive: true });
  await writeFile(join(dir, '.cortex/scorecards/release.yaml'), SCORECARD);
  await writeFile(join(dir, '.cortex/initiatives/releases.yaml'), INITIATIVE);
});
afterEach(async () => {
  await emulator.stop();
  await rm(dir, { recursive: true, force: true });
});

const config = (extra: Partial<SyncConfig> = {}): SyncConfig => ({
  dir,
  sourceId: 'scorecards-test',
  baseUrl: emulator.url,
  apiKey: emulator.apiKey,
  prune: false,
  pruneEntities: 'archive',
  allowMassDelete: true,
  allowTakeover: false,
  maxDeleteShare: 1,
  protect: [],
  concurrency: 8,
  requestsPerMinute: 100000,
  forceEntityTypeSchema: false,
  ...extra,
});

const run = (mode: 'plan' | 'apply', extra: Partial<SyncConfig> = {}, client: ApiClient = fresh()) =>
  reconcile({ config: config(extra), mode }, createEngineContext(client));
const fresh = (): ApiClient => testClient(emulator.url, emulator.apiKey);

const writesOf = (emu: RunningEmulator, since = 0): string[] =>
  emu.requests
    .slice(since)
    .filter(
      (r) => r.method !== 'GET' && !r.path.startsWith('/api/v1/open-api') && r.path !== '/api/v1/catalog/definitions',
    )
    .map((r) => `${r.method} ${r.path} ${r.status}`);

const actions = (result: ReconcileResult): string[] =>
  'plan' in result
    ? result.plan.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.kind}/${c.id}`)
    : [];

const errorsOf = (result: ReconcileResult) => result.diagnostics.filter((d) => d.severity === 'error');

/** Starts an evaluation of the test's scorecard that refuses its next `failWrites` writes (emulator control). */
const evaluate = async (failWrites: number, status = 500): Promise<void> => {
  const res = await fetch(`${emulator.url}/_emulator/scorecard-evaluations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tag: 'release-readiness', failWrites, status }),
  });
  expect(res.status).toBe(200);
};

/** A manifest of another kind, so a prune of every scorecard and Initiative is not a prune of an empty repository. */
const keepOneManifest = async (): Promise<void> => {
  await mkdir(join(dir, '.cortex/scaffolders'), { recursive: true });
  await writeFile(
    join(dir, '.cortex/scaffolders/keep.yaml'),
    'tag: keep\nname: Keep\ntype: COOKIECUTTER\nrepoLocator: {type: GITHUB, org: acme, repoName: keep}\n',
  );
};

describe('scorecards through reconcile', () => {
  it('creates a scorecard before the Initiative naming it in one apply, plans noops after, and prunes the Initiative first', async () => {
    // The scorecard's first write is refused and retried 300 ms later: an Initiative that did not
    // wait for it would reach Cortex first, and be refused for a scorecard that does not exist.
    await evaluate(1);
    const slow = createApiClient({
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      // Backoffs (125 ms and more with this `random`) last 300 ms; the rate limiter's short waits none.
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms >= 100 ? 300 : 0)),
      random: () => 0.5,
    });
    const applied = await run('apply', {}, slow);
    await slow.close();
    expect(errorsOf(applied)).toEqual([]);
    expect(applied.status).toBe('applied');
    if (applied.status !== 'applied') return;
    expect(actions(applied)).toEqual(['create scorecard/release-readiness', 'create initiative/Releases ready']);
    expect(applied.plan.changes.find((c) => c.kind === 'initiative')?.waitsFor).toEqual([
      'scorecard/release-readiness',
    ]);
    expect(applied.report.results.every((r) => r.outcome === 'ok')).toBe(true);
    // The Initiative names a level and a rule only this scorecard has: the scorecard was written first.
    const writes = writesOf(emulator);
    expect(writes.filter((w) => w.includes('scorecards'))).toEqual([
      'POST /api/v1/scorecards/descriptor 500',
      'POST /api/v1/scorecards/descriptor 200',
    ]);
    const card = writes.indexOf('POST /api/v1/scorecards/descriptor 200');
    const initiative = writes.indexOf('POST /api/v1/initiatives 200');
    expect(card).toBeGreaterThanOrEqual(0);
    expect(initiative).toBeGreaterThan(card);

    // The emulator filled in the draft flag, the ladder's name, level colours, rule weights and the
    // settings, and answers its own key order: nothing to do.
    const stored = await fresh().request<string>({
      operation: 'read',
      method: 'GET',
      path: '/api/v1/scorecards/release-readiness/descriptor',
    });
    expect(stored.body).toContain('Default Ladder');
    expect(stored.body).toContain('weight: 1');
    const second = await run('plan');
    expect(second.status).toBe('planned');
    expect(actions(second)).toEqual([]);

    // Both manifests removed: one prune removes both, the Initiative before its scorecard.
    await keepOneManifest();
    await rm(join(dir, '.cortex/scorecards/release.yaml'));
    await rm(join(dir, '.cortex/initiatives/releases.yaml'));
    const before = emulator.requests.length;
    const pruned = await run('apply', { prune: true });
    expect(errorsOf(pruned)).toEqual([]);
    expect(actions(pruned)).toEqual([
      'create scaffolder-template/keep',
      'delete initiative/Releases ready',
      'delete scorecard/release-readiness',
    ]);
    const deletes = writesOf(emulator, before).filter((w) => w.startsWith('DELETE'));
    expect(deletes).toEqual([
      expect.stringMatching(/^DELETE \/api\/v1\/initiatives\/in[0-9a-f]+ 200$/),
      'DELETE /api/v1/scorecards/release-readiness 200',
    ]);
    expect(emulator.state.scorecards.items.map((s) => s.tag)).not.toContain('release-readiness');
  });

  it('plans a change as field diffs keyed by rule and level, applies it, and then plans noops', async () => {
    await run('apply');
    await writeFile(
      join(dir, '.cortex/scorecards/release.yaml'),
      SCORECARD.replace('    - name: Started\n', '    - name: Begun\n')
        .replace('    level: Started\n', '    level: Begun\n    weight: 3\n')
        .replace('description: What a service needs before a release', 'description: Before any release'),
    );
    const plan = await run('plan');
    expect(errorsOf(plan)).toEqual([]);
    const change = 'plan' in plan ? plan.plan.changes.find((c) => c.kind === 'scorecard') : undefined;
    expect(change?.action).toBe('update');
    expect(change?.diff).toEqual([
      { path: 'description', before: 'What a service needs before a release', after: 'Before any release' },
      { path: 'ladder.levels.2.name', before: 'Started', after: 'Begun' },
      { path: 'rules["git != null"].level', before: 'Started', after: 'Begun' },
      // The weight the manifest now states is compared; the server had filled in 1.
      { path: 'rules["git != null"].weight', before: 1, after: 3 },
    ]);
    const applied = await run('apply');
    expect(applied.status).toBe('applied');
    expect(actions(await run('plan'))).toEqual([]);
  });

  it('a draft scorecard stays a draft and plans noops', async () => {
    await writeFile(
      join(dir, '.cortex/scorecards/release.yaml'),
      SCORECARD.replace('name: Release readiness\n', 'name: Release readiness\ndraft: true\n'),
    );
    expect((await run('apply')).status).toBe('applied');
    expect(emulator.state.scorecards.items.find((s) => s.tag === 'release-readiness')?.isDraft).toBe(true);
    expect(actions(await run('plan'))).toEqual([]);
  });
});

describe('scorecard writes while an evaluation is in progress', () => {
  const events: RequestEvent[] = [];
  const sleeps: number[] = [];
  const watched = (): ApiClient =>
    createApiClient({
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
      onRequest: (e) => events.push(e),
    });
  beforeEach(() => {
    events.length = 0;
    sleeps.length = 0;
  });

  it('are retried with growing backoff until the evaluation lets them through', async () => {
    await evaluate(2);
    const applied = await run('apply', {}, watched());
    expect(errorsOf(applied)).toEqual([]);
    expect(applied.status === 'applied' && applied.report.results.every((r) => r.outcome === 'ok')).toBe(true);
    const posts = emulator.requests.filter((r) => r.path === '/api/v1/scorecards/descriptor');
    expect(posts.map((r) => r.status)).toEqual([500, 500, 200]);
    const retried = events.filter((e) => e.operation === 'upsert scorecard release-readiness' && e.status === 500);
    expect(retried.map((e) => e.retryInMs)).toEqual([125, 250]);
    expect(emulator.state.scorecards.items.some((s) => s.tag === 'release-readiness')).toBe(true);
  });

  it('fail after a bounded number of attempts, naming the operation, the status and the API message', async () => {
    await evaluate(1000, 503);
    const applied = await run('apply', {}, watched());
    expect(applied.status).toBe('applied');
    if (applied.status !== 'applied') return;
    const failed = applied.report.results.find((r) => r.change.kind === 'scorecard');
    expect(failed?.outcome).toBe('failed');
    expect(failed?.error).toMatch(
      /upsert scorecard release-readiness failed: POST \/api\/v1\/scorecards\/descriptor → HTTP 503: Scorecard 'release-readiness' is being evaluated/,
    );
    expect(failed?.error).not.toContain(emulator.apiKey);
    expect(emulator.requests.filter((r) => r.path === '/api/v1/scorecards/descriptor')).toHaveLength(5);
    // The Initiative that waits for it is not sent.
    const initiative = applied.report.results.find((r) => r.change.kind === 'initiative');
    expect(initiative?.outcome).toBe('skipped');
    expect(emulator.requests.some((r) => r.method === 'POST' && r.path === '/api/v1/initiatives')).toBe(false);
  });

  it('another kind whose write is not idempotent is not retried after a 5xx', async () => {
    emulator.setFaults({ reject: [{ method: 'POST', path: '/api/v1/initiatives', status: 500, message: 'boom' }] });
    const applied = await run('apply', {}, watched());
    expect(applied.status).toBe('applied');
    expect(emulator.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/initiatives')).toHaveLength(1);
  });
});

describe('scorecards and ownership', () => {
  it('a scorecard another source manages is refused as an ownership conflict, and nothing is written', async () => {
    expect((await run('apply', { sourceId: 'other-repo' })).status).toBe('applied');
    await writeFile(
      join(dir, '.cortex/scorecards/release.yaml'),
      SCORECARD.replace('Release readiness\n', 'Mine now\n'),
    );
    const before = emulator.requests.length;
    const plan = await run('apply');
    expect(plan.status).toBe('refused');
    expect(plan.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'ownership-conflict', kind: 'scorecard', id: 'release-readiness' }),
    );
    expect(writesOf(emulator, before).filter((w) => w.includes('scorecards'))).toEqual([]);
  });

  it('prune keeps a scorecard `protect` names, and removes the Initiative', async () => {
    await run('apply');
    await keepOneManifest();
    await rm(join(dir, '.cortex/scorecards/release.yaml'));
    await rm(join(dir, '.cortex/initiatives/releases.yaml'));
    const pruned = await run('apply', { prune: true, protect: ['scorecard/*'] });
    expect(errorsOf(pruned)).toEqual([]);
    expect(actions(pruned)).toEqual(['create scaffolder-template/keep', 'delete initiative/Releases ready']);
    expect(emulator.state.scorecards.items.some((s) => s.tag === 'release-readiness')).toBe(true);
  });

  it('a key that may not list scorecards: a warning when the repository declares none, a failure when it does', async () => {
    emulator.setFaults({
      reject: [{ method: 'GET', path: '/api/v1/scorecards', status: 403, message: 'not allowed' }],
    });
    // The Initiative names a workspace scorecard: not judged, and said so.
    await rm(join(dir, '.cortex/scorecards/release.yaml'));
    await writeFile(
      join(dir, '.cortex/initiatives/releases.yaml'),
      INITIATIVE.replace('release-readiness', 'somewhere-else'),
    );
    const plan = await run('plan');
    expect(plan.status).toBe('planned');
    expect(plan.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'scorecards-unreadable', severity: 'warning' }),
    );
    expect(errorsOf(plan)).toEqual([]);

    await writeFile(join(dir, '.cortex/scorecards/release.yaml'), SCORECARD);
    await expect(run('plan')).rejects.toThrow(
      /list scorecards failed: GET \/api\/v1\/scorecards\?.* → HTTP 403: not allowed/,
    );
  });
});
