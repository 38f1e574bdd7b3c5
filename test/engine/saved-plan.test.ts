/**
 * A saved plan's judgement under the apply lease (issue 31): an edit that lands after `apply FILE`
 * read the workspace (and found the plan current) but before its lease is caught under the lease
 * — the objects the plan writes are read again by identity, found changed, the workspace read
 * again, and the plan made then is not the saved one — so nothing of the plan is written and the
 * error names the object. Without such an edit the saved plan is applied through the same path.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClient } from '../../src/api/types.js';
import type { SavedPlan } from '../../src/core/saved-plan.js';
import { createEngineContext } from '../../src/engine/context.js';
import { type LeaseKeeper, releaseEachRun } from '../../src/engine/lease-keeper.js';
import type { PlannedPass } from '../../src/engine/stages/run.js';
import { reconcile } from '../../src/engine/reconcile.js';
import { savedPlanJudge, savedPlanOf, savedPlanPrecheck, StalePlanError } from '../../src/engine/saved-plan.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { removeDir, syncConfig, tempDir, writeFiles } from './helpers.js';

const API_KEY = 'saved-plan-test-key-0123456789';

const page = (slug: string, name = slug): string =>
  `slug: ${slug}\nname: ${name}\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`;

let emulator: RunningEmulator;
let client: ApiClient;
let dir: string;
let source: string;
let n = 0;
beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
});
afterAll(async () => {
  await client.close();
  await emulator.stop();
});
beforeEach(async () => {
  dir = await tempDir();
  n += 1;
  source = `github.com/acme/saved-${n}`;
});
afterEach(() => removeDir(dir));

const config = () => syncConfig({ dir, sourceId: source, baseUrl: emulator.url });
const ctx = () => createEngineContext(client);

const save = async (): Promise<SavedPlan> => {
  let kept: PlannedPass | undefined;
  await reconcile({ config: config(), mode: 'plan', onPlanned: (p) => void (kept = p) }, ctx());
  if (kept === undefined) throw new Error('no plan');
  return savedPlanOf(kept, config(), { now: Date.now(), version: 'test', cwd: dir });
};

const applySaved = (saved: SavedPlan, leases?: LeaseKeeper) => {
  const judge = savedPlanJudge(saved, 'p.json');
  const c = config();
  return reconcile(
    {
      config: c,
      mode: 'apply',
      precheck: savedPlanPrecheck(saved, 'p.json', c),
      onPlanned: (pass) => judge.firstPass(pass, c),
      approve: async (plan) => {
        judge.beforeWrites(plan);
        return true;
      },
      ...(leases ? { session: { leases } } : {}),
    },
    ctx(),
  );
};

const renameInUi = async (slug: string, name: string): Promise<void> => {
  const get = await fetch(`${emulator.url}/api/v1/catalog-pages/${slug}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  const body = (await get.json()) as Record<string, unknown>;
  // The API's "create or replace".
  const res = await fetch(`${emulator.url}/api/v1/catalog-pages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, name }),
  });
  expect(res.status).toBeLessThan(300);
};
const nameOf = async (slug: string): Promise<unknown> =>
  (
    (await (
      await fetch(`${emulator.url}/api/v1/catalog-pages/${slug}`, { headers: { authorization: `Bearer ${API_KEY}` } })
    ).json()) as { name?: unknown }
  ).name;

// Several processes each: a loaded machine takes a while, never a wrong answer.
describe('apply of a saved plan under the lease', { timeout: 240_000 }, () => {
  beforeEach(async () => {
    await writeFiles(dir, { '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`) });
    expect((await reconcile({ config: config(), mode: 'apply' }, ctx())).run.outcome).toBe('applied');
    await writeFiles(dir, { '.cortex/catalog-pages/alpha.yaml': page(`alpha-${n}`, 'Alpha, renamed') });
  }, 240_000);

  it('an edit between its read and its lease: refused under the lease, nothing of the plan written', async () => {
    const saved = await save();
    const editedMeanwhile: LeaseKeeper = {
      take: async (...args) => {
        await renameInUi(`alpha-${n}`, 'Edited in the UI');
        return releaseEachRun.take(...args);
      },
      done: (lease, clean) => releaseEachRun.done(lease, clean),
    };
    const from = emulator.requests.length;
    const error = await applySaved(saved, editedMeanwhile).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StalePlanError);
    expect((error as Error).message).toContain(`catalog-page/alpha-${n} changed in the workspace since the plan`);
    // The UI's edit (and the lease's own record) only: no write of the plan's.
    const writes = emulator.requests.slice(from).filter((r) => r.method !== 'GET');
    expect(writes.filter((r) => r.path.includes('catalog-pages'))).toHaveLength(1);
    expect(await nameOf(`alpha-${n}`)).toBe('Edited in the UI');
  });

  it('a UI edit before the apply: refused before the lease, reading by identity only what it writes and the records', async () => {
    const saved = await save();
    await renameInUi(`alpha-${n}`, 'Edited in the UI');
    const from = emulator.requests.length;
    const error = await applySaved(saved).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StalePlanError);
    expect((error as Error).message).toContain(`catalog-page/alpha-${n} changed in the workspace since the plan`);
    const sent = emulator.requests.slice(from);
    expect(sent.filter((r) => r.method !== 'GET')).toEqual([]);
    // No list of the kind it writes (the whole workspace's read); its page read by its slug.
    expect(sent.filter((r) => r.path === '/api/v1/catalog-pages')).toEqual([]);
    expect(sent.some((r) => r.path === `/api/v1/catalog-pages/alpha-${n}`)).toBe(true);
  });

  it('no edit: the saved plan is applied', async () => {
    const saved = await save();
    const run = await applySaved(saved);
    expect(run.run.outcome).toBe('applied');
    expect(await nameOf(`alpha-${n}`)).toBe('Alpha, renamed');
  });
});
