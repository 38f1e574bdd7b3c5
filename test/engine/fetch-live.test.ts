import { describe, expect, it } from 'vitest';
import { type ApiClient, type ApiRequest, emptyClientStats } from '../../src/api/types.js';
import { ApiError } from '../../src/core/errors.js';
import type { KindName, LiveObject } from '../../src/core/model.js';
import { fetchLiveState } from '../../src/engine/fetch-live.js';
import { INVENTORY_ENTITY_TYPE, inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import type { AnyKindHandler, AnyReadOnlyKind, FetchContext } from '../../src/kinds/types.js';
import { isApiError } from '../../src/core/errors.js';
import { desired } from '../core/fakes.js';
import { tracedKind, newTrace } from './fakes.js';

const BADGES_PATH = '/api/v1/badges';

/** A client answering list reads: inventories, and badges (a list, or an HTTP error status). */
const listClient = (inventories: unknown[], badges: string[] | number): ApiClient & { paged: string[] } => {
  const paged: string[] = [];
  return {
    paged,
    close: async () => {},
    stats: emptyClientStats,
    request: async <T>(req: ApiRequest) => {
      // The record type, confirmed by its definition when the entity types read did not show it: absent here.
      if (req.path === `/api/v1/catalog/definitions/${INVENTORY_ENTITY_TYPE}`)
        return { status: 404, headers: {}, body: undefined as T, attempts: 1, durationMs: 1 };
      throw new Error('no single requests expected');
    },
    paginate: async <T>(req: ApiRequest): Promise<T[]> => {
      paged.push(req.path);
      if (req.path === '/api/v1/catalog/descriptors') return inventories as T[];
      if (req.path === BADGES_PATH) {
        if (typeof badges === 'number') {
          throw new ApiError('API', {
            operation: 'list badges',
            method: 'GET',
            path: req.path,
            status: badges,
            attempts: 1,
            durationMs: 1,
          });
        }
        return badges.map((tag) => ({ tag })) as T[];
      }
      throw new Error(`unexpected list ${req.path}`);
    },
  };
};

const inventory = (source: string, objects: Record<string, string[]>, tag = inventoryTag(source)) => ({
  info: { 'x-cortex-tag': tag, 'x-cortex-type': INVENTORY_ENTITY_TYPE, 'x-cortex-definition': { source, objects } },
});

/** A kind only read (a test's own): the list of badges; a 403 or 404 is a warning. */
const BADGES: AnyReadOnlyKind = {
  kind: 'badge',
  title: 'badge',
  managed: false,
  readLive: async ({ client }) => {
    try {
      const items = await client.paginate<{ tag: string }>(
        { operation: 'list badges', method: 'GET', path: BADGES_PATH },
        'badges',
      );
      return { live: items.map((b): LiveObject => ({ kind: 'badge', id: b.tag, state: b })) };
    } catch (error) {
      if (isApiError(error) && (error.status === 403 || error.status === 404)) {
        return { unreadable: { severity: 'warning', code: 'badges-unreadable', message: 'badges not read' } };
      }
      throw error;
    }
  },
};

/** A kind whose live objects are `ids` (each claiming `owner` when given) and which keeps what it was asked. */
const liveKind = (
  kind: KindName,
  ids: string[],
  seen: Partial<Record<KindName, FetchContext>>,
  extra: { live?: Partial<AnyKindHandler['live']>; manifest?: Partial<AnyKindHandler['manifest']> } = {},
  owner?: string,
): AnyKindHandler => {
  const base = tracedKind(kind, newTrace());
  return {
    ...base,
    manifest: { ...base.manifest, ...extra.manifest },
    live: {
      ...base.live,
      ...extra.live,
      fetch: async (ctx) => {
        // The first read (a recorded object it did not show is read again: that read is not kept here).
        seen[kind] ??= ctx;
        return ids.map((id): LiveObject => ({ kind, id, state: {}, ...(owner ? { owner } : {}) }));
      },
    },
  };
};

describe('fetchLiveState', () => {
  it('takes owners from the inventories, tells each kind what it manages, and warns about double claims', async () => {
    const seen: Partial<Record<KindName, FetchContext>> = {};
    const handlers = [
      liveKind('entity-type', ['database', INVENTORY_ENTITY_TYPE], seen),
      liveKind('entity', ['payments'], seen, { live: { ownershipOnObject: true } }, 'marker-owner'),
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
    // A recorded object the list did not show is read again before it is taken for gone.
    expect(state.live.some((o) => o.id === 'deleted-live')).toBe(false);
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
    expect(client.paged).not.toContain(BADGES_PATH);
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

  it('reads what other reads use first, without naming a kind, and never hangs on uses that form a cycle', async () => {
    const seen: Partial<Record<KindName, FetchContext>> = {};
    const client = listClient([], []);
    const state = await fetchLiveState({
      client,
      handlers: [
        liveKind('widgets', ['w1'], seen, { live: { uses: ['gadgets'] } }),
        liveKind('gadgets', ['g1'], seen, { live: { uses: ['widgets'] } }),
        liveKind('pages', ['p1'], seen, { live: { uses: ['widgets'] } }),
      ],
      desired: [],
      sourceId: 'repo-a',
    });
    expect(state.live.map((o) => o.id).sort()).toEqual(['g1', 'p1', 'w1']);
    expect(seen['pages']?.readBefore.map((o) => o.id).sort()).toEqual(['g1', 'w1']);
  });

  it('a kind only read is listed when a manifest names it; a 403 is a warning, any other failure stops the plan', async () => {
    // An Initiative that names a badge: the kind only read is read because of it.
    const naming = {
      manifest: { references: () => [{ kind: 'badge', id: 'dora', field: 'badgeTag', path: [], ordering: false }] },
    };
    const handlers = (seen: Partial<Record<KindName, FetchContext>> = {}) => [
      liveKind('entity-type', [], seen),
      liveKind('initiative', [], seen, naming),
    ];
    const read = (badges: string[] | number) =>
      fetchLiveState({
        client: listClient([], badges),
        handlers: handlers(),
        readOnlyKinds: [BADGES],
        desired: [desired('initiative', 'q3', { state: {} })],
        sourceId: 'repo-a',
      });
    expect((await read(['dora', 'security'])).referenced.map((o) => o.id)).toEqual(['dora', 'security']);
    const forbidden = await read(403);
    expect(forbidden.unreadable).toEqual(new Set(['badge']));
    expect(forbidden.diagnostics).toEqual([expect.objectContaining({ code: 'badges-unreadable' })]);
    await expect(read(500)).rejects.toThrow(/HTTP 500/);
    // Nothing names a badge: the list is not read.
    const unnamed = listClient([], ['dora']);
    await fetchLiveState({
      client: unnamed,
      handlers: [liveKind('entity-type', [], {})],
      readOnlyKinds: [BADGES],
      desired: [],
      sourceId: 'repo-a',
    });
    expect(unnamed.paged).not.toContain(BADGES_PATH);
  });

  it('a managed kind whose read says this key may not read it is unreadable, with its warning once', async () => {
    const warning = { severity: 'warning' as const, code: 'pages-unreadable', message: 'no permission' };
    const fetch: AnyKindHandler['live']['fetch'] = async (ctx) => {
      ctx.unreadable?.(warning);
      ctx.unreadable?.(warning);
      return [];
    };
    const page = liveKind('catalog-page', [], {});
    const shy: AnyKindHandler = { ...page, live: { ...page.live, fetch } };
    const state = await fetchLiveState({
      client: listClient([], []),
      handlers: [liveKind('entity-type', ['database'], {}), shy],
      desired: [],
      sourceId: 'repo-a',
    });
    expect(state.unreadable).toEqual(new Set(['catalog-page']));
    expect(state.diagnostics).toEqual([warning]);
    expect(state.live.map((o) => o.id)).toEqual(['database']);
  });
});
