import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { Counted, Descriptor, Entity, pageOf, Tagged, ValidationResult } from './bodies.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

const yamlDescriptor = `openapi: 3.0.1
# a comment the service does not keep
info:
  title: Payments API
  x-cortex-tag: payments-api
  x-cortex-groups: [tier-0]
  x-cortex-description: not a real key
  x-cortex-custom-data: {a: 1}
  x-cortex-custom-metadata:
    owners: [owner-1]
    tier: 0
`;

describe('POST /api/v1/open-api', () => {
  it('stores the descriptor as data: comments lost, unknown x-cortex keys dropped', async () => {
    const emu = await start();
    const r = await call(emu, 'POST', '/api/v1/open-api', { body: yamlDescriptor });
    expect(r).toMatchObject({ status: 200, json: { ok: true, violations: [] } });
    const d = await call(emu, 'GET', '/api/v1/catalog/payments-api/openapi');
    const { info } = bodyOf(d, Descriptor);
    expect(info['x-cortex-description']).toBeUndefined();
    expect(info['x-cortex-custom-data']).toBeUndefined();
    expect(info['x-cortex-groups']).toEqual(['tier-0']);
    const y = await call(emu, 'GET', '/api/v1/catalog/payments-api/openapi?yaml=true');
    expect(y.text).not.toContain('comment');
    expect(parseYaml(y.text)).toEqual(d.json);
  });

  it('replaces the whole descriptor on upsert and keeps the id', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: yamlDescriptor });
    const before = await call(emu, 'GET', '/api/v1/catalog/payments-api');
    const { id } = bodyOf(before, Entity);
    expect(id).toMatch(/^en[0-9a-f]{16}$/);
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('payments-api', { title: 'Renamed' }) });
    const after = await call(emu, 'GET', `/api/v1/catalog/${id}/openapi`);
    expect(bodyOf(after, Descriptor).info).toEqual({ title: 'Renamed', 'x-cortex-tag': 'payments-api' });
    expect(bodyOf(await call(emu, 'GET', '/api/v1/catalog/payments-api'), Entity).id).toBe(id);
  });

  it('accepts JSON and YAML content types', async () => {
    const emu = await start();
    for (const [i, ct] of ['application/json', 'application/yaml', 'text/yaml'].entries()) {
      const r = await call(emu, 'POST', '/api/v1/open-api', { body: descriptor(`t${i}`), contentType: ct });
      expect(r.status, ct).toBe(200);
    }
  });

  it('answers 400 with violations for a missing title, a missing tag, or invalid YAML', async () => {
    const emu = await start();
    const noTitle = await call(emu, 'POST', '/api/v1/open-api', {
      body: 'openapi: 3.0.1\ninfo:\n  x-cortex-tag: a\n',
    });
    expect(noTitle.status).toBe(400);
    const noTitleResult = bodyOf(noTitle, ValidationResult);
    expect(noTitleResult.ok).toBe(false);
    expect(noTitleResult.violations[0]).toMatchObject({
      violationType: 'MUST',
      pointer: '/info/title',
      startLine: expect.any(Number),
      endLine: expect.any(Number),
      paths: expect.any(Array),
      title: expect.any(String),
      description: expect.any(String),
    });
    const noTag = await call(emu, 'POST', '/api/v1/open-api', { body: 'openapi: 3.0.1\ninfo:\n  title: A\n' });
    expect(bodyOf(noTag, ValidationResult).violations.map((v) => v.pointer)).toEqual(['/info/x-cortex-tag']);
    const bad = await call(emu, 'POST', '/api/v1/open-api', { body: 'info:\n  title: [unclosed\n  x: 1\n' });
    expect(bad.status).toBe(400);
    expect(bodyOf(bad, ValidationResult).violations).toHaveLength(1);
    expect(bodyOf(await call(emu, 'GET', '/api/v1/catalog?includeArchived=true'), Counted).total).toBe(0);
  });

  it('validates only with dryRun, and mode=CREATE refuses an existing tag', async () => {
    const emu = await start();
    const dry = await call(emu, 'POST', '/api/v1/open-api?dryRun=true', { body: descriptor('dry') });
    expect(bodyOf(dry, ValidationResult).ok).toBe(true);
    expect((await call(emu, 'GET', '/api/v1/catalog/dry')).status).toBe(404);
    expect((await call(emu, 'POST', '/api/v1/open-api?mode=CREATE', { body: descriptor('dry') })).status).toBe(200);
    expect((await call(emu, 'POST', '/api/v1/open-api?mode=CREATE', { body: descriptor('dry') })).status).toBe(409);
  });

  it('refuses an entity of an unknown custom type, and one without x-cortex-definition', async () => {
    const emu = await start();
    const unknown = await call(emu, 'POST', '/api/v1/open-api', {
      body: descriptor('agent', { 'x-cortex-type': 'ai-agent', 'x-cortex-definition': {} }),
    });
    expect(unknown.status).toBe(400);
    expect(bodyOf(unknown, ValidationResult).violations[0]?.pointer).toBe('/info/x-cortex-type');
    await call(emu, 'POST', '/api/v1/catalog/definitions', {
      body: {
        type: 'ai-agent',
        schema: { type: 'object', required: ['model'], properties: { model: { type: 'string' } } },
      },
    });
    const noDef = await call(emu, 'POST', '/api/v1/open-api', {
      body: descriptor('agent', { 'x-cortex-type': 'ai-agent' }),
    });
    expect(bodyOf(noDef, ValidationResult).violations[0]?.pointer).toBe('/info/x-cortex-definition');
    const wrongDef = await call(emu, 'POST', '/api/v1/open-api', {
      body: descriptor('agent', { 'x-cortex-type': 'ai-agent', 'x-cortex-definition': {} }),
    });
    expect(wrongDef.status).toBe(400);
    const good = await call(emu, 'POST', '/api/v1/open-api', {
      body: descriptor('agent', { 'x-cortex-type': 'ai-agent', 'x-cortex-definition': { model: 'x' } }),
    });
    expect(good.status).toBe(200);
  });
});

