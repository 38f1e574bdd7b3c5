/**
 * Keys a request controls (metric keys, custom data keys, tags, cids, SCIM ids, role tags, webhook
 * ids) are dictionary keys inside the emulator: `__proto__`, `constructor` and friends must be plain
 * keys, never the prototype (a metric key `__proto__` once wrote into Object.prototype).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, descriptor, start } from './helpers.js';

const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

afterEach(() => {
  // Leave nothing behind for other tests if a check below fails.
  for (const k of Object.keys(Object.prototype)) delete (Object.prototype as Record<string, unknown>)[k];
});

describe('prototype-named keys are plain keys', () => {
  it('custom metrics and custom data under them are stored and read back, and nothing reaches Object.prototype', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    for (const key of PROTO_KEYS) {
      const base = `/api/v1/eng-intel/custom-metrics/${key}/entity/svc`;
      expect((await call(emu, 'POST', base, { body: { value: 1 } })).status, key).toBe(200);
      expect((await call(emu, 'GET', base)).json, key).toMatchObject({ total: 1 });
      const added = await call(emu, 'POST', '/api/v1/catalog/svc/custom-data', { body: { key, value: key } });
      expect(added.status, key).toBe(200);
      expect((await call(emu, 'GET', `/api/v1/catalog/svc/custom-data/${key}`)).json, key).toMatchObject({
        key,
        value: key,
      });
    }
    expect(Object.keys(Object.prototype)).toEqual([]);
    const listed = (await call(emu, 'GET', '/api/v1/catalog/svc/custom-data')).json as { key: string }[];
    expect(listed.map((d) => d.key).sort()).toEqual([...PROTO_KEYS].sort());
  });

  it('lookups by such a tag, cid, SCIM id, role or webhook id answer 404 / 400, never 200 or 500', async () => {
    const emu = await start();
    for (const key of PROTO_KEYS) {
      expect((await call(emu, 'GET', `/api/v1/catalog/${key}`)).status, key).toBe(404);
      expect((await call(emu, 'GET', `/api/v1/auth/key/${key}`)).status, key).toBe(404);
      expect((await call(emu, 'GET', `/scim/v2/Users/${key}`)).status, key).toBe(404);
      const webhook = await fetch(`${emu.url}/api/v1/custom-integrations/data/${key}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(webhook.status, key).toBe(404);
      const minted = await call(emu, 'POST', '/_emulator/api-keys', {
        key: null,
        body: { roles: [{ type: 'CUSTOM', tag: key }] },
      });
      expect(minted.status, key).toBe(400);
    }
  });

  it('an entity tagged __proto__ is an entity like any other', async () => {
    const emu = await start();
    expect((await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('__proto__') })).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/catalog/__proto__')).json).toMatchObject({ tag: '__proto__' });
    expect(Object.keys(Object.prototype)).toEqual([]);
  });

  it('an entity type named constructor is created, read, changed and deleted; unknown such types are 404', async () => {
    const emu = await start();
    for (const key of PROTO_KEYS)
      expect((await call(emu, 'GET', `/api/v1/catalog/definitions/${key}`)).status, key).toBe(404);
    const body = { type: 'constructor', name: 'Constructor', schema: {} };
    expect((await call(emu, 'POST', '/api/v1/catalog/definitions', { body })).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/catalog/definitions/constructor')).json).toMatchObject(body);
    const renamed = { ...body, name: 'Renamed' };
    expect((await call(emu, 'PUT', '/api/v1/catalog/definitions/constructor', { body: renamed })).status).toBe(200);
    expect((await call(emu, 'DELETE', '/api/v1/catalog/definitions/constructor')).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/catalog/definitions/constructor')).status).toBe(404);
    expect((await call(emu, 'DELETE', '/api/v1/catalog/definitions/tostring')).status).toBe(404);
  });
});
