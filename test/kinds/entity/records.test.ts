/**
 * The ownership record as the entity records store keeps it: per object, the file that declared
 * it and, for entities, the keys this source's manifest sets; readable by the previous version's
 * reader, reading the previous version's records, keeping entries of kinds a newer version wrote,
 * and within the API's body limit at scale. Against the emulator on 127.0.0.1.
 */
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiClient } from '../../../src/api/client.js';
import { MAX_REQUEST_BODY_BYTES } from '../../../src/api/errors.js';
import type { ApiClient } from '../../../src/api/types.js';
import type { ObjectKey } from '../../../src/core/model.js';
import type { SyncConfig } from '../../../src/engine/config.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { memoryPlanLog } from '../../../src/engine/plan-log.js';
import { reconcile } from '../../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import {
  DECLARATIONS_BUDGET_BYTES,
  indexInventories,
  inventoryDescriptor,
  inventoryTag,
  readInventories,
  UNREADABLE_ORIGIN,
  writeInventory,
} from '../../../src/kinds/entity/records/inventory.js';
import type { Declaration } from '../../../src/ownership/store.js';
import { removeDir, syncConfig, tempDir, writeFiles } from '../../engine/helpers.js';

/** The reader of the version before declarations were recorded, as it was (its schemas, verbatim). */
const previousReader = z
  .object({
    info: z
      .object({
        'x-cortex-tag': z.string().optional(),
        'x-cortex-definition': z
          .object({
            source: z.string(),
            origin: z.unknown().optional(),
            settings: z
              .object({
                protect: z.array(z.string()).optional().catch(undefined),
                maxDeleteCount: z.number().optional().catch(undefined),
              })
              .loose()
              .optional()
              .catch(undefined),
            objects: z.record(z.string(), z.array(z.string())).default({}),
          })
          .loose(),
      })
      .loose(),
  })
  .loose();

const SOURCE = 'github.com/acme/catalog';
const API_KEY = 'records-test-key-0123456789';

const keys = new Set<ObjectKey>(['entity/payments', 'entity/shipping', 'catalog-page/home', 'entity-type/widget']);
const declared = new Map<ObjectKey, Declaration>([
  ['entity/payments', { file: 'services/payments/cortex.yaml', keys: ['info.title', 'info.x-cortex-tag'] }],
  ['entity/shipping', { file: 'services/shipping/cortex.yaml', keys: ['info.title', 'info.x-cortex-tag'] }],
  ['catalog-page/home', { file: '.cortex/catalog-pages/home.yaml' }],
]);

