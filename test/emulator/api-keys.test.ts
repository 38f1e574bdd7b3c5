import { expect, it } from 'vitest';
import { z } from 'zod';
import { ApiKeyRecord, listOf } from './bodies.js';
import { bodyOf, call, start } from './helpers.js';

it('creates a key shown once, which then authenticates with its role permissions', async () => {
  const emu = await start();
  const created = await call(emu, 'POST', '/api/v1/auth/key', {
    body: { name: 'ci', description: 'for CI', roles: [{ type: 'CUSTOM', tag: 'EDIT_ENTITY_TYPES' }] },
  });
  expect(created.status).toBe(200);
  const value = bodyOf(created, z.looseObject({ apiKey: z.string() })).apiKey;
  expect(value.length).toBeGreaterThan(10);
  const listed = await call(emu, 'GET', '/api/v1/auth/key');
  const record = bodyOf(listed, listOf('apiKeys', ApiKeyRecord)).apiKeys.find((k) => k.name === 'ci');
  expect(record).toMatchObject({ last4: value.slice(-4), description: 'for CI' });
  expect(JSON.stringify(listed.json)).not.toContain(value);
  const asNew = { url: emu.url, apiKey: value };
  expect((await call(asNew, 'GET', '/api/v1/catalog/definitions')).status).toBe(200);
  expect((await call(asNew, 'GET', '/api/v1/auth/key')).status).toBe(403);
  expect((await call(emu, 'DELETE', `/api/v1/auth/key/${record?.cid}`)).status).toBe(204);
  expect((await call(asNew, 'GET', '/api/v1/catalog/definitions')).status).toBe(401);
  expect((await call(emu, 'GET', `/api/v1/auth/key/${record?.cid}`)).status).toBe(404);
});

it('refuses a key with more permissions than its creator', async () => {
  const emu = await start();
  emu.addApiKey({ value: 'key-admin-only', permissions: ['EDIT_API_KEYS'] });
  const r = await call(emu, 'POST', '/api/v1/auth/key', {
    body: { name: 'escalate', roles: [{ type: 'DEFAULT', role: 'ADMIN' }] },
    key: 'key-admin-only',
  });
  expect(r.status).toBe(403);
});
