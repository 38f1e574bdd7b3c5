/**
 * API keys over HTTP (the vendor's API keys, authentication and limits): the fields, paging,
 * every outcome (400, 403, 404, 204), the permissions of each role, and the rule that a caller
 * holding a custom role creates only keys whose roles carry equal or fewer permissions.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningEmulator } from '../src/server.js';
import { ApiKeyRecord, listOf, pageOf } from './bodies.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

const Created = z.looseObject({ apiKey: z.string(), name: z.string(), roles: z.array(z.unknown()) });
const Minted = z.looseObject({ apiKey: z.string(), cid: z.string() });

/** A key with these roles, made with the control endpoint. */
const mint = async (emu: RunningEmulator, roles: unknown[]) => {
  const r = await call(emu, 'POST', '/_emulator/api-keys', { key: null, body: { roles } });
  expect(r.status, r.text).toBe(200);
  return bodyOf(r, Minted);
};
const role = async (emu: RunningEmulator, tag: string, permissions: string[]) => {
  const r = await call(emu, 'POST', '/_emulator/roles', { key: null, body: { tag, permissions } });
  expect(r.status, r.text).toBe(200);
};
const as = (emu: RunningEmulator, apiKey: string) => ({ url: emu.url, apiKey });

describe('API keys: fields, value shown once', () => {
  it('creates a key shown once, listed with its fields, which then authenticates with its role permissions', async () => {
    const emu = await start();
    const created = await call(emu, 'POST', '/api/v1/auth/key', {
      body: {
        name: 'ci',
        description: 'for CI',
        expirationDate: '2999-01-01T00:00:00+02:00',
        roles: [{ type: 'DEFAULT', role: 'READ_ONLY' }],
      },
    });
    expect(created.status).toBe(200);
    const value = bodyOf(created, Created).apiKey;
    expect(created.json).toEqual({
      apiKey: value,
      name: 'ci',
      description: 'for CI',
      expirationDate: '2999-01-01T00:00:00+02:00',
      roles: [{ type: 'DEFAULT', role: 'READ_ONLY' }],
    });
    const listed = await call(emu, 'GET', '/api/v1/auth/key');
    const record = bodyOf(listed, listOf('apiKeys', ApiKeyRecord)).apiKeys.find((k) => k.name === 'ci');
    expect(record).toEqual({
      cid: expect.any(String),
      name: 'ci',
      description: 'for CI',
      createdDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
      expirationDate: '2999-01-01T00:00:00+02:00',
      last4: value.slice(-4),
      roles: [{ type: 'DEFAULT', role: 'READ_ONLY' }],
    });
    const one = await call(emu, 'GET', `/api/v1/auth/key/${record?.cid}`);
    const state = await call(emu, 'GET', '/_emulator/state', { key: null });
    for (const text of [listed.text, one.text, state.text]) expect(text).not.toContain(value);
    const asNew = as(emu, value);
    expect((await call(asNew, 'GET', '/api/v1/catalog')).status).toBe(200);
    expect((await call(asNew, 'GET', '/api/v1/auth/key')).status).toBe(403);
    expect((await call(emu, 'DELETE', `/api/v1/auth/key/${record?.cid}`)).status).toBe(204);
    expect((await call(asNew, 'GET', '/api/v1/catalog')).status).toBe(401);
  });
});

describe('API keys: paging (pageSize 1–1000, default 250, page 0-indexed)', () => {
  it('pages the list, and answers 400 outside the bounds', async () => {
    const emu = await start();
    for (let i = 0; i < 3; i++) await mint(emu, [{ type: 'DEFAULT', role: 'READ_ONLY' }]);
    const Page = pageOf('apiKeys', ApiKeyRecord);
    const all = bodyOf(await call(emu, 'GET', '/api/v1/auth/key'), Page);
    expect(all).toMatchObject({ page: 0, total: 4, totalPages: 1 }); // 3 + the admin key; default pageSize 250
    const second = bodyOf(await call(emu, 'GET', '/api/v1/auth/key?pageSize=1&page=1'), Page);
    expect(second).toMatchObject({ page: 1, total: 4, totalPages: 4 });
    expect(second.apiKeys[0]?.cid).toBe(all.apiKeys[1]?.cid);
    expect(bodyOf(await call(emu, 'GET', '/api/v1/auth/key?pageSize=1000'), Page).apiKeys.length).toBe(4);
    expect(bodyOf(await call(emu, 'GET', '/api/v1/auth/key?pageSize=2&page=5'), Page).apiKeys).toEqual([]);
    for (const query of ['pageSize=0', 'pageSize=1001', 'page=-1', 'pageSize=abc', 'page=1.5']) {
      expect((await call(emu, 'GET', `/api/v1/auth/key?${query}`)).status, query).toBe(400);
    }
  });
});

