import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../../src/api/types.js';
import { ApiError, CortexSyncError } from '../../../../src/core/errors.js';
import { type RunningEmulator, startEmulator } from '../../../../packages/emulator/src/server.js';
import { initiativeKind as kind } from '../../../../src/kinds/initiative/index.js';
import type { KindChange } from '../../../../src/kinds/types.js';
import type { InitiativeManifest, LiveInitiative } from '../../../../src/kinds/initiative/schema.js';
import { applyContext, desiredOf, planAndApply, planOf, testClient } from '../../../kinds/initiative/harness.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');
let clock = T0;
let emulator: RunningEmulator;
let client: ApiClient;

const manifest = (name: string, extra = ''): string =>
  `name: ${name}
scorecardTag: production-readiness
targetDate: "2026-12-31"
isDraft: false
emphasizedLevels: [{rank: 2}, {rank: 1}]
emphasizedRules: [{expression: git != null}]
${extra}`;

const DIR = '.cortex/initiatives';
/** What the emulator really holds (drafts and expired included). */
const storedInitiatives = () => emulator.state.initiatives.items;
const postsToInitiatives = (): number =>
  emulator.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/initiatives').length;

beforeEach(async () => {
  clock = T0;
  emulator = await startEmulator({ now: () => clock, rateLimitPerMinute: 0 });
  client = testClient(emulator.url, emulator.apiKey);
});
afterEach(async () => {
  await emulator.stop();
});

