import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { MAX_REQUEST_BODY_BYTES } from '../../src/api/errors.js';
import type { ApiClient } from '../../src/api/types.js';
import type { ObjectKey } from '../../src/core/model.js';
import {
  INVENTORY_ENTITY_TYPE,
  indexInventories,
  inventoryDescriptor,
  inventoryTag,
  readInventories,
  writeInventory,
} from '../../src/kinds/entity/records/inventory.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';

/** Cortex tags: lowercase letters, digits and dashes, not starting or ending with a dash. */
const VALID_TAG = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** An inventory descriptor as the API returns it (JSON form). */
const inventoryRecord = (source: string, objects: Record<string, string[]>): unknown => ({
  openapi: '3.0.1',
  info: {
    title: `cortex-sync inventory: ${source}`,
    'x-cortex-tag': inventoryTag(source),
    'x-cortex-type': INVENTORY_ENTITY_TYPE,
    'x-cortex-definition': { source, objects },
  },
});

describe('inventoryTag', () => {
  const sources = [
    'github.com/acme/catalog',
    'github.com/acme/Catalog',
    'github.com/acme/catalog-',
    'platform repo (prod)',
    `github.com/${'very-long-organisation-name/'.repeat(5)}catalog`,
    '---',
    'ünïcödé/repo',
  ];

  it('is the same for the same source id every time', () => {
    expect(inventoryTag('github.com/acme/catalog')).toBe(inventoryTag('github.com/acme/catalog'));
  });

  it('is a valid Cortex tag, of bounded length, whatever the source id', () => {
    for (const source of sources) {
      const tag = inventoryTag(source);
      expect(tag, source).toMatch(VALID_TAG);
      expect(tag.startsWith(`${INVENTORY_ENTITY_TYPE}-`), source).toBe(true);
      expect(tag.length, source).toBeLessThanOrEqual(80);
    }
  });

  it('differs for source ids that read alike (case, punctuation, a shared long prefix)', () => {
    const longPrefix = 'github.com/acme/'.padEnd(60, 'x');
    const alike = [...sources, 'github.com.acme.catalog', `${longPrefix}/one`, `${longPrefix}/two`];
    const tags = alike.map(inventoryTag);
    expect(new Set(tags).size).toBe(alike.length);
  });
});

describe('indexInventories', () => {
  it('maps every listed object to the source whose inventory lists it', () => {
    const index = indexInventories(
      [
        inventoryRecord('repo-a', { 'entity-type': ['database'], 'catalog-page': ['home'] }),
        inventoryRecord('repo-b', { dependency: ['payments:ledger:GET:/x'] }),
      ],
      'repo-a',
    );
    expect(index.ownerOf.get('entity-type/database')).toBe('repo-a');
    expect(index.ownerOf.get('catalog-page/home')).toBe('repo-a');
    expect(index.ownerOf.get('dependency/payments:ledger:GET:/x')).toBe('repo-b');
    expect([...(index.bySource.get('repo-a') ?? [])].sort()).toEqual(['catalog-page/home', 'entity-type/database']);
    expect(index.conflicts).toEqual([]);
  });

  it('reports an object claimed by two sources, and gives it to the own source', () => {
    const records = [
      inventoryRecord('repo-b', { 'catalog-page': ['home'] }),
      inventoryRecord('repo-a', { 'catalog-page': ['home', 'other'] }),
    ];
    const asA = indexInventories(records, 'repo-a');
    expect(asA.ownerOf.get('catalog-page/home')).toBe('repo-a');
    expect(asA.conflicts).toEqual([{ key: 'catalog-page/home', sources: ['repo-b', 'repo-a'] }]);
    const asThird = indexInventories(records, 'repo-c');
    expect(asThird.ownerOf.get('catalog-page/home')).toBe('repo-b');
    expect(asThird.ownerOf.get('catalog-page/other')).toBe('repo-a');
  });

  it('lists every claimant of an object in record order, the own source winning wherever it is among them', () => {
    const records = [
      inventoryRecord('repo-c', { 'catalog-page': ['home', 'third'] }),
      inventoryRecord('repo-b', { 'catalog-page': ['home', 'third'] }),
      inventoryRecord('repo-a', { 'catalog-page': ['home', 'other'] }),
    ];
    const asA = indexInventories(records, 'repo-a');
    expect(asA.conflicts).toEqual([
      { key: 'catalog-page/home', sources: ['repo-c', 'repo-b', 'repo-a'] },
      { key: 'catalog-page/third', sources: ['repo-c', 'repo-b'] },
    ]);
    expect(asA.ownerOf.get('catalog-page/home')).toBe('repo-a');
    expect(asA.ownerOf.get('catalog-page/third')).toBe('repo-c');
    expect(indexInventories(records, 'repo-b').ownerOf.get('catalog-page/home')).toBe('repo-b');
    expect(indexInventories(records, 'repo-d').ownerOf.get('catalog-page/home')).toBe('repo-c');
    expect([...asA.ownerOf.keys()]).toEqual(['catalog-page/home', 'catalog-page/third', 'catalog-page/other']);
  });

  it('ignores malformed records and unknown kinds instead of failing', () => {
    const index = indexInventories(
      [
        null,
        'text',
        { info: {} },
        { info: { 'x-cortex-definition': { objects: { 'catalog-page': ['no-source'] } } } },
        { info: { 'x-cortex-definition': { source: 42 } } },
        inventoryRecord('repo-a', { 'catalog-page': ['home'], widget: ['not-a-kind'] }),
      ],
      'repo-a',
    );
    expect([...index.ownerOf.keys()]).toEqual(['catalog-page/home']);
    expect([...index.bySource.keys()]).toEqual(['repo-a']);
  });

  it('a record without objects means the source manages nothing', () => {
    const index = indexInventories(
      [{ info: { 'x-cortex-tag': inventoryTag('repo-a'), 'x-cortex-definition': { source: 'repo-a' } } }],
      'repo-a',
    );
    expect(index.bySource.get('repo-a')?.size).toBe(0);
  });

  it("trusts only the record at a source's exact tag: a hand-made one claiming that source elsewhere is ignored", () => {
    const forged = {
      info: {
        'x-cortex-tag': 'totally-legit-inventory',
        'x-cortex-type': INVENTORY_ENTITY_TYPE,
        'x-cortex-definition': { source: 'repo-a', objects: { 'catalog-page': ['foreign'], initiative: ['theirs'] } },
      },
    };
    const index = indexInventories([forged, inventoryRecord('repo-a', { 'catalog-page': ['home'] })], 'repo-a');
    expect(index.bySource.get('repo-a')).toEqual(new Set(['catalog-page/home']));
    expect(index.ownerOf.has('catalog-page/foreign')).toBe(false);
    expect(index.ignored).toEqual([{ tag: 'totally-legit-inventory', source: 'repo-a' }]);
  });
});