describe('API keys: outcomes', () => {
  it('400 for malformed requests, with nothing created', async () => {
    const emu = await start();
    const bodies: unknown[] = [
      '{not json',
      { roles: [{ type: 'DEFAULT', role: 'USER' }] },
      { name: 'x' },
      { name: 'x', roles: [] },
      { name: 'x', roles: [{ type: 'DEFAULT', role: 'OWNER' }] },
      { name: 'x', roles: [{ type: 'SUPER' }] },
      { name: 'x', roles: [{ type: 'CUSTOM' }] },
      { name: 'x', roles: [{ type: 'CUSTOM', tag: 'no-such-role' }] },
      { name: 'x', roles: [{ type: 'DEFAULT', role: 'USER' }], expirationDate: '2999-01-01T00:00:00' },
      { name: 'x', roles: [{ type: 'DEFAULT', role: 'USER' }], expirationDate: '2000-01-01T00:00:00Z' },
    ];
    for (const body of bodies) {
      const r = await call(emu, 'POST', '/api/v1/auth/key', {
        body,
        ...(typeof body === 'string' ? { contentType: 'application/json' } : {}),
      });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect(bodyOf(await call(emu, 'GET', '/api/v1/auth/key'), pageOf('apiKeys', ApiKeyRecord)).total).toBe(1);
    expect((await call(emu, 'GET', '/api/v1/auth/key/not%20a%20cid')).status).toBe(400);
    const { cid } = await mint(emu, [{ type: 'DEFAULT', role: 'USER' }]);
    expect((await call(emu, 'PUT', `/api/v1/auth/key/${cid}`, { body: { description: 'no name' } })).status).toBe(400);
  });

  it('404 for an unknown cid on get, update and delete; 204 with an empty body on delete', async () => {
    const emu = await start();
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await call(emu, method, '/api/v1/auth/key/ak0000000000000000', {
        ...(method === 'PUT' ? { body: { name: 'n' } } : {}),
      });
      expect(r.status, method).toBe(404);
    }
    const { cid } = await mint(emu, [{ type: 'DEFAULT', role: 'USER' }]);
    const updated = await call(emu, 'PUT', `/api/v1/auth/key/${cid}`, { body: { name: 'renamed', description: 'd' } });
    expect(updated.json).toMatchObject({ cid, name: 'renamed', description: 'd' });
    const deleted = await call(emu, 'DELETE', `/api/v1/auth/key/${cid}`);
    expect(deleted).toMatchObject({ status: 204, text: '' });
  });

  it('403 without the Edit API keys permission', async () => {
    const emu = await start();
    for (const r of ['READ_ONLY', 'USER']) {
      const { apiKey } = await mint(emu, [{ type: 'DEFAULT', role: r }]);
      expect((await call(as(emu, apiKey), 'GET', '/api/v1/auth/key')).status).toBe(403);
      const create = await call(as(emu, apiKey), 'POST', '/api/v1/auth/key', {
        body: { name: 'x', roles: [{ type: 'DEFAULT', role: 'READ_ONLY' }] },
      });
      expect(create.status).toBe(403);
    }
  });
});

