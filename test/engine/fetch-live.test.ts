import { describe, expect, it } from 'vitest';
import { type ApiClient, type ApiRequest, emptyClientStats } from '../../src/api/types.js';
import { ApiError } from '../../src/core/errors.js';
import type { KindName, LiveObject } from '../../src/core/model.js';
import { fetchLiveState } from '../../src/engine/fetch-live.js';
import { INVENTORY_ENTITY_TYPE, inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import type { AnyKindHandler, FetchContext } from '../../src/kinds/types.js';
import { READ_ONLY_KINDS } from '../../src/kinds/registry.js';
import { desired } from '../core/fakes.js';
import { tracedKind, newTrace } from './fakes.js';

/** A client answering list reads: inventories, and scorecards (a list, or an HTTP error status). */
const listClient = (inventories: unknown[], scorecards: string[] | number): ApiClient & { paged: string[] } => {
  const paged: string[] = [];
  return {
    paged,
    close: async () => {},
    stats: emptyClientStats,
    request: async () => {
      throw new Error('no single requests expected');
    },
    paginate: async <T>(req: ApiRequest): Promise<T[]> => {
      paged.push(req.path);
      if (req.path === '/api/v1/catalog/descriptors') return inventories as T[];
      if (req.path === '/api/v1/scorecards') {
        if (typeof scorecards === 'number') {
          throw new ApiError('API', {
            operation: 'list scorecards',
            method: 'GET',
            path: req.path,
            status: scorecards,
            attempts: 1,
            durationMs: 1,
          });
        }
        return scorecards.map((tag) => ({ tag })) as T[];
      }
      throw new Error(`unexpected list ${req.path}`);
    },
  };
};

const inventory = (source: string, objects: Record<string, string[]>, tag = inventoryTag(source)) => ({
  info: { 'x-cortex-tag': tag, 'x-cortex-type': INVENTORY_ENTITY_TYPE, 'x-cortex-definition': { source, objects } },
});

/** A kind whose live objects are `ids` (each claiming `owner` when given) and which keeps what it was asked. */
const liveKind = (
  kind: KindName,
  ids: string[],
  seen: Partial<Record<KindName, FetchContext>>,
  extra: Partial<AnyKindHandler> = {},
  owner?: string,
): AnyKindHandler => ({
  ...tracedKind(kind, newTrace()),
  ...extra,
  fetchLive: async (ctx) => {
    seen[kind] = ctx;
    return ids.map((id): LiveObject => ({ kind, id, state: {}, ...(owner ? { owner } : {}) }));
  },
});

describe('fetchLiveState', () => {
  it('takes owners from the inventories, tells each kind what it manages, and warns about double claims', async () => {
    const seen: Partial<Record<KindName, FetchContext>> = {};
    const handlers = [
      liveKind('entity-type', ['database', INVENTORY_ENTITY_TYPE], seen),
      liveKind('entity', ['payments'], seen, { ownershipOnObject: true }, 'marker-owner'),
      liveKind('catalog-page', ['home', 'ui-made', 'shared'], seen, {}, 'stale-owner'),
    ];
    const client = listClient(
      [
        inventory('repo-a', { 'catalog-page': ['home', 'shared', 'deleted-live'], 'entity-type': ['database'] }),
        inventory('repo-b', { 'catalog-page': ['shared'] }),
        inventory('repo-a', { 'catalog-page': ['ui-made'] }, 'hand-made-record'),
      ],
      [],
    );
    const state = await fetchLiveState({ client, handlers, desired: [], sourceId: 'repo-a' });

    const owners = Object.fromEntries(state.live.map((o) => [`${o.kind}/${o.id}`, o.owner]));
    expect(owners).toEqual({
      'entity-type/database': 'repo-a',
      'entity/payments': 'marker-owner',
      'catalog-page/home': 'repo-a',
      'catalog-page/ui-made': undefined,
      'catalog-page/shared': 'repo-a',
    });
    expect(client.paged).toContain('/api/v1/catalog/descriptors');
    expect(seen['catalog-page']?.managedIds).toEqual(['home', 'shared', 'deleted-live']);
    expect(seen['entity']?.readBefore.map((o) => o.id)).toContain('database');
    expect(seen['entity']?.readBefore.map((o) => o.id)).not.toContain(INVENTORY_ENTITY_TYPE);
    expect(state.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        code: 'inventory-ignored',
        message: expect.stringContaining('`hand-made-record` claims to be the inventory of source `repo-a`'),
      }),
      expect.objectContaining({
        severity: 'warning',
        code: 'inventory-conflict',
        message: expect.stringContaining('catalog-page/shared'),
      }),
    ]);
    expect(client.paged).not.toContain('/api/v1/scorecards');
  });

  it('reads no inventories when the inventory type does not exist yet: nothing is owned', async () => {
    const seen: Partial<Record<KindName, FetchContext>> = {};
    const client = listClient([inventory('repo-a', { 'catalog-page': ['home'] })], []);
    const state = await fetchLiveState({
      client,
      handlers: [liveKind('entity-type', ['database'], seen), liveKind('catalog-page', ['home'], seen, {}, 'x')],
      desired: [],
      sourceId: 'repo-a',
    });
    expect(client.paged).toEqual([]);
    expect(state.live.find((o) => o.id === 'home')?.owner).toBeUndefined();
  });

  it('scorecards: listed when needed; a 403 is a warning, any other failure stops the plan', async () => {
    // An Initiative that names a scorecard: the kind only read is read because of it.
    const naming = {
      references: () => [{ kind: 'scorecard', id: 'dora', field: 'scorecardTag', path: [], ordering: false }],
    };
    const handlers = (seen: Partial<Record<KindName, FetchContext>> = {}) => [
      liveKind('entity-type', [], seen),
      liveKind('initiative', [], seen, naming),
    ];
    const read = (scorecards: string[] | number) =>
      fetchLiveState({
        client: listClient([], scorecards),
        handlers: handlers(),
        readOnlyKinds: READ_ONLY_KINDS,
        desired: [desired('initiative', 'q3', { state: {} })],
        sourceId: 'repo-a',
      });
    expect((await read(['dora', 'security'])).referenced.map((o) => o.id)).toEqual(['dora', 'security']);
    const forbidden = await read(403);
    expect(forbidden.unreadable).toEqual(new Set(['scorecard']));
    expect(forbidden.diagnostics).toEqual([expect.objectContaining({ code: 'scorecards-unreadable' })]);
    await expect(read(500)).rejects.toThrow(/HTTP 500/);
  });
});
