import { describe, expect, it } from 'vitest';
import type { Permission } from '../src/contract.js';
import { call, descriptor, start } from './helpers.js';

const vendorError = (status: number) =>
  expect.objectContaining({ type: expect.any(String), message: expect.any(String), httpStatus: status });

describe('authentication', () => {
  it('answers 401 in the vendor error shape without a key or with an unknown key', async () => {
    const emu = await start();
    for (const key of [null, 'not-a-key']) {
      const r = await call(emu, 'GET', '/api/v1/catalog', { key });
      expect(r.status).toBe(401);
      expect(r.json).toEqual(vendorError(401));
    }
  });

  it('accepts the given admin key for every group', async () => {
    const emu = await start({ apiKey: 'admin-key-123' });
    expect(emu.apiKey).toBe('admin-key-123');
    expect((await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') })).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/catalog/definitions')).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/auth/key')).status).toBe(200);
  });
});

describe('permissions (403 when the key lacks the route permission)', () => {
  const cases: { name: string; method: string; path: string; body?: unknown; needs: Permission }[] = [
    { name: 'entity upsert', method: 'POST', path: '/api/v1/open-api', body: descriptor('x'), needs: 'EDIT_ENTITIES' },
    { name: 'entity patch', method: 'PATCH', path: '/api/v1/open-api', body: descriptor('x'), needs: 'EDIT_ENTITIES' },
    { name: 'archive', method: 'PUT', path: '/api/v1/catalog/seed/archive', needs: 'ARCHIVE_ENTITIES' },
    { name: 'unarchive', method: 'PUT', path: '/api/v1/catalog/seed/unarchive', needs: 'ARCHIVE_ENTITIES' },
    { name: 'delete entity', method: 'DELETE', path: '/api/v1/catalog/seed', needs: 'DELETE_ENTITIES' },
    { name: 'delete by type', method: 'DELETE', path: '/api/v1/catalog?types=service', needs: 'DELETE_ENTITIES' },
    { name: 'list entity types', method: 'GET', path: '/api/v1/catalog/definitions', needs: 'EDIT_ENTITY_TYPES' },
    {
      name: 'create entity type',
      method: 'POST',
      path: '/api/v1/catalog/definitions',
      body: { type: 't', schema: {} },
      needs: 'EDIT_ENTITY_TYPES',
    },
    {
      name: 'bulk dependencies',
      method: 'PUT',
      path: '/api/v1/catalog/dependencies',
      body: { values: { seed: [{ tag: 'seed2' }] } },
      needs: 'EDIT_ENTITIES',
    },
    {
      name: 'create dependency',
      method: 'POST',
      path: '/api/v1/catalog/seed/dependencies/seed2',
      needs: 'EDIT_ENTITIES',
    },
    { name: 'list api keys', method: 'GET', path: '/api/v1/auth/key', needs: 'EDIT_API_KEYS' },
  ];

  for (const c of cases) {
    it(`${c.name} needs ${c.needs}`, async () => {
      const emu = await start();
      await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('seed') });
      await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('seed2') });
      emu.addApiKey({ value: 'without', permissions: [] });
      emu.addApiKey({ value: 'with', permissions: [c.needs] });
      const denied = await call(emu, c.method, c.path, { body: c.body, key: 'without' });
      expect(denied.status).toBe(403);
      expect(denied.json).toEqual(vendorError(403));
      const allowed = await call(emu, c.method, c.path, { body: c.body, key: 'with' });
      expect(allowed.status).toBeLessThan(300);
    });
  }

  it('reads of entities and dependencies need only a valid key', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('seed') });
    emu.addApiKey({ value: 'reader', permissions: [] });
    for (const path of [
      '/api/v1/catalog',
      '/api/v1/catalog/descriptors',
      '/api/v1/catalog/seed',
      '/api/v1/catalog/seed/openapi',
      '/api/v1/catalog/seed/dependencies',
    ]) {
      expect((await call(emu, 'GET', path, { key: 'reader' })).status, path).toBe(200);
    }
  });
});
