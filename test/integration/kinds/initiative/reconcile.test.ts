import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../../../packages/emulator/src/server.js';
import type { SyncConfig } from '../../../../src/engine/config.js';
import { createEngineContext } from '../../../../src/engine/context.js';
import { reconcile } from '../../../../src/engine/reconcile.js';
import { testClient } from '../../../kinds/initiative/harness.js';

let emulator: RunningEmulator;
let dir: string;

beforeEach(async () => {
  emulator = await startEmulator({ rateLimitPerMinute: 0 });
  dir = await mkdtemp(join(tmpdir(), 'cortex-sync-kinds-'));
  await mkdir(join(dir, '.cortex/initiatives'), { recursive: true });
  await mkdir(join(dir, '.cortex/scaffolders'), { recursive: true });
  await writeFile(
    join(dir, '.cortex/initiatives/q.yaml'),
    'name: Q\nscorecardTag: production-readiness\ntargetDate: "2099-12-31"\nisDraft: true\nemphasizedLevels: [{rank: 1}]\n---\nname: R\nscorecardTag: production-readiness\ntargetDate: "2099-12-31"\nisDraft: false\nemphasizedRules: [{expression: git != null}]\n',
  );
  await writeFile(
    join(dir, '.cortex/scaffolders/py.yaml'),
    'tag: py\nname: Py\ntype: COOKIECUTTER\nrepoLocator: {type: GITHUB, org: acme, repoName: py}\n',
  );
});
afterEach(async () => {
  await emulator.stop();
  await rm(dir, { recursive: true, force: true });
});

const config = (): SyncConfig => ({
  dir,
  sourceId: 'kinds-test',
  baseUrl: emulator.url,
  apiKey: emulator.apiKey,
  prune: true,
  pruneEntities: 'archive',
  allowMassDelete: true,
  allowTakeover: false,
  maxDeleteShare: 1,
  protect: [],
  concurrency: 4,
  requestsPerMinute: 100000,
  forceEntityTypeSchema: false,
});

it('through reconcile: a draft and a live Initiative and a template apply, then plan as noops, and prune deletes a removed Initiative', async () => {
  const client = testClient(emulator.url, emulator.apiKey);
  const first = await reconcile({ config: config(), mode: 'apply' }, createEngineContext(client));
  expect(first.status).toBe('applied');
  if (first.status !== 'applied') return;
  expect(first.plan.summary).toMatchObject({ create: 3 });
  expect(first.report.results.every((r) => r.outcome === 'ok')).toBe(true);

  const second = await reconcile({ config: config(), mode: 'plan' }, createEngineContext(client));
  expect(second.status).toBe('planned');
  if (second.status !== 'planned') return;
  expect(second.plan.summary).toMatchObject({ create: 0, update: 0, delete: 0, noop: 3 });

  await writeFile(
    join(dir, '.cortex/initiatives/q.yaml'),
    'name: Q\nscorecardTag: production-readiness\ntargetDate: "2099-12-31"\nisDraft: true\nemphasizedLevels: [{rank: 1}]\n',
  );
  const third = await reconcile({ config: config(), mode: 'apply' }, createEngineContext(client));
  expect(third.status).toBe('applied');
  if (third.status !== 'applied') return;
  expect(third.plan.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.kind}/${c.id}`)).toEqual([
    'delete initiative/R',
  ]);
  expect(emulator.state.initiatives.items.map((i) => i.name)).toEqual(['Q']);
  expect(emulator.state.scaffolders.items.map((t) => t.tag)).toEqual(['py']);
  expect(emulator.requests.some((r) => r.method === 'PUT' && r.path.startsWith('/api/v1/scaffolders'))).toBe(false);
});