describe('the record format', () => {
  it("a record this version writes is read by the previous version's reader: same source, origin and objects", () => {
    const text = inventoryDescriptor(SOURCE, keys, { origin: SOURCE, protect: ['entity/keep-*'] }, declared);
    const old = previousReader.safeParse(parse(text));
    expect(old.success).toBe(true);
    const def = old.data?.info['x-cortex-definition'];
    expect(def?.source).toBe(SOURCE);
    expect(def?.origin).toBe(SOURCE);
    expect(def?.objects).toEqual({
      'catalog-page': ['home'],
      entity: ['payments', 'shipping'],
      'entity-type': ['widget'],
    });
  });

  it('keeps each file and key list once, and an object with no known declaration as null', () => {
    const def = (parse(inventoryDescriptor(SOURCE, keys, {}, declared)) as { info: Record<string, unknown> }).info[
      'x-cortex-definition'
    ] as { declared: unknown };
    expect(def.declared).toEqual({
      files: ['.cortex/catalog-pages/home.yaml', 'services/payments/cortex.yaml', 'services/shipping/cortex.yaml'],
      keys: [['info.title', 'info.x-cortex-tag']],
      objects: {
        'catalog-page': [[0]],
        entity: [
          [1, 0],
          [2, 0],
        ],
        'entity-type': [null],
      },
    });
  });

  /** `n` entities with a 70-character manifest path each and one of four key lists. */
  const entities = (n: number, pathLength = 70) => {
    const many = new Set<ObjectKey>();
    const where = new Map<ObjectKey, Declaration>();
    for (let i = 0; i < n; i++) {
      const tag = `payments-platform-service-backend-${String(i).padStart(5, '0')}`;
      many.add(`entity/${tag}`);
      const file = `services/${tag}/cortex.yaml`;
      where.set(`entity/${tag}`, {
        file: `${'x'.repeat(Math.max(0, pathLength - file.length))}${file}`,
        keys: ['info.title', 'info.x-cortex-owners', 'info.x-cortex-tag', `info.x-cortex-${i % 4}`].sort(),
      });
    }
    return { many, where };
  };
  const definitionOf = (text: string) =>
    (parse(text) as { info: Record<string, Record<string, unknown>> }).info['x-cortex-definition'] ?? {};

  it('declarations edited by hand or broken never cost the objects: out-of-range, misaligned or malformed ones are unknown', () => {
    const record = (declared: unknown) => ({
      info: {
        'x-cortex-tag': inventoryTag(SOURCE),
        'x-cortex-definition': { source: SOURCE, objects: { entity: ['a', 'b'], 'catalog-page': ['home'] }, declared },
      },
    });
    const read = (declared: unknown) => indexInventories([record(declared)], SOURCE);
    const outOfRange = read({ files: ['a.yaml'], keys: [], objects: { entity: [[7, 9], [0]], 'catalog-page': [[0]] } });
    expect(outOfRange.bySource.get(SOURCE)?.size).toBe(3);
    expect(Object.fromEntries(outOfRange.declared.get(SOURCE) ?? [])).toEqual({
      'entity/a': {},
      'entity/b': { file: 'a.yaml' },
      'catalog-page/home': { file: 'a.yaml' },
    });
    const misaligned = read({ files: ['a.yaml'], objects: { entity: [[0]], 'catalog-page': [[0]] } });
    expect([...(misaligned.declared.get(SOURCE)?.keys() ?? [])]).toEqual(['catalog-page/home']);
    for (const broken of ['text', 42, { files: 'a.yaml' }, { files: [], objects: { entity: ['x', 'y'] } }]) {
      const index = read(broken);
      expect(index.bySource.get(SOURCE)?.size, JSON.stringify(broken)).toBe(3);
      expect(index.declared.get(SOURCE)?.size).toBe(0);
    }
  });

  it('lists are checked element by element as before: a record with a non-string id is unreadable (there, listing nothing, bound to no origin), a bad declaration entry or file costs only the declarations', () => {
    const record = (objects: unknown, declared?: unknown) => ({
      info: {
        'x-cortex-tag': inventoryTag(SOURCE),
        'x-cortex-definition': { source: SOURCE, objects, ...(declared !== undefined ? { declared } : {}) },
      },
    });
    for (const ids of [['a', 7], ['a', null], 'a', [['a']]]) {
      const index = indexInventories([record({ entity: ids })], SOURCE);
      // At the source's exact tag it is never taken for absent: another origin must not bind the source.
      expect(index.bySource.get(SOURCE)?.size, JSON.stringify(ids)).toBe(0);
      expect(index.meta.get(SOURCE)?.origin, JSON.stringify(ids)).toBe(UNREADABLE_ORIGIN);
      // Elsewhere it is not read at all.
      expect(indexInventories([record({ entity: ids })], 'another-source').bySource.size).toBe(0);
    }
    const good = { files: ['a.yaml'], keys: [], objects: { entity: [[0], null] } };
    expect(indexInventories([record({ entity: ['a', 'b'] }, good)], SOURCE).declared.get(SOURCE)?.size).toBe(1);
    for (const entries of [[[-1], null], [[0.5], null], [[2 ** 53], null], [['0'], null], [0, null], [[0]]]) {
      const index = indexInventories(
        [record({ entity: ['a', 'b'] }, { ...good, objects: { entity: entries } })],
        SOURCE,
      );
      expect(index.bySource.get(SOURCE)?.size, JSON.stringify(entries)).toBe(2);
      expect(index.declared.get(SOURCE)?.size, JSON.stringify(entries)).toBe(0);
    }
    const badFiles = indexInventories([record({ entity: ['a', 'b'] }, { ...good, files: ['a.yaml', 3] })], SOURCE);
    expect(badFiles.bySource.get(SOURCE)?.size).toBe(2);
    expect(badFiles.declared.get(SOURCE)?.size).toBe(0);
  });

  it('10,000 entities with their files and keys stay under the API 2 MB body limit, declarations kept', () => {
    const { many, where } = entities(10_000);
    const text = inventoryDescriptor('github.com/acme/catalog//teams/platform', many, {}, where);
    const bytes = Buffer.byteLength(text);
    console.log(`inventory record of ${many.size} entities with declarations: ${bytes} bytes`);
    expect(bytes).toBeLessThanOrEqual(DECLARATIONS_BUDGET_BYTES);
    expect(definitionOf(text).declared).toBeDefined();
  });

  it('a record that declarations would take past the budget is written without them, never without its objects', () => {
    const { many, where } = entities(12_000, 120);
    const text = inventoryDescriptor('github.com/acme/catalog', many, {}, where);
    expect(Buffer.byteLength(text)).toBeLessThan(MAX_REQUEST_BODY_BYTES);
    const def = definitionOf(text);
    expect(def.declared).toBeUndefined();
    expect((def.objects as Record<string, string[]>).entity).toHaveLength(12_000);
  });
});