describe('inventory size', () => {
  it('an inventory of 10,000 entities (and the other kinds) stays well under the API 2 MB body limit', () => {
    const keys = new Set<ObjectKey>();
    // Long but realistic tags (about 45 characters), plus a few hundred of every other kind.
    for (let i = 0; i < 10_000; i++) keys.add(`entity/payments-platform-service-backend-${String(i).padStart(5, '0')}`);
    for (let i = 0; i < 1_000; i++)
      keys.add(`dependency/caller-service-${i}:callee-service-${i}:GET:/api/v1/items/{id}`);
    for (let i = 0; i < 300; i++) keys.add(`catalog-page/page-${i}`);
    const bytes = Buffer.byteLength(inventoryDescriptor('github.com/acme/catalog//teams/platform', keys), 'utf8');
    console.log(`inventory record of ${keys.size} objects: ${bytes} bytes`);
    expect(bytes).toBeLessThan(MAX_REQUEST_BODY_BYTES / 2);
  });
});

describe('inventory round trip through the emulator', () => {
  const apiKey = 'inventory-test-key-0123456789';
  let emulator: RunningEmulator;
  let client: ApiClient;
  beforeAll(async () => {
    emulator = await startEmulator({ apiKey, rateLimitPerMinute: 0 });
    client = createApiClient({ baseUrl: emulator.url, apiKey, maxAttempts: 1 });
  });
  afterAll(() => emulator.stop());

  it('creates the inventory type when missing, writes the inventory and reads it back', async () => {
    const keys = new Set<ObjectKey>(['entity-type/database', 'catalog-page/home', 'dependency/a:b:GET:/x']);
    const before = emulator.requests.length;
    await writeInventory(client, 'github.com/acme/catalog', keys, false);
    const writes = emulator.requests.slice(before).map((r) => `${r.method} ${r.path} ${r.status}`);
    // The type is looked for first (the apply lease, or another apply, may have made it since the run read).
    expect(writes).toEqual([
      expect.stringMatching(/^GET \/api\/v1\/catalog\/definitions\/cortex-sync-inventory 404$/),
      expect.stringMatching(/^POST \/api\/v1\/catalog\/definitions 2\d\d$/),
      expect.stringMatching(/^POST \/api\/v1\/open-api 2\d\d$/),
    ]);
    // Made meanwhile: written without trying to create it again.
    const again = emulator.requests.length;
    await writeInventory(client, 'github.com/acme/catalog', keys, false);
    expect(emulator.requests.slice(again).map((r) => `${r.method} ${r.status}`)).toEqual(['GET 200', 'POST 200']);

    const index = await readInventories(client, 'github.com/acme/catalog');
    expect(index.bySource.get('github.com/acme/catalog')).toEqual(keys);
    expect(index.ownerOf.get('catalog-page/home')).toBe('github.com/acme/catalog');
  });

  it('rewrites the same inventory in place and keeps other sources apart', async () => {
    await writeInventory(client, 'github.com/acme/catalog', new Set(['catalog-page/home']), true);
    await writeInventory(client, 'github.com/acme/other', new Set(['initiative/q3-goals']), true);
    const index = await readInventories(client, 'github.com/acme/catalog');
    expect(index.bySource.get('github.com/acme/catalog')).toEqual(new Set(['catalog-page/home']));
    expect(index.bySource.get('github.com/acme/other')).toEqual(new Set(['initiative/q3-goals']));
    expect(index.conflicts).toEqual([]);
  });

  it('an empty inventory is written and read back as managing nothing', async () => {
    await writeInventory(client, 'github.com/acme/catalog', new Set(), true);
    const index = await readInventories(client, 'github.com/acme/catalog');
    expect(index.bySource.get('github.com/acme/catalog')?.size).toBe(0);
    expect(index.ownerOf.has('catalog-page/home')).toBe(false);
  });
});
