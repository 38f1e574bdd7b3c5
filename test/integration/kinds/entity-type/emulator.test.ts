import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DesiredObject } from '../../../../src/core/model.js';
import { buildPlan } from '../../../../src/core/plan.js';
import { createEntityTypeKind, entityTypeKind } from '../../../../src/kinds/entity-type/index.js';
import type { EntityTypeManifest } from '../../../../src/kinds/entity-type/schema.js';
import { changeFor, type Harness, startHarness } from '../../../kinds/entity-type/emulator-harness.js';
import { parsedDoc } from '../../../kinds/entity-type/parsed-doc.js';
import { AT } from '../../../kinds/parse-context.js';

const FILE = '.cortex/entity-types/db.yaml';
const manifest = (text: string): DesiredObject<EntityTypeManifest> => {
  const { objects, diagnostics } = entityTypeKind.manifest.parse(parsedDoc(text, FILE), AT);
  const error = diagnostics.find((d) => d.severity === 'error');
  if (error) throw new Error(error.message);
  return objects[0]!;
};
const DB = manifest(`type: db
name: Database
description: A database we run
iconTag: robot-that-does-not-exist
schema:
  type: object
  properties:
    engine: {type: string}
    size: {type: integer}
`);
const DB_STRICTER = manifest(`type: db
name: Database
schema:
  required: [engine]
  type: object
  properties:
    engine: {type: string}
`);

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.stop();
});

const liveDb = async (desired: DesiredObject<EntityTypeManifest>) =>
  (await entityTypeKind.live.fetch(h.fetchContext([desired]))).find((o) => o.id === 'db');

describe('entity-type against the emulator', () => {
  it('reads a created type back equal to its manifest, though the server replaced its unknown icon', async () => {
    expect(await liveDb(DB)).toBeUndefined();
    await entityTypeKind.write.apply(changeFor(entityTypeKind, DB, undefined), h.applyContext());
    const live = await liveDb(DB);
    expect(live?.state.definition.iconTag).toBe('Cortex-builtin::Box');
    expect(entityTypeKind.live.canonical(live!, DB)).toEqual(entityTypeKind.manifest.canonical(DB));
    // The engine marks it as ours from the ownership inventory; with that, the plan has nothing to do.
    const plan = buildPlan({
      desired: [DB],
      live: [{ ...live!, owner: 'test-repo' }],
      handlers: [entityTypeKind],
      options: {
        sourceId: 'test-repo',
        prune: false,
        allowTakeover: false,
        allowMassDelete: false,
        protect: [],
        manifestsComplete: true,
      },
    });
    expect(plan.changes.map((c) => [c.id, c.action])).toEqual([['db', 'noop']]);
  });

  it('lists built-in types such as rds, marked protected so prune never removes them', async () => {
    const live = await entityTypeKind.live.fetch(h.fetchContext([]));
    const rds = live.find((o) => o.id === 'rds');
    expect(rds?.protected).toBe(true);
    expect(rds?.state.definition.source).toBe('CORTEX');
    expect(h.sent[0]?.query).toMatchObject({ includeBuiltIn: true });
  });

  it('updates with PUT without type in the body, and says how to force a schema change that breaks entities', async () => {
    const ctx = h.applyContext();
    await entityTypeKind.write.apply(changeFor(entityTypeKind, DB, undefined), ctx);
    await h.client.request({
      operation: 'create entity `orders-db`',
      method: 'POST',
      path: '/api/v1/open-api',
      contentType: 'application/openapi;charset=UTF-8',
      body: 'openapi: 3.0.1\ninfo:\n  title: Orders DB\n  x-cortex-tag: orders-db\n  x-cortex-type: db\n  x-cortex-definition: {size: 3}\n',
    });
    const before = await liveDb(DB_STRICTER);
    const update = changeFor(entityTypeKind, DB_STRICTER, before);
    const refused = entityTypeKind.write.apply(update, ctx);
    await expect(refused).rejects.toThrow(/--force-entity-type-schema/);
    await expect(refused).rejects.toMatchObject({ code: 'API', status: 400 });
    await expect(refused).rejects.toThrow(/update entity type `db` failed: PUT .* HTTP 400/);
    const put = h.sent.find((r) => r.method === 'PUT');
    expect(put?.path).toBe('/api/v1/catalog/definitions/db');
    expect(put?.body).not.toHaveProperty('type');
    expect(put?.query?.force).toBeUndefined();

    await createEntityTypeKind({ forceSchema: true }).write.apply(update, h.applyContext());
    expect(h.sent.filter((r) => r.method === 'PUT').at(-1)?.query).toMatchObject({ force: true });
    const after = await liveDb(DB_STRICTER);
    expect(entityTypeKind.live.canonical(after!, DB_STRICTER)).toEqual(entityTypeKind.manifest.canonical(DB_STRICTER));
  });

  it('does not suggest forcing when Cortex refuses to change one of its own types', async () => {
    const rds = (await entityTypeKind.live.fetch(h.fetchContext([]))).find((o) => o.id === 'rds');
    const declared = manifest('type: rds\nname: Our RDS\nschema: {type: object}\n');
    const refused = entityTypeKind.write.apply(changeFor(entityTypeKind, declared, rds), h.applyContext());
    await expect(refused).rejects.toThrow(
      /update entity type `rds` failed: .*HTTP 400: Built-in entity type rds cannot be changed/,
    );
    await expect(refused).rejects.not.toThrow(/force/);
  });

  it('deletes a type, and a type already gone counts as deleted', async () => {
    const ctx = h.applyContext();
    await entityTypeKind.write.apply(changeFor(entityTypeKind, DB, undefined), ctx);
    const live = await liveDb(DB);
    await entityTypeKind.write.apply(changeFor(entityTypeKind, undefined, live, 'delete'), ctx);
    expect(await liveDb(DB)).toBeUndefined();
    await expect(
      entityTypeKind.write.apply(changeFor(entityTypeKind, undefined, live, 'delete'), ctx),
    ).resolves.toBeUndefined();
  });
});
