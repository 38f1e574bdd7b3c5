import { describe, expect, it } from 'vitest';
import { CatalogPage, pageOf } from './bodies.js';
import { bodyOf, call, start } from './helpers.js';

const T0 = Date.parse('2026-06-01T12:00:00Z');

const startAt = async () => {
  const clock = { ms: T0 };
  const emu = await start({ now: () => clock.ms });
  return { emu, clock };
};

const page = (overrides: Record<string, unknown> = {}) => ({
  slug: 'data-pipelines',
  name: 'Data Pipelines',
  description: 'Every pipeline',
  iconTag: 'cortex',
  isDraft: false,
  filter: { types: { include: ['pipeline'] }, groups: { include: ['data'] }, query: 'entity.tag() != "x"' },
  ...overrides,
});

const slugs = async (emu: { url: string; apiKey: string }) =>
  bodyOf(await call(emu, 'GET', '/api/v1/catalog-pages'), pageOf('catalogPages', CatalogPage))
    .catalogPages.map((p) => p.slug)
    .sort();

describe('Catalog pages', () => {
  it('creates a FILTER page (type inferred from filter) with server fields, readable by slug and in the list', async () => {
    const { emu } = await startAt();
    const created = await call(emu, 'POST', '/api/v1/catalog-pages', { body: page() });
    expect(created.status).toBe(200);
    expect(created.json).toEqual({
      ...page(),
      type: 'FILTER',
      isCortexManaged: false,
      dateCreated: '2026-06-01T12:00:00Z',
      dateUpdated: '2026-06-01T12:00:00Z',
    });
    expect((await call(emu, 'GET', '/api/v1/catalog-pages/data-pipelines')).json).toEqual(created.json);
    const list = await call(emu, 'GET', '/api/v1/catalog-pages');
    expect(list.json).toMatchObject({ page: 0, total: 2, totalPages: 1 });
    expect(bodyOf(list, pageOf('catalogPages', CatalogPage)).catalogPages).toContainEqual(created.json);
  });

  it('infers RELATIONSHIP_TYPE from relationshipTypeTag and accepts an explicit DOMAIN page', async () => {
    const { emu } = await startAt();
    const rel = await call(emu, 'POST', '/api/v1/catalog-pages', {
      body: page({ slug: 'runtimes', filter: undefined, relationshipTypeTag: 'runs-in' }),
    });
    expect(rel.status).toBe(200);
    expect(rel.json).toMatchObject({ type: 'RELATIONSHIP_TYPE', relationshipTypeTag: 'runs-in' });
    expect(rel.json).not.toHaveProperty('filter');
    const domain = await call(emu, 'POST', '/api/v1/catalog-pages', {
      body: page({ slug: 'domains', filter: undefined, type: 'DOMAIN' }),
    });
    expect(domain.status).toBe(200);
    expect(bodyOf(domain, CatalogPage).type).toBe('DOMAIN');
  });

  it('POST with an existing slug replaces every field, keeps dateCreated, and adds no page', async () => {
    const { emu, clock } = await startAt();
    await call(emu, 'POST', '/api/v1/catalog-pages', { body: page() });
    clock.ms += 60_000;
    const replaced = await call(emu, 'POST', '/api/v1/catalog-pages', {
      body: { slug: 'data-pipelines', name: 'Pipelines', iconTag: 'pipe', isDraft: true },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toEqual({
      slug: 'data-pipelines',
      name: 'Pipelines',
      iconTag: 'pipe',
      isDraft: true,
      type: 'FILTER',
      isCortexManaged: false,
      dateCreated: '2026-06-01T12:00:00Z',
      dateUpdated: '2026-06-01T12:01:00Z',
    });
    expect(await slugs(emu)).toEqual(['data-pipelines', 'services']);
  });

  it('DELETE removes a page; GET and DELETE of an unknown slug are 404', async () => {
    const { emu } = await startAt();
    await call(emu, 'POST', '/api/v1/catalog-pages', { body: page() });
    expect((await call(emu, 'DELETE', '/api/v1/catalog-pages/data-pipelines')).status).toBe(200);
    for (const method of ['GET', 'DELETE']) {
      const r = await call(emu, method, '/api/v1/catalog-pages/data-pipelines');
      expect(r.status, method).toBe(404);
      expect(r.json).toMatchObject({ type: 'NOT_FOUND', httpStatus: 404 });
    }
  });

  it('refuses to change or delete the Cortex-managed page (403) and leaves it as it was', async () => {
    const { emu } = await startAt();
    const before = await call(emu, 'GET', '/api/v1/catalog-pages/services');
    expect(bodyOf(before, CatalogPage).isCortexManaged).toBe(true);
    const post = await call(emu, 'POST', '/api/v1/catalog-pages', { body: page({ slug: 'services' }) });
    expect(post.status).toBe(403);
    expect(post.json).toMatchObject({ type: 'FORBIDDEN', httpStatus: 403 });
    expect((await call(emu, 'DELETE', '/api/v1/catalog-pages/services')).status).toBe(403);
    expect((await call(emu, 'GET', '/api/v1/catalog-pages/services')).json).toEqual(before.json);
  });

  it.each([
    ['name missing', page({ name: undefined })],
    ['slug missing', page({ slug: undefined })],
    ['iconTag missing', page({ iconTag: undefined })],
    ['isDraft missing', page({ isDraft: undefined })],
    ['slug with a slash', page({ slug: 'a/b' })],
    ['unknown type', page({ type: 'LIST' })],
    ['RELATIONSHIP_TYPE without relationshipTypeTag', page({ type: 'RELATIONSHIP_TYPE', filter: undefined })],
    ['relationshipTypeTag on a FILTER page', page({ type: 'FILTER', relationshipTypeTag: 'runs-in' })],
    ['filter and relationshipTypeTag without a type', page({ relationshipTypeTag: 'runs-in' })],
    ['filter on a DOMAIN page', page({ type: 'DOMAIN' })],
    ['types with include and exclude', page({ filter: { types: { include: ['a'], exclude: ['b'] } } })],
  ])('rejects a body with %s (400, vendor error shape)', async (_label, body) => {
    const { emu } = await startAt();
    const r = await call(emu, 'POST', '/api/v1/catalog-pages', { body });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'BAD_REQUEST', httpStatus: 400, message: expect.any(String) });
    expect(await slugs(emu)).toEqual(['services']);
  });

  it('reads need VIEW_CATALOGS, writes EDIT_CATALOGS', async () => {
    const { emu } = await startAt();
    emu.addApiKey({ value: 'viewer', permissions: ['VIEW_CATALOGS'] });
    emu.addApiKey({ value: 'editor', permissions: ['EDIT_CATALOGS'] });
    expect((await call(emu, 'GET', '/api/v1/catalog-pages', { key: 'viewer' })).status).toBe(200);
    expect((await call(emu, 'POST', '/api/v1/catalog-pages', { body: page(), key: 'viewer' })).status).toBe(403);
    expect((await call(emu, 'POST', '/api/v1/catalog-pages', { body: page(), key: 'editor' })).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/catalog-pages/data-pipelines', { key: 'editor' })).status).toBe(403);
  });
});