describe('a custom-type entity without x-cortex-definition (option missingDefinition)', () => {
  /** The vendor CLI's `test_catalog_delete_by_type`: a type with an empty schema, one entity without a definition. */
  const withTypes = async (missingDefinition?: 'refuse' | 'allow' | 'empty-schema') => {
    const emu = await start(missingDefinition ? { missingDefinition } : {});
    for (const body of [
      { type: 'empty-schema', name: 'Empty', schema: {} },
      { type: 'optional-only', name: 'Optional', schema: { type: 'object', properties: { a: { type: 'string' } } } },
      {
        type: 'needs-model',
        name: 'Needs model',
        schema: { type: 'object', required: ['model'], properties: { model: { type: 'string' } } },
      },
    ]) {
      expect((await call(emu, 'POST', '/api/v1/catalog/definitions', { body })).status).toBe(200);
    }
    return emu;
  };
  const create = (emu: { url: string; apiKey: string }, tag: string, type: string, method = 'POST') =>
    call(emu, method, '/api/v1/open-api', { body: descriptor(tag, { 'x-cortex-type': type }) });

  it("by default is accepted when its type's schema is exactly {} (the vendor CLI's delete-by-type test), refused otherwise", async () => {
    const emu = await withTypes();
    expect(await create(emu, 'no-def', 'empty-schema')).toMatchObject({ status: 200, json: { ok: true } });
    // `{type: object, properties: {...}}` accepts {} too, but a tenant answered "Definition is required" for it.
    for (const method of ['POST', 'PATCH']) {
      for (const type of ['optional-only', 'needs-model']) {
        const r = await create(emu, `no-def-${type}`, type, method);
        expect(r.status).toBe(400);
        expect(bodyOf(r, ValidationResult).violations).toMatchObject([
          {
            title: 'Standard cortex tags',
            description: 'Definition is required',
            pointer: '/info/x-cortex-definition',
          },
        ]);
      }
    }
    expect((await call(emu, 'GET', '/api/v1/catalog/no-def-optional-only')).status).toBe(404);
  });

  it('with \'refuse\', is refused with "Definition is required", even when the schema is empty (POST and PATCH)', async () => {
    const emu = await withTypes('refuse');
    for (const method of ['POST', 'PATCH']) {
      const r = await create(emu, 'no-def', 'empty-schema', method);
      expect(r.status).toBe(400);
      expect(bodyOf(r, ValidationResult).violations).toMatchObject([
        { title: 'Standard cortex tags', description: 'Definition is required', pointer: '/info/x-cortex-definition' },
      ]);
    }
    expect((await call(emu, 'GET', '/api/v1/catalog/no-def')).status).toBe(404);
  });

  it("with 'allow', is accepted when the type's schema accepts {} and listed by type; refused otherwise", async () => {
    const emu = await withTypes('allow');
    expect(await create(emu, 'no-def', 'empty-schema')).toMatchObject({ status: 200, json: { ok: true } });
    expect((await create(emu, 'no-def-optional', 'optional-only', 'PATCH')).status).toBe(201);
    const listed = bodyOf(await call(emu, 'GET', '/api/v1/catalog?types=empty-schema'), pageOf('entities', Tagged));
    expect(listed.entities.map((e) => e.tag)).toEqual(['no-def']);
    const stored = bodyOf(await call(emu, 'GET', '/api/v1/catalog/no-def/openapi'), Descriptor).info;
    expect(stored['x-cortex-definition']).toBeUndefined();
    const refused = await create(emu, 'no-model', 'needs-model');
    expect(refused.status).toBe(400);
    expect(bodyOf(refused, ValidationResult).violations).toMatchObject([
      { description: 'Definition is required', pointer: '/info/x-cortex-definition' },
    ]);
    // The CLI test goes on: delete every entity of the type, then none is left.
    expect((await call(emu, 'DELETE', '/api/v1/catalog?types=empty-schema')).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/catalog/no-def')).status).toBe(404);
    expect(bodyOf(await call(emu, 'GET', '/api/v1/catalog?types=empty-schema'), Counted).total).toBe(0);
  });
});

describe('PATCH /api/v1/open-api', () => {
  it('deep-merges, removes keys equal to the delete marker, and appends arrays on request', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: yamlDescriptor });
    const patch = `openapi: 3.0.0
info:
  x-cortex-tag: payments-api
  x-cortex-groups: __delete__
  x-cortex-custom-metadata:
    owners: [owner-2]
`;
    const r = await call(emu, 'PATCH', '/api/v1/open-api?appendArrays=true&deleteMarkerValue=__delete__', {
      body: patch,
    });
    expect(r).toMatchObject({ status: 200, json: { ok: true } });
    const info = bodyOf(await call(emu, 'GET', '/api/v1/catalog/payments-api/openapi'), Descriptor).info;
    expect(info.title).toBe('Payments API');
    expect(info['x-cortex-groups']).toBeUndefined();
    expect(info['x-cortex-custom-metadata']).toEqual({ owners: ['owner-1', 'owner-2'], tier: 0 });
    await call(emu, 'PATCH', '/api/v1/open-api', { body: patch.replace('  x-cortex-groups: __delete__\n', '') });
    const withOwners = z.looseObject({
      info: z.looseObject({ 'x-cortex-custom-metadata': z.looseObject({ owners: z.array(z.string()) }) }),
    });
    const replaced = bodyOf(await call(emu, 'GET', '/api/v1/catalog/payments-api/openapi'), withOwners).info;
    expect(replaced['x-cortex-custom-metadata'].owners).toEqual(['owner-2']);
  });

  it('merges maps at every depth, replaces arrays unless appendArrays=true, and changes nothing with dryRun', async () => {
    const emu = await start();
    const base = `openapi: 3.0.1
info:
  title: Deep
  x-cortex-tag: deep
  x-cortex-groups: [a, b]
  x-cortex-custom-metadata:
    outer: {inner: 1, kept: 2}
`;
    await call(emu, 'POST', '/api/v1/open-api', { body: base });
    const patch = `openapi: 3.0.1
info:
  x-cortex-tag: deep
  x-cortex-groups: [c]
  x-cortex-custom-metadata:
    outer: {inner: 3}
`;
    const read = async () => bodyOf(await call(emu, 'GET', '/api/v1/catalog/deep/openapi'), Descriptor).info;
    const dry = await call(emu, 'PATCH', '/api/v1/open-api?dryRun=true', { body: patch });
    expect(dry).toMatchObject({ status: 200, json: { ok: true } });
    expect((await read())['x-cortex-groups']).toEqual(['a', 'b']);
    await call(emu, 'PATCH', '/api/v1/open-api', { body: patch });
    const info = await read();
    expect(info['x-cortex-groups']).toEqual(['c']);
    expect(info['x-cortex-custom-metadata']).toEqual({ outer: { inner: 3, kept: 2 } });
    expect(info.title).toBe('Deep');
    // A dry run of a create creates nothing.
    expect((await call(emu, 'PATCH', '/api/v1/open-api?dryRun=true', { body: descriptor('dry-new') })).status).toBe(
      201,
    );
    expect((await call(emu, 'GET', '/api/v1/catalog/dry-new')).status).toBe(404);
  });

  it('removes a stored key whose value equals the delete marker too (the marker applies to the merged descriptor)', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', {
      body: `openapi: 3.0.1\ninfo:\n  title: M\n  x-cortex-tag: m\n  x-cortex-custom-metadata: {stored: zap, other: 1}\n`,
    });
    await call(emu, 'PATCH', '/api/v1/open-api?deleteMarkerValue=zap', {
      body: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: m\n  description: d\n`,
    });
    const info = bodyOf(await call(emu, 'GET', '/api/v1/catalog/m/openapi'), Descriptor).info;
    expect(info['x-cortex-custom-metadata']).toEqual({ other: 1 });
    expect(info.description).toBe('d');
  });

  it('creates with 201, or answers 404 with failIfEntityDoesNotExist', async () => {
    const emu = await start();
    expect(
      (await call(emu, 'PATCH', '/api/v1/open-api?failIfEntityDoesNotExist=true', { body: descriptor('new') })).status,
    ).toBe(404);
    expect((await call(emu, 'PATCH', '/api/v1/open-api', { body: descriptor('new') })).status).toBe(201);
    expect((await call(emu, 'PATCH', '/api/v1/open-api', { body: descriptor('new') })).status).toBe(200);
  });
});

describe('reading the catalog', () => {
  it('excludes teams from descriptors unless asked, accepts repeated or comma-joined types', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('dom', { 'x-cortex-type': 'domain' }) });
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('tm', { 'x-cortex-type': 'team' }) });
    const tags = async (q: string) =>
      bodyOf(await call(emu, 'GET', `/api/v1/catalog/descriptors${q}`), pageOf('descriptors', Descriptor))
        .descriptors.map((d) => d.info['x-cortex-tag'])
        .sort();
    expect(await tags('')).toEqual(['dom', 'svc']);
    expect(await tags('?types=team&types=service')).toEqual(['svc', 'tm']);
    expect(await tags('?types=team,domain')).toEqual(['dom', 'tm']);
    // yaml=true (the vendor CLI sends `True`): the items stay objects, as a live tenant answers.
    const asYaml = await call(emu, 'GET', '/api/v1/catalog/descriptors?yaml=True&types=team');
    expect(bodyOf(asYaml, pageOf('descriptors', Descriptor)).descriptors).toEqual([
      { openapi: '3.0.1', info: { title: 'Title of tm', 'x-cortex-tag': 'tm', 'x-cortex-type': 'team' } },
    ]);
  });

  it('hides archived entities unless includeArchived, and unarchives', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('old') });
    const archived = await call(emu, 'PUT', '/api/v1/catalog/old/archive');
    expect(archived).toMatchObject({ status: 200, json: { tag: 'old', isArchived: true } });
    expect(bodyOf(await call(emu, 'GET', '/api/v1/catalog'), Counted).total).toBe(0);
    expect(bodyOf(await call(emu, 'GET', '/api/v1/catalog/descriptors'), Counted).total).toBe(0);
    const all = await call(emu, 'GET', '/api/v1/catalog?includeArchived=true');
    expect(bodyOf(all, pageOf('entities', Tagged)).entities[0]).toMatchObject({
      tag: 'old',
      isArchived: true,
      name: 'Title of old',
      type: 'service',
    });
    expect(bodyOf(await call(emu, 'PUT', '/api/v1/catalog/old/unarchive'), Entity).isArchived).toBe(false);
    expect(bodyOf(await call(emu, 'GET', '/api/v1/catalog'), Counted).total).toBe(1);
  });

  it('pages in an order that is not insertion order, stable across calls', async () => {
    const emu = await start();
    const inserted = Array.from({ length: 20 }, (_, i) => `svc-${String(i).padStart(2, '0')}`);
    for (const tag of inserted) await call(emu, 'POST', '/api/v1/open-api', { body: descriptor(tag) });
    const read = async () => {
      const seen: string[] = [];
      for (let page = 0; page < 4; page++) {
        const r = await call(emu, 'GET', `/api/v1/catalog?pageSize=6&page=${page}`);
        expect(r.json).toMatchObject({ page, total: 20, totalPages: 4 });
        seen.push(...bodyOf(r, pageOf('entities', Tagged)).entities.map((e) => e.tag));
      }
      return seen;
    };
    const first = await read();
    expect([...first].sort()).toEqual(inserted);
    expect(first).not.toEqual(inserted);
    expect(await read()).toEqual(first);
    expect((await call(emu, 'GET', '/api/v1/catalog?pageSize=1001')).status).toBe(400);
  });

  it('serves tags holding @, / and . when URL-encoded, by tag or by id', async () => {
    const emu = await start();
    const tag = 'team@corp/payments.api';
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor(tag) });
    const byTag = await call(emu, 'GET', `/api/v1/catalog/${encodeURIComponent(tag)}`);
    const entity = bodyOf(byTag, Entity);
    expect(entity.tag).toBe(tag);
    const byId = await call(emu, 'GET', `/api/v1/catalog/${entity.id}/openapi`);
    expect(bodyOf(byId, Descriptor).info['x-cortex-tag']).toBe(tag);
    expect((await call(emu, 'PUT', `/api/v1/catalog/${encodeURIComponent(tag)}/archive`)).status).toBe(200);
    expect((await call(emu, 'DELETE', `/api/v1/catalog/${encodeURIComponent(tag)}`)).status).toBe(200);
    expect((await call(emu, 'GET', `/api/v1/catalog/${encodeURIComponent(tag)}`)).status).toBe(404);
  });
});

describe('deleting', () => {
  it('deletes one entity with an empty 200, and all entities of given types', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('a') });
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('b', { 'x-cortex-type': 'domain' }) });
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('c', { 'x-cortex-type': 'team' }) });
    const del = await call(emu, 'DELETE', '/api/v1/catalog/a');
    expect(del).toMatchObject({ status: 200, text: '' });
    expect((await call(emu, 'DELETE', '/api/v1/catalog/a')).status).toBe(404);
    expect((await call(emu, 'DELETE', '/api/v1/catalog?types=domain')).status).toBe(200);
    const left = await call(emu, 'GET', '/api/v1/catalog?includeArchived=true');
    expect(bodyOf(left, pageOf('entities', Tagged)).entities.map((e) => e.tag)).toEqual(['c']);
  });
});