describe('records in the workspace', () => {
  let emulator: RunningEmulator;
  let client: ApiClient;
  let dir: string;
  beforeEach(async () => {
    emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
    client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    dir = await tempDir();
  });
  afterEach(async () => {
    await client.close();
    await emulator.stop();
    await removeDir(dir);
  });

  const config = (overrides: Partial<SyncConfig> = {}): SyncConfig =>
    syncConfig({ dir, sourceId: SOURCE, baseUrl: emulator.url, ...overrides });
  const run = (mode: 'plan' | 'apply') =>
    reconcile({ config: config(), mode, planLog: memoryPlanLog() }, createEngineContext(client));
  const rawRecord = async (): Promise<Record<string, unknown>> => {
    const res = await client.request<{ info: Record<string, unknown> }>({
      operation: 'read the record',
      method: 'GET',
      path: `/api/v1/catalog/${inventoryTag(SOURCE)}/openapi`,
    });
    return res.body.info['x-cortex-definition'] as Record<string, unknown>;
  };
  const page = (slug: string): string =>
    `slug: ${slug}\nname: ${slug}\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`;

  it("an apply records each object's file and an entity's keys; a plan reads them back", async () => {
    await writeFiles(dir, {
      'services/orders/cortex.yaml':
        'openapi: 3.0.1\ninfo:\n  title: Orders\n  x-cortex-tag: orders\n  x-cortex-type: service\n',
      '.cortex/catalog-pages/orders-page.yaml': page('orders-page'),
    });
    expect((await run('apply')).status).toBe('applied');
    const index = await readInventories(client, SOURCE);
    expect(Object.fromEntries(index.declared.get(SOURCE) ?? [])).toEqual({
      'entity/orders': {
        file: 'services/orders/cortex.yaml',
        keys: ['info.title', 'info.x-cortex-tag', 'info.x-cortex-type'],
      },
      'catalog-page/orders-page': { file: '.cortex/catalog-pages/orders-page.yaml' },
    });

    // A manifest moved to another file changes nothing live: the plan stays empty (no record write for it alone).
    await rename(join(dir, 'services/orders'), join(dir, 'services/orders-v2'));
    const moved = await run('plan');
    expect(moved.status).toBe('planned');
    if (moved.status === 'planned') {
      expect(moved.plan.inventory).toEqual([]);
      expect(moved.plan.changes.every((c) => c.action === 'noop')).toBe(true);
    }
  });

  it('a record the previous version wrote (no declarations) is read, and the next write adds them', async () => {
    await writeInventory(client, SOURCE, new Set(['catalog-page/old-page']), false);
    const before = await readInventories(client, SOURCE);
    expect(before.bySource.get(SOURCE)).toEqual(new Set(['catalog-page/old-page']));
    expect(before.declared.get(SOURCE)?.size).toBe(0);

    await writeFiles(dir, { '.cortex/catalog-pages/new-page.yaml': page('new-page') });
    expect((await run('apply')).status).toBe('applied');
    const after = await readInventories(client, SOURCE);
    expect(after.declared.get(SOURCE)?.get('catalog-page/new-page')).toEqual({
      file: '.cortex/catalog-pages/new-page.yaml',
    });
  });

  it("entries of a kind this version does not know (a newer version's) are kept when it rewrites the record", async () => {
    const record = inventoryDescriptor(SOURCE, new Set(['catalog-page/kept-page'])).replace(
      '      catalog-page:',
      '      future-kind:\n        - theirs\n      catalog-page:',
    );
    expect(record).toContain('future-kind');
    await writeInventory(client, SOURCE, new Set(), false);
    await client.request({
      operation: 'write a newer record',
      method: 'POST',
      path: '/api/v1/open-api',
      body: record,
      contentType: 'application/openapi;charset=UTF-8',
    });
    await writeFiles(dir, { '.cortex/catalog-pages/another.yaml': page('another') });
    expect((await run('apply')).status).toBe('applied');
    const objects = (await rawRecord()).objects as Record<string, string[]>;
    expect(objects['future-kind']).toEqual(['theirs']);
    expect(objects['catalog-page']).toContain('another');
  });
});
