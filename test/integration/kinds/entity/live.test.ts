/**
 * Reading live entities from the emulator over real HTTP: bulk descriptor reads, teams and custom
 * types, archived entities found at the lowest request cost, and ownership from the marker.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { putEntity } from '../../../../packages/emulator/src/resources/entity-store.js';
import { wireDescriptor } from '../../../../src/kinds/entity/apply.js';
import { entityKind } from '../../../../src/kinds/entity/index.js';
import { descriptorFromItem, shouldProbeEach } from '../../../../src/kinds/entity/live.js';
import {
  applyContext,
  createEntityType,
  type DesiredEntity,
  entity,
  fetchContext,
  type Harness,
  type LiveEntity,
  liveById,
  SOURCE_ID,
  startHarness,
  removeChange,
  writeChange,
} from '../../../kinds/entity/helpers.js';

const manifest = (tag: string, extra = ''): string =>
  `openapi: 3.0.1\ninfo:\n  title: ${tag}\n  x-cortex-tag: ${tag}\n${extra}`;

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.stop();
});

const create = async (desired: DesiredEntity): Promise<void> => {
  await entityKind.write.apply(writeChange(desired), applyContext(h.client));
};

const fetchLive = async (desired: DesiredEntity[], types?: string[]): Promise<LiveEntity[]> =>
  entityKind.live.fetch(fetchContext(h.client, desired, types));

const archive = async (tag: string): Promise<void> => {
  await entityKind.write.apply(removeChange(tag, 'archive'), applyContext(h.client));
};

describe('entity fetchLive', () => {
  it('reads 2,000 entities in sync with exactly 2 requests, and every one compares equal', async () => {
    const desired = Array.from({ length: 2000 }, (_, i) =>
      entity(
        manifest(
          `svc-${i}`,
          `  x-cortex-groups: [g-${i % 7}]\n  x-cortex-type: ${i % 10 === 0 ? 'team' : 'service'}\n`,
        ),
      ),
    );
    // Seeded straight into the emulator's store, exactly as apply would write them (2,000 POSTs
    // would only slow the test down; writing is tested elsewhere).
    desired.forEach((d, i) => {
      const env = { now: () => 0, newId: (prefix: string) => `${prefix}${i.toString(16).padStart(16, '0')}` };
      putEntity(h.emulator.state.entities, wireDescriptor(d.spec, { source: SOURCE_ID }), env);
    });
    h.mark();
    const live = await fetchLive(desired);
    const requests = h.requestsSinceMark();
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/catalog/descriptors',
      'GET /api/v1/catalog/descriptors',
    ]);
    expect(requests.every((r) => /(^|&)pageSize=1000(&|$)/.test(r.query) && /types=team/.test(r.query))).toBe(true);
    expect(live).toHaveLength(2000);
    const byId = new Map(live.map((l) => [l.id, l]));
    const notInSync = desired.filter((d) => {
      const l = byId.get(d.id);
      if (!l || l.owner !== SOURCE_ID || l.archived !== undefined) return true;
      return JSON.stringify(entityKind.live.canonical(l)) !== JSON.stringify(entityKind.manifest.canonical(d));
    });
    expect(notInSync.map((d) => d.id)).toEqual([]);
  }, 60_000);

  it('reads teams and custom-type entities back (teams are not listed by default)', async () => {
    await createEntityType(h.client, 'ai-agent');
    const team = entity(manifest('platform-team', '  x-cortex-type: team\n'));
    const agent = entity(manifest('agent-1', '  x-cortex-type: ai-agent\n  x-cortex-definition: {model: claude}\n'));
    await create(team);
    await create(agent);
    const live = await fetchLive([team, agent], ['service', 'domain', 'team', 'ai-agent']);
    expect(live.map((l) => l.id).sort()).toEqual(['agent-1', 'platform-team']);
    expect(entityKind.entityTypeOf?.(liveById(live, 'platform-team') as LiveEntity)).toBe('team');
    expect(entityKind.entityTypeOf?.(liveById(live, 'agent-1') as LiveEntity)).toBe('ai-agent');
    // A type missing from the context (built-in custom types such as s3 are not in the definitions
    // list) is still listed when a desired entity has it.
    h.mark();
    const withoutType = await fetchLive([agent]);
    expect(h.requestsSinceMark()).toHaveLength(1);
    expect(h.requestsSinceMark()[0]?.query).toContain('types=ai-agent');
    expect(entityKind.live.canonical(liveById(withoutType, 'agent-1') as LiveEntity)).toEqual(
      entityKind.manifest.canonical(agent),
    );
  });

  it('finds desired entities archived live, with their id and owner; absent ones stay absent', async () => {
    const desired = [entity(manifest('kept')), entity(manifest('old'))];
    await Promise.all(desired.map(create));
    await archive('old');
    h.mark();
    const live = await fetchLive([...desired, entity(manifest('brand-new'))]);
    // Two entities are missing and a full listing is one page: the listing is cheaper than probing.
    const paths = h.requestsSinceMark().map((r) => `${r.method} ${r.path}`);
    expect(paths).toEqual(['GET /api/v1/catalog/descriptors', 'GET /api/v1/catalog']);
    const old = liveById(live, 'old');
    expect(old).toMatchObject({ archived: true, owner: SOURCE_ID });
    expect(old?.serverId).toMatch(/^en[0-9a-f]{16}$/);
    expect(liveById(live, 'brand-new')).toBeUndefined();
    expect(liveById(live, 'kept')?.archived).toBeUndefined();
  });

  it('probes each missing entity when that is cheaper than the full listing', async () => {
    const desired = [entity(manifest('kept')), entity(manifest('old'))];
    await Promise.all(desired.map(create));
    await archive('old');
    h.mark();
    const live = await fetchLive(desired);
    expect(h.requestsSinceMark().map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/catalog/descriptors',
      'GET /api/v1/catalog/old',
    ]);
    expect(liveById(live, 'old')).toMatchObject({ archived: true, owner: SOURCE_ID });
    expect(liveById(live, 'old')?.serverId).toMatch(/^en/);
  });

  it('reads the descriptor of a desired entity that is live under a type not listed', async () => {
    await createEntityType(h.client, 'ai-agent');
    const agent = entity(manifest('agent-1', '  x-cortex-type: ai-agent\n  x-cortex-definition: {model: claude}\n'));
    await create(agent);
    // The manifest now makes it a service; the live entity is still an ai-agent, a type the context omits.
    const asService = entity(manifest('agent-1'));
    h.mark();
    const live = await fetchLive([asService]);
    expect(h.requestsSinceMark().map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/catalog/descriptors',
      'GET /api/v1/catalog/agent-1',
      'GET /api/v1/catalog/agent-1/openapi',
    ]);
    const found = liveById(live, 'agent-1');
    expect(found).toMatchObject({ owner: SOURCE_ID, serverId: expect.stringMatching(/^en/) });
    expect(found?.archived).toBeUndefined();
    expect(entityKind.entityTypeOf?.(found as LiveEntity)).toBe('ai-agent');
    expect(entityKind.live.canonical(found as LiveEntity)).toEqual(entityKind.manifest.canonical(agent));
  });

  it('uses the full listing when many desired entities are missing', async () => {
    const desired = Array.from({ length: 12 }, (_, i) => entity(manifest(`e-${i}`)));
    await Promise.all(desired.map(create));
    for (const d of desired.slice(0, 6)) await archive(d.id);
    h.mark();
    const live = await fetchLive(desired);
    expect(h.requestsSinceMark().map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/catalog/descriptors',
      'GET /api/v1/catalog',
    ]);
    expect(
      live
        .filter((l) => l.archived)
        .map((l) => l.id)
        .sort(),
    ).toEqual(
      desired
        .slice(0, 6)
        .map((d) => d.id)
        .sort(),
    );
    expect(live.filter((l) => !l.archived)).toHaveLength(6);
  });

  it('sets owner and protected from the marker; entities without one have no owner', async () => {
    const mine = entity(manifest('mine'));
    await create(mine);
    // A user marks the entity protected in the workspace, and someone creates one by hand.
    for (const body of [
      'openapi: 3.0.1\ninfo:\n  x-cortex-tag: mine\n  x-cortex-custom-metadata:\n    cortex-sync: {source: github.com/acme/catalog, protected: true}\n',
      'openapi: 3.0.1\ninfo: {title: Hand made, x-cortex-tag: by-hand}\n',
    ]) {
      await h.client.request({
        operation: 'patch',
        method: 'PATCH',
        path: '/api/v1/open-api',
        body,
        contentType: 'application/openapi;charset=UTF-8',
      });
    }
    const live = await fetchLive([mine]);
    expect(liveById(live, 'mine')).toMatchObject({ owner: SOURCE_ID, protected: true });
    const byHand = liveById(live, 'by-hand');
    expect(byHand).toBeDefined();
    expect(byHand?.owner).toBeUndefined();
    expect(byHand?.protected).toBeUndefined();
  });
});

describe('entity fetchLive helpers', () => {
  it('reads descriptor items given as objects or as YAML text, and skips anything else', () => {
    expect(descriptorFromItem({ info: { 'x-cortex-tag': 'a' } })).toEqual({ info: { 'x-cortex-tag': 'a' } });
    expect(descriptorFromItem('openapi: 3.0.1\ninfo:\n  x-cortex-tag: a\n')).toEqual({
      openapi: '3.0.1',
      info: { 'x-cortex-tag': 'a' },
    });
    expect(descriptorFromItem('- not a descriptor')).toBeUndefined();
    expect(descriptorFromItem('key: [unclosed')).toBeUndefined();
    expect(descriptorFromItem(42)).toBeUndefined();
  });

  it('probes while that costs no more requests than the pages of a full listing', () => {
    expect(shouldProbeEach(1, 10)).toBe(true);
    expect(shouldProbeEach(2, 10)).toBe(false);
    expect(shouldProbeEach(3, 2000)).toBe(true);
    expect(shouldProbeEach(4, 2000)).toBe(false);
  });
});