describe('initiative kind against the emulator', () => {
  it('applied twice, even from the same stale create plan, makes exactly one Initiative', async () => {
    const desired = desiredOf(kind, [manifest('Q3 readiness', 'description: first')], DIR);
    const [create] = await planOf(kind, client, desired);
    expect(create?.action).toBe('create');
    await kind.write.apply(create!, applyContext(client));
    await kind.write.apply(create!, applyContext(client));
    expect(storedInitiatives().map((i) => i.name)).toEqual(['Q3 readiness']);
    expect(postsToInitiatives()).toBe(1);

    // A second full apply plans a noop: the enriched live Initiative equals its manifest.
    expect((await planOf(kind, client, desired)).map((c) => c.action)).toEqual(['noop']);
  });

  it('reads the enriched response back as equal to the manifest (levels/rules enrichment, ids, dates ignored)', async () => {
    const desired = desiredOf(kind, [manifest('Q3 readiness', 'filter: {groups: {exclude: [legacy]}}')], DIR);
    expect(await planAndApply(kind, client, desired)).toEqual([]);
    const live = await kind.live.fetch({ client, desired, managedIds: [], readBefore: [] });
    expect(live).toHaveLength(1);
    const [one] = live;
    expect(one?.serverId).toMatch(/^in[0-9a-f]{16}$/);
    expect(one?.state).toMatchObject({ scorecardName: 'Production Readiness' });
    expect((one?.state.emphasizedLevels ?? [])[0]).toHaveProperty('color');
    expect(kind.live.canonical(one!, desired[0])).toEqual(kind.manifest.canonical(desired[0]!));
  });

  it('updates by cid with a full replace: a description removed from the manifest is cleared', async () => {
    await planAndApply(kind, client, desiredOf(kind, [manifest('Q3', 'description: old')], DIR));
    const cid = storedInitiatives()[0]?.cid;
    const next = desiredOf(kind, [manifest('Q3').replace('{rank: 2}, ', '')], DIR);
    const [update] = await planOf(kind, client, next);
    expect(update?.action).toBe('update');
    await kind.write.apply(update!, applyContext(client));
    expect(storedInitiatives()).toEqual([
      expect.objectContaining({ cid, name: 'Q3', emphasizedLevels: [{ rank: 1 }] }),
    ]);
    expect(storedInitiatives()[0]?.description).toBeUndefined();
    expect(emulator.requests.some((r) => r.method === 'PUT' && r.path === `/api/v1/initiatives/${cid}`)).toBe(true);
    expect((await planOf(kind, client, next)).map((c) => c.action)).toEqual(['noop']);
  });

  it('sees drafts and expired Initiatives, so they are never created a second time', async () => {
    const desired = desiredOf(
      kind,
      [manifest('Draft one').replace('isDraft: false', 'isDraft: true'), manifest('Ends soon')],
      DIR,
    );
    expect(await planAndApply(kind, client, desired)).toEqual([]);
    clock = Date.parse('2027-02-01T00:00:00Z'); // both are now past their target date
    expect((await planOf(kind, client, desired)).map((c) => c.action)).toEqual(['noop', 'noop']);
    expect(await planAndApply(kind, client, desired)).toEqual([]);
    expect(storedInitiatives()).toHaveLength(2);
  });

  it('adopting an Initiative that already equals its manifest sends no write, even once it has expired', async () => {
    const desired = desiredOf(kind, [manifest('Adopted')], DIR);
    await planAndApply(kind, client, desired);
    clock = Date.parse('2027-01-15T00:00:00Z');
    const [live] = await kind.live.fetch({ client, desired, managedIds: [], readBefore: [] });
    const adopt: KindChange<InitiativeManifest, LiveInitiative> = {
      kind: 'initiative',
      id: 'Adopted',
      action: 'update',
      adopt: true,
      diff: [],
      waitsFor: [],
      desired: desired[0]!,
      live: live!,
    };
    const writesBefore = emulator.requests.filter((r) => r.method !== 'GET').length;
    await kind.write.apply(adopt, applyContext(client));
    expect(emulator.requests.filter((r) => r.method !== 'GET').length).toBe(writesBefore);
  });

  it('deletes by cid, and a delete of one already gone succeeds', async () => {
    const desired = desiredOf(kind, [manifest('Gone soon')], DIR);
    await planAndApply(kind, client, desired);
    const [live] = await kind.live.fetch({ client, desired: [], managedIds: ['Gone soon'], readBefore: [] });
    const del: KindChange<InitiativeManifest, LiveInitiative> = {
      kind: 'initiative',
      id: 'Gone soon',
      action: 'delete',
      diff: [],
      waitsFor: [],
      live: live!,
    };
    await kind.write.apply(del, applyContext(client));
    await kind.write.apply(del, applyContext(client));
    expect(storedInitiatives()).toEqual([]);
  });

  it('refuses to guess between two live Initiatives with the same name', async () => {
    const body = JSON.parse(JSON.stringify({ ...desiredOf(kind, [manifest('Twin')], DIR)[0]?.spec })) as Record<
      string,
      unknown
    >;
    for (let i = 0; i < 2; i++) {
      await client.request({ operation: 'seed', method: 'POST', path: '/api/v1/initiatives', body });
    }
    const cids = storedInitiatives().map((i) => i.cid);
    const desired = desiredOf(kind, [manifest('Twin')], DIR);
    const error = await kind.live.fetch({ client, desired, managedIds: [], readBefore: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CortexSyncError);
    expect((error as CortexSyncError).code).toBe('PLAN');
    for (const cid of cids) expect((error as Error).message).toContain(cid);
    // The same duplicates are no obstacle for a repository that does not declare or manage that name.
    expect(await kind.live.fetch({ client, desired: [], managedIds: [], readBefore: [] })).toEqual([]);
  });

  it('turns a refusal into a diagnostic located at the field it concerns', async () => {
    const desired = desiredOf(kind, [manifest('Bad rule').replace('git != null', 'git == 42')], DIR);
    const [create] = await planOf(kind, client, desired);
    const error = await kind.write.apply(create!, applyContext(client)).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect(kind.write.explainFailure?.(create!, error as Error)).toEqual([
      expect.objectContaining({ severity: 'error', code: 'api-violation', field: 'emphasizedRules', line: 6 }),
    ]);
    expect(storedInitiatives()).toEqual([]);
  });

  it('a POST whose response is lost is not sent again: the retry finds the Initiative by name', async () => {
    let lost = 0;
    const losing: ApiClient = {
      paginate: (req, key) => client.paginate(req, key),
      close: () => client.close(),
      stats: () => client.stats(),
      async request(req) {
        const res = await client.request(req);
        if (req.method === 'POST' && lost === 0) {
          lost++;
          throw new ApiError('NETWORK', {
            operation: req.operation,
            method: req.method,
            path: req.path,
            attempts: 1,
            durationMs: 0,
          });
        }
        return res as never;
      },
    };
    const desired = desiredOf(kind, [manifest('Lost once')], DIR);
    const [create] = await planOf(kind, client, desired);
    await kind.write.apply(create!, applyContext(losing));
    expect(lost).toBe(1);
    expect(postsToInitiatives()).toBe(1);
    expect(storedInitiatives().map((i) => i.name)).toEqual(['Lost once']);
  });

  it('with 10 % lost responses and 10 % failures over several applies, exactly the declared Initiatives exist', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `Initiative ${i + 1}`);
    const desired = desiredOf(
      kind,
      names.map((n) => manifest(n)),
      DIR,
    );
    emulator.setFaults({ lostResponseRate: 0.1, failRate: 0.1 });
    for (let round = 0; round < 4; round++) {
      await planAndApply(kind, client, desired);
      const stored = storedInitiatives().map((i) => i.name);
      expect(new Set(stored).size).toBe(stored.length); // never a duplicate, even mid-way
    }
    // The faults really hit creates, so the look-up-before-retry path was exercised.
    const faultedPosts = emulator.requests.filter((r) => r.fault && r.method === 'POST');
    expect(faultedPosts.map((r) => r.fault)).toContain('lost-response');
    emulator.setFaults({});
    expect(await planAndApply(kind, client, desired)).toEqual([]);
    expect(
      storedInitiatives()
        .map((i) => i.name)
        .sort(),
    ).toEqual([...names].sort());
    expect((await planOf(kind, client, desired)).every((c) => c.action === 'noop')).toBe(true);
  });
});
