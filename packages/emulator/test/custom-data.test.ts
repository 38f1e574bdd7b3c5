/** Custom data over HTTP: per entity, by key, by `?tag=`, in bulk; descriptor values shown as YAML. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { bodyOf, call, descriptor, start } from './helpers.js';

const Record = z.looseObject({ key: z.string(), value: z.unknown(), source: z.string() });

describe('custom data', () => {
  it('adds, reads by key and lists API values beside the descriptor values, then deletes them', async () => {
    const emu = await start();
    const body = descriptor('svc', {
      'x-cortex-custom-metadata': { tier: 0, cost: { value: 'CC-1', description: 'x' } },
    });
    await call(emu, 'POST', '/api/v1/open-api', { body });
    const added = await call(emu, 'POST', '/api/v1/catalog/svc/custom-data', {
      body: { key: 'owner-team', value: { name: 'payments' }, description: 'who' },
    });
    expect(added.status).toBe(200);
    expect(added.json).toMatchObject({ key: 'owner-team', value: { name: 'payments' }, source: 'API', id: 1 });
    const list = bodyOf(await call(emu, 'GET', '/api/v1/catalog/svc/custom-data'), z.array(Record));
    expect(list.map((d) => [d.key, d.source])).toEqual([
      ['tier', 'YAML'],
      ['cost', 'YAML'],
      ['owner-team', 'API'],
    ]);
    expect((await call(emu, 'GET', '/api/v1/catalog/svc/custom-data/cost')).json).toMatchObject({ value: 'CC-1' });
    expect((await call(emu, 'GET', '/api/v1/catalog/custom-data?tag=svc&key=tier')).json).toEqual([
      expect.objectContaining({ key: 'tier', value: 0 }),
    ]);
    // A key the descriptor declares is not overridden unless asked.
    expect(
      (await call(emu, 'POST', '/api/v1/catalog/svc/custom-data', { body: { key: 'tier', value: 1 } })).status,
    ).toBe(400);
    expect(
      (await call(emu, 'POST', '/api/v1/catalog/svc/custom-data?force=true', { body: { key: 'tier', value: 1 } }))
        .status,
    ).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/catalog/svc/custom-data/tier')).json).toMatchObject({
      value: 1,
      source: 'API',
    });
    expect((await call(emu, 'DELETE', '/api/v1/catalog/svc/custom-data?key=owner-team')).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/catalog/svc/custom-data/owner-team')).status).toBe(404);
    expect((await call(emu, 'DELETE', '/api/v1/catalog/svc/custom-data?key=cost')).status).toBe(404);
    expect((await call(emu, 'GET', '/api/v1/catalog/nope/custom-data')).status).toBe(404);
    expect((await call(emu, 'POST', '/api/v1/catalog/svc/custom-data', { body: { value: 1 } })).status).toBe(400);
  });

  it('bulk: writes every entry of known entities, reports unknown tags, and refuses without writing on a bad entry', async () => {
    const emu = await start();
    for (const tag of ['a', 'b']) await call(emu, 'POST', '/api/v1/open-api', { body: descriptor(tag) });
    const r = await call(emu, 'PUT', '/api/v1/catalog/custom-data', {
      body: {
        values: { a: [{ key: 'k1', value: 'v1' }], b: [{ key: 'k2', value: 'v2' }], ghost: [{ key: 'k', value: 1 }] },
      },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ values: [{ key: 'k1' }, { key: 'k2' }], errors: { ghost: 'NOT_FOUND' } });
    const details = await call(emu, 'GET', '/api/v1/catalog/b');
    expect(details.json).toMatchObject({ metadata: [{ key: 'k2', value: 'v2', source: 'API' }] });
    const bad = await call(emu, 'PUT', '/api/v1/catalog/custom-data', {
      body: { values: { a: [{ key: 'k3', value: 'v3' }, { value: 'no key' }] } },
    });
    expect(bad.status).toBe(400);
    expect((await call(emu, 'GET', '/api/v1/catalog/a/custom-data/k3')).status).toBe(404);
  });

  it('is gone with its entity', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    await call(emu, 'POST', '/api/v1/catalog/svc/custom-data', { body: { key: 'k', value: 1 } });
    await call(emu, 'DELETE', '/api/v1/catalog/svc');
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    expect((await call(emu, 'GET', '/api/v1/catalog/svc/custom-data')).json).toEqual([]);
  });
});
