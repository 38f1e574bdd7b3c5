/** Deploys over HTTP: the vendor's nine operations, with the vendor's bodies. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningEmulator } from '../src/server.js';
import { pageOf } from './bodies.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

const Deploy = z.looseObject({ uuid: z.string(), sha: z.string().nullable(), environment: z.string().nullable() });
const deploy = (sha: string, environment: string, type = 'DEPLOY') => ({
  title: `deploy ${sha}`,
  type,
  timestamp: '2026-01-02T03:04:05Z',
  sha,
  environment,
  deployer: { email: 'dev@example.com', name: 'Dev' },
  customData: { build: 42 },
});
const add = async (emu: RunningEmulator, tag: string, body: unknown) => {
  const r = await call(emu, 'POST', `/api/v1/catalog/${tag}/deploys`, { body });
  expect(r.status, r.text).toBe(200);
  return bodyOf(r, Deploy);
};
const listed = async (emu: RunningEmulator, tag: string) =>
  bodyOf(await call(emu, 'GET', `/api/v1/catalog/${tag}/deploys`), pageOf('deployments', Deploy));

describe('deploys', () => {
  it('adds, lists, updates and deletes deploys of an entity', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    const first = await add(emu, 'svc', deploy('aaa', 'prod'));
    expect(first).toMatchObject({
      uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      deployer: { email: 'dev@example.com', name: 'Dev' },
      deployerEmail: 'dev@example.com',
      customData: { build: 42 },
    });
    await add(emu, 'svc', deploy('bbb', 'staging', 'ROLLBACK'));
    expect((await listed(emu, 'svc')).total).toBe(2);
    const updated = await call(emu, 'PUT', `/api/v1/catalog/svc/deploys/${first.uuid}`, {
      body: deploy('ccc', 'prod'),
    });
    expect(updated.json).toMatchObject({ uuid: first.uuid, sha: 'ccc' });
    expect((await call(emu, 'GET', '/api/v1/deploys/environments')).json).toEqual({
      environments: ['prod', 'staging'],
    });
    const search = await call(emu, 'GET', '/api/v1/deploys/search?environment=prod');
    expect(bodyOf(search, pageOf('deployments', Deploy)).deployments.map((d) => d.sha)).toEqual(['ccc']);
    expect((await call(emu, 'DELETE', `/api/v1/catalog/svc/deploys/${first.uuid}`)).status).toBe(200);
    expect((await call(emu, 'DELETE', `/api/v1/catalog/svc/deploys/${first.uuid}`)).status).toBe(404);
    expect((await call(emu, 'DELETE', '/api/v1/catalog/svc/deploys?sha=bbb')).json).toMatchObject({
      deploys: [{ sha: 'bbb' }],
    });
    expect((await listed(emu, 'svc')).total).toBe(0);
  });

  it('deletes by filter across entities (a filter is required) and all at once', async () => {
    const emu = await start();
    for (const tag of ['a', 'b']) await call(emu, 'POST', '/api/v1/open-api', { body: descriptor(tag) });
    await add(emu, 'a', deploy('1', 'prod', 'SCALE'));
    await add(emu, 'b', deploy('2', 'prod'));
    await add(emu, 'b', deploy('3', 'dev'));
    expect((await call(emu, 'DELETE', '/api/v1/catalog/deploys')).status).toBe(400);
    expect((await call(emu, 'DELETE', '/api/v1/catalog/deploys?type=NOPE')).status).toBe(400);
    await call(emu, 'DELETE', '/api/v1/catalog/deploys?type=SCALE');
    expect((await listed(emu, 'a')).total).toBe(0);
    expect((await listed(emu, 'b')).total).toBe(2);
    expect((await call(emu, 'DELETE', '/api/v1/catalog/deploys/all')).status).toBe(200);
    expect((await listed(emu, 'b')).total).toBe(0);
  });

  it('validates the body like the vendor OpenAPI: title, type and timestamp are required', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    for (const body of [
      { type: 'DEPLOY', timestamp: '2026-01-01T00:00:00Z' },
      { title: 't', type: 'LAUNCH', timestamp: '2026-01-01T00:00:00Z' },
      { title: 't', type: 'DEPLOY', timestamp: 'yesterday' },
    ]) {
      expect((await call(emu, 'POST', '/api/v1/catalog/svc/deploys', { body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(emu, 'POST', '/api/v1/catalog/ghost/deploys', { body: deploy('x', 'y') })).status).toBe(404);
  });
});