describe('roles and permissions', () => {
  it('READ_ONLY reads only; USER edits entities but not entity types; ADMIN does everything', async () => {
    const emu = await start();
    const readOnly = as(emu, (await mint(emu, [{ type: 'DEFAULT', role: 'READ_ONLY' }])).apiKey);
    const user = as(emu, (await mint(emu, [{ type: 'DEFAULT', role: 'USER' }])).apiKey);
    const admin = as(emu, (await mint(emu, [{ type: 'DEFAULT', role: 'ADMIN' }])).apiKey);
    const write = (k: { url: string; apiKey: string }, tag: string) =>
      call(k, 'POST', '/api/v1/open-api', { body: descriptor(tag) });
    expect((await write(readOnly, 'a')).status).toBe(403);
    expect((await call(readOnly, 'GET', '/api/v1/catalog')).status).toBe(200);
    expect((await call(readOnly, 'GET', '/api/v1/catalog-pages')).status).toBe(200);
    expect((await write(user, 'b')).status).toBe(200);
    expect((await call(user, 'GET', '/api/v1/catalog/definitions')).status).toBe(403);
    expect((await write(admin, 'c')).status).toBe(200);
    expect((await call(admin, 'GET', '/api/v1/catalog/definitions')).status).toBe(200);
    expect((await call(admin, 'GET', '/api/v1/auth/key')).status).toBe(200);
  });

  it('a custom role grants exactly its permissions, and roles of one key add up', async () => {
    const emu = await start();
    await role(emu, 'type-editor', ['EDIT_ENTITY_TYPES']);
    const key = as(emu, (await mint(emu, [{ type: 'CUSTOM', tag: 'type-editor' }])).apiKey);
    expect((await call(key, 'GET', '/api/v1/catalog/definitions')).status).toBe(200);
    expect((await call(key, 'POST', '/api/v1/open-api', { body: descriptor('x') })).status).toBe(403);
    const both = as(
      emu,
      (
        await mint(emu, [
          { type: 'CUSTOM', tag: 'type-editor' },
          { type: 'DEFAULT', role: 'USER' },
        ])
      ).apiKey,
    );
    expect((await call(both, 'POST', '/api/v1/open-api', { body: descriptor('x') })).status).toBe(200);
    expect((await call(both, 'GET', '/api/v1/catalog/definitions')).status).toBe(200);
  });
});

describe('a caller holding a custom role creates only keys with equal or fewer permissions', () => {
  const setup = async () => {
    const emu = await start();
    await role(emu, 'key-manager', ['EDIT_API_KEYS', 'EDIT_ENTITIES']);
    await role(emu, 'entity-writer', ['EDIT_ENTITIES']);
    await role(emu, 'type-editor', ['EDIT_ENTITY_TYPES']);
    const manager = as(emu, (await mint(emu, [{ type: 'CUSTOM', tag: 'key-manager' }])).apiKey);
    return { emu, manager };
  };
  const create = (k: { url: string; apiKey: string }, roles: unknown[]) =>
    call(k, 'POST', '/api/v1/auth/key', { body: { name: 'minted', roles } });

  it('creates keys whose roles carry fewer or equal permissions', async () => {
    const { manager } = await setup();
    expect((await create(manager, [{ type: 'CUSTOM', tag: 'entity-writer' }])).status).toBe(200);
    expect((await create(manager, [{ type: 'CUSTOM', tag: 'key-manager' }])).status).toBe(200);
  });

  it('refuses an ADMIN key, a USER key, and a custom role with a permission it lacks, with 403', async () => {
    const { emu, manager } = await setup();
    for (const roles of [
      [{ type: 'DEFAULT', role: 'ADMIN' }],
      [{ type: 'DEFAULT', role: 'USER' }],
      [{ type: 'CUSTOM', tag: 'type-editor' }],
      [
        { type: 'CUSTOM', tag: 'entity-writer' },
        { type: 'CUSTOM', tag: 'type-editor' },
      ],
    ]) {
      const r = await create(manager, roles);
      expect(r.status, JSON.stringify(roles)).toBe(403);
    }
    expect(bodyOf(await call(emu, 'GET', '/api/v1/auth/key'), pageOf('apiKeys', ApiKeyRecord)).total).toBe(2);
  });

  it('cannot rename or delete a key that carries more than it holds', async () => {
    const { emu, manager } = await setup();
    const adminCid = (await mint(emu, [{ type: 'DEFAULT', role: 'ADMIN' }])).cid;
    expect((await call(manager, 'PUT', `/api/v1/auth/key/${adminCid}`, { body: { name: 'x' } })).status).toBe(403);
    expect((await call(manager, 'DELETE', `/api/v1/auth/key/${adminCid}`)).status).toBe(403);
    expect((await call(emu, 'GET', `/api/v1/auth/key/${adminCid}`)).status).toBe(200);
    const lesserCid = (await mint(emu, [{ type: 'CUSTOM', tag: 'entity-writer' }])).cid;
    expect((await call(manager, 'DELETE', `/api/v1/auth/key/${lesserCid}`)).status).toBe(204);
  });
});
