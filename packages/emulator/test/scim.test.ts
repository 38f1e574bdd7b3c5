/**
 * SCIM user update, the vendor's SCIM rules, over HTTP: the provisioning and deprovisioning
 * toggles, both body content types, case-insensitive attribute names, `attributes` /
 * `excludedAttributes`, and the rate limit.
 */
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../src/server.js';
import { call, start } from './helpers.js';

const user = (active: boolean) => ({
  id: 'u1',
  userName: 'jane@example.com',
  active,
  name: { givenName: 'Jane', familyName: 'Doe' },
});

const seed = async (emu: RunningEmulator, active: boolean, settings = { provisioning: true, deprovisioning: true }) => {
  expect((await call(emu, 'POST', '/_emulator/scim/users', { key: null, body: user(active) })).status).toBe(200);
  expect((await call(emu, 'PUT', '/_emulator/scim-settings', { key: null, body: settings })).status).toBe(200);
};

const put = (emu: RunningEmulator, body: unknown, contentType = 'application/scim+json', query = '') =>
  call(emu, 'PUT', `/scim/v2/Users/u1${query}`, { body: JSON.stringify(body), contentType });

const activeNow = async (emu: RunningEmulator): Promise<unknown> =>
  ((await call(emu, 'GET', '/scim/v2/Users/u1')).json as { active?: unknown }).active;

describe('SCIM PUT /scim/v2/Users/{id} (vendor rules)', () => {
  it('rule 1: reactivating a user while provisioning is off is a 400 that changes nothing', async () => {
    const emu = await start();
    await seed(emu, false, { provisioning: false, deprovisioning: true });
    const r = await put(emu, { ...user(true), displayName: 'changed' });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ status: '400', detail: expect.stringContaining('provisioning') });
    const after = (await call(emu, 'GET', '/scim/v2/Users/u1')).json;
    expect(after).toMatchObject({ active: false });
    expect(after).not.toHaveProperty('displayName');
    // With provisioning on, the same request reactivates.
    await call(emu, 'PUT', '/_emulator/scim-settings', {
      key: null,
      body: { provisioning: true, deprovisioning: true },
    });
    expect((await put(emu, user(true))).status).toBe(200);
    expect(await activeNow(emu)).toBe(true);
  });

  it('rule 2: deactivating a user while deprovisioning is off is a 400 that changes nothing', async () => {
    const emu = await start();
    await seed(emu, true, { provisioning: true, deprovisioning: false });
    const r = await put(emu, user(false), 'application/json');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ detail: expect.stringContaining('deprovisioning') });
    expect(await activeNow(emu)).toBe(true);
    // Other changes that keep the user active still go through.
    expect((await put(emu, { ...user(true), displayName: 'Jane D.' }, 'application/json')).status).toBe(200);
    await call(emu, 'PUT', '/_emulator/scim-settings', {
      key: null,
      body: { provisioning: true, deprovisioning: true },
    });
    expect((await put(emu, user(false))).status).toBe(200);
    expect(await activeNow(emu)).toBe(false);
  });

  it('rule 3: SCIM requests are rate limited with the 429 problem response', async () => {
    const emu = await start({ rateLimitPerMinute: 60, rateLimitBurst: 1, now: () => 0 });
    await seed(emu, true);
    expect((await put(emu, user(true))).status).toBe(200);
    const limited = await put(emu, user(true));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.json).toMatchObject({ status: 429 });
  });

  it('takes application/json and application/scim+json bodies and answers in the same type', async () => {
    const emu = await start();
    await seed(emu, true);
    const scim = await put(emu, user(true), 'application/scim+json');
    expect(scim.status).toBe(200);
    expect(scim.headers.get('content-type')).toBe('application/scim+json');
    const json = await put(emu, user(true), 'application/json');
    expect(json.headers.get('content-type')).toBe('application/json');
    expect(json.json).toMatchObject({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      id: 'u1',
      userName: 'jane@example.com',
      meta: { resourceType: 'User' },
    });
    expect((await put(emu, user(true), 'text/plain')).status).toBe(415);
    expect((await call(emu, 'PUT', '/scim/v2/Users/u1', { body: '{', contentType: 'application/json' })).status).toBe(
      400,
    );
  });

  it('reads attribute names case-insensitively, and "False" from an IdP as false', async () => {
    const emu = await start();
    await seed(emu, true, { provisioning: true, deprovisioning: false });
    const odd = { USERNAME: 'jane@example.com', Active: 'False', NAME: { GIVENNAME: 'Jane' } };
    expect((await put(emu, odd)).status).toBe(400); // a deactivation, refused by rule 2
    await call(emu, 'PUT', '/_emulator/scim-settings', {
      key: null,
      body: { provisioning: true, deprovisioning: true },
    });
    const r = await put(emu, odd);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ userName: 'jane@example.com', active: false, name: { givenName: 'Jane' } });
    expect((await put(emu, { userName: 'j', active: 'maybe' })).status).toBe(400);
    expect((await put(emu, { active: true })).status).toBe(400); // userName is required
  });

  it('attributes and excludedAttributes pick what is returned; id and schemas always are', async () => {
    const emu = await start();
    await seed(emu, true);
    const only = await put(emu, user(true), 'application/json', '?attributes=name.familyName,USERNAME');
    expect(only.json).toEqual({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      id: 'u1',
      userName: 'jane@example.com',
      name: { familyName: 'Doe' },
    });
    const without = await call(emu, 'GET', '/scim/v2/Users/u1?excludedAttributes=name.familyName,meta,id');
    expect(without.json).toMatchObject({ id: 'u1', name: { givenName: 'Jane' } });
    expect(without.json).not.toHaveProperty('meta');
    expect((without.json as { name: object }).name).not.toHaveProperty('familyName');
  });

  it('404 for an unknown user; a key without the SCIM permission gets 403', async () => {
    const emu = await start();
    await seed(emu, true);
    expect((await call(emu, 'PUT', '/scim/v2/Users/nobody', { body: user(true) })).status).toBe(404);
    emu.addApiKey({ value: 'entities-only', permissions: ['EDIT_ENTITIES'] });
    expect((await call(emu, 'GET', '/scim/v2/Users/u1', { key: 'entities-only' })).status).toBe(403);
  });
});
