import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Dependency, ErrorBody, listOf } from './bodies.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

const withEntities = async () => {
  const emu = await start();
  await call(emu, 'POST', '/api/v1/open-api', {
    body: descriptor('caller', {
      'x-cortex-dependency': [{ tag: 'callee', method: 'POST', path: '/v1/entries', description: 'yaml edge' }],
    }),
  });
  await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('callee') });
  await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('other') });
  return emu;
};

const listed = async (emu: { url: string; apiKey: string }, tag: string) =>
  bodyOf(
    await call(emu, 'GET', `/api/v1/catalog/${tag}/dependencies`),
    listOf('dependencies', z.record(z.string(), z.unknown())),
  ).dependencies;

describe('dependencies', () => {
  it('bulk PUT echoes, 404 for an unknown entity, and bulk DELETE removes', async () => {
    const emu = await withEntities();
    const body = {
      values: { caller: [{ tag: 'other', method: 'GET', path: '/x', description: 'api edge', metadata: { a: 1 } }] },
    };
    const put = await call(emu, 'PUT', '/api/v1/catalog/dependencies', { body });
    expect(put.status).toBe(200);
    const echoed = bodyOf(put, z.looseObject({ values: z.record(z.string(), z.array(z.unknown())) }));
    expect(echoed.values.caller?.[0]).toMatchObject(body.values.caller[0] as object);
    expect(
      (await call(emu, 'PUT', '/api/v1/catalog/dependencies', { body: { values: { caller: [{ tag: 'ghost' }] } } }))
        .status,
    ).toBe(404);
    const deps = await listed(emu, 'caller');
    expect(deps).toHaveLength(2);
    expect(deps).toContainEqual({
      callerTag: 'caller',
      callerType: 'service',
      calleeTag: 'other',
      calleeType: 'service',
      method: 'GET',
      path: '/x',
      description: 'api edge',
      metadata: { a: 1 },
    });
    expect(deps).toContainEqual(expect.objectContaining({ calleeTag: 'callee', description: 'yaml edge' }));
    expect((await call(emu, 'DELETE', '/api/v1/catalog/dependencies', { body })).status).toBe(204);
    expect(await listed(emu, 'caller')).toHaveLength(1);
  });

  it('refuses to change an edge declared in x-cortex-dependency', async () => {
    const emu = await withEntities();
    const path = '/api/v1/catalog/caller/dependencies/callee?method=POST&path=%2Fv1%2Fentries';
    expect((await call(emu, 'GET', path)).json).toMatchObject({ description: 'yaml edge' });
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await call(emu, method, path, { body: { description: 'x', metadata: {} } });
      expect(r.status, method).toBe(400);
      expect(bodyOf(r, ErrorBody).message).toBe('Cannot modify dependency that is defined in cortex.yaml');
    }
    const bulk = await call(emu, 'PUT', '/api/v1/catalog/dependencies', {
      body: { values: { caller: [{ tag: 'callee', method: 'POST', path: '/v1/entries' }] } },
    });
    expect(bulk.status).toBe(400);
    // the same pair with another method/path is a different edge, so it is an API edge
    expect((await call(emu, 'POST', '/api/v1/catalog/caller/dependencies/callee?method=GET&path=%2Fv1')).status).toBe(
      201,
    );
    await call(emu, 'DELETE', '/api/v1/catalog/caller/dependencies');
    expect((await listed(emu, 'caller')).map((d) => d.method)).toEqual(['POST']);
  });

  it('creates, reads, updates and deletes a single edge identified by method and path', async () => {
    const emu = await withEntities();
    const edge = '/api/v1/catalog/other/dependencies/callee?method=GET&path=%2Fa';
    expect((await call(emu, 'GET', edge)).status).toBe(404);
    const created = await call(emu, 'POST', edge, { body: { description: 'd1', metadata: { k: 1 } } });
    expect(created).toMatchObject({
      status: 201,
      json: { callerTag: 'other', calleeTag: 'callee', method: 'GET', path: '/a' },
    });
    expect((await call(emu, 'GET', '/api/v1/catalog/other/dependencies/callee')).status).toBe(404);
    const updated = await call(emu, 'PUT', edge, { body: { description: 'd2', metadata: {} } });
    expect(updated.json).toMatchObject({ description: 'd2', metadata: {} });
    expect((await call(emu, 'DELETE', edge)).status).toBe(204);
    expect((await call(emu, 'GET', edge)).status).toBe(404);
  });

  it('drops API edges of a deleted entity and lists incoming edges on request', async () => {
    const emu = await withEntities();
    await call(emu, 'POST', '/api/v1/catalog/other/dependencies/callee');
    const incoming = await call(
      emu,
      'GET',
      '/api/v1/catalog/callee/dependencies?includeIncoming=true&includeOutgoing=false',
    );
    const incomingEdges = bodyOf(incoming, listOf('dependencies', Dependency)).dependencies;
    expect(incomingEdges.map((d) => d.callerTag).sort()).toEqual(['caller', 'other']);
    await call(emu, 'DELETE', '/api/v1/catalog/other');
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('other') });
    expect(await listed(emu, 'other')).toEqual([]);
  });
});
