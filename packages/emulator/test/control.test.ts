import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runEmulatorCommand } from '../src/cli.js';
import { z } from 'zod';
import { Counted, Entity, listOf } from './bodies.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

describe('observability', () => {
  it('logs API requests, shows state, and resets over HTTP without a key', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api?dryRun=false', { body: descriptor('a') });
    await call(emu, 'GET', '/api/v1/catalog/a');
    const log = await call(emu, 'GET', '/_emulator/requests', { key: null });
    expect(bodyOf(log, listOf('requests', z.unknown())).requests).toEqual([
      expect.objectContaining({ method: 'POST', path: '/api/v1/open-api', query: 'dryRun=false', status: 200 }),
      expect.objectContaining({ method: 'GET', path: '/api/v1/catalog/a', status: 200, ts: expect.any(Number) }),
    ]);
    const state = await call(emu, 'GET', '/_emulator/state', { key: null });
    const stateBody = z.looseObject({ entities: z.looseObject({ idByTag: z.record(z.string(), z.unknown()) }) });
    expect(Object.keys(bodyOf(state, stateBody).entities.idByTag)).toEqual(['a']);
    expect(JSON.stringify(state.json)).not.toContain(emu.apiKey);
    await call(emu, 'POST', '/_emulator/reset', { key: null });
    expect(emu.requests).toEqual([]);
    expect(bodyOf(await call(emu, 'GET', '/api/v1/catalog'), Counted).total).toBe(0); // the key still works
  });
});

describe('persistence', () => {
  it('saves state on stop and loads it at start', async () => {
    const dataFile = join(mkdtempSync(join(tmpdir(), 'emu-')), 'state.json');
    const first = await start({ dataFile, apiKey: 'k1' });
    await call(first, 'POST', '/api/v1/catalog/definitions', { body: { type: 'queue', schema: {} } });
    await call(first, 'POST', '/api/v1/open-api', {
      body: descriptor('q', { 'x-cortex-type': 'queue', 'x-cortex-definition': {} }),
    });
    await call(first, 'PUT', '/api/v1/catalog/q/archive');
    const id = bodyOf(await call(first, 'GET', '/api/v1/catalog/q'), Entity).id;
    await first.stop();
    const second = await start({ dataFile });
    expect((await call(second, 'GET', '/api/v1/catalog/q', { key: 'k1' })).json).toMatchObject({
      id,
      isArchived: true,
    });
    expect((await call(second, 'GET', '/api/v1/catalog/definitions/queue')).status).toBe(200);
  });
});

describe('persistence of the whole API spec', () => {
  it('keeps roles, keys with roles, SCIM users and toggles, integrations, custom data, metrics, deploys and GitOps logs; key values only as hashes', async () => {
    const dataFile = join(mkdtempSync(join(tmpdir(), 'emu-')), 'state.json');
    const first = await start({ dataFile });
    const control = (method: string, path: string, body: unknown) => call(first, method, path, { key: null, body });
    await control('POST', '/_emulator/roles', { tag: 'writer', permissions: ['EDIT_ENTITIES'] });
    const minted = bodyOf(
      await control('POST', '/_emulator/api-keys', { roles: [{ type: 'CUSTOM', tag: 'writer' }] }),
      z.looseObject({ apiKey: z.string() }),
    ).apiKey;
    await control('POST', '/_emulator/scim/users', { id: 'u1', userName: 'jane', active: true });
    await control('PUT', '/_emulator/scim-settings', { provisioning: false, deprovisioning: false });
    const hook = bodyOf(
      await control('POST', '/_emulator/custom-integrations', { name: 'n', entityTagJq: '.tag', key: 'hooked' }),
      z.looseObject({ id: z.string() }),
    ).id;
    await control('POST', '/_emulator/gitops-logs', {
      commit: 'c1',
      repository: { provider: 'GITHUB', repositoryName: 'acme/catalog' },
      files: [{ fileName: 'cortex.yaml', entity: { tag: 'svc', name: 'svc', type: 'service', operation: 'CREATED' } }],
    });
    await call(first, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    await call(first, 'POST', '/api/v1/catalog/svc/custom-data', { body: { key: 'api-set', value: 1 } });
    await call(first, 'POST', '/api/v1/eng-intel/custom-metrics/m/entity/svc', { body: { value: 7 } });
    await call(first, 'POST', '/api/v1/catalog/svc/deploys', {
      body: { title: 't', type: 'DEPLOY', timestamp: '2026-01-01T00:00:00Z' },
    });
    await first.stop();
    const saved = readFileSync(dataFile, 'utf8');
    expect(saved).not.toContain(minted);
    expect(saved).not.toContain(first.apiKey);

    const second = await start({ dataFile, apiKey: first.apiKey });
    const asWriter = { url: second.url, apiKey: minted };
    expect((await call(asWriter, 'POST', '/api/v1/open-api', { body: descriptor('w') })).status).toBe(200);
    expect((await call(asWriter, 'GET', '/api/v1/catalog/definitions')).status).toBe(403);
    const reactivate = await call(second, 'PUT', '/scim/v2/Users/u1', { body: { userName: 'jane', active: false } });
    expect(reactivate.status).toBe(400); // deprovisioning is still off
    const sent = await fetch(`${second.url}/api/v1/custom-integrations/data/${hook}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"tag":"svc"}',
    });
    expect(sent.status).toBe(200);
    const data = (await call(second, 'GET', '/api/v1/catalog/svc/custom-data')).json;
    expect(data).toEqual([
      expect.objectContaining({ key: 'api-set', source: 'API' }),
      expect.objectContaining({ key: 'hooked', source: 'INTEGRATION' }),
    ]);
    expect((await call(second, 'GET', '/api/v1/eng-intel/custom-metrics/m/entity/svc')).json).toMatchObject({
      total: 1,
    });
    expect((await call(second, 'GET', '/api/v1/catalog/svc/deploys')).json).toMatchObject({ total: 1 });
    expect((await call(second, 'GET', '/api/v1/catalog/svc/gitops-logs')).json).toMatchObject([{ commit: 'c1' }]);
  });
});

describe('the emulator command', () => {
  const run = async (env: NodeJS.ProcessEnv) => {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const emu = await runEmulatorCommand({ port: 0 }, { stdout, env });
    // `export NAME=value` lines: keep the values; a `#` line says a given key is accepted.
    const lines = out.split('\n').filter((l) => l.startsWith('export '));
    return { emu, out, lines: lines.map((l) => l.slice(l.indexOf('=') + 1)) };
  };

  it('prints the URL first and a generated key second', async () => {
    const { emu, lines } = await run({});
    try {
      expect(lines[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(lines).toHaveLength(2);
      expect((await call({ url: lines[0] ?? '', apiKey: lines[1] ?? '' }, 'GET', '/api/v1/catalog')).status).toBe(200);
    } finally {
      await emu.stop();
    }
  });

  it('accepts CORTEX_API_KEY as admin without printing it', async () => {
    const { emu, out, lines } = await run({ CORTEX_API_KEY: 'secret-key-from-env' });
    try {
      expect(lines).toEqual([emu.url]);
      expect(out).not.toContain('secret-key-from-env');
      expect(
        (await call({ url: emu.url, apiKey: 'secret-key-from-env' }, 'GET', '/api/v1/catalog/definitions')).status,
      ).toBe(200);
    } finally {
      await emu.stop();
    }
  });
});

describe('routing', () => {
  it('answers 404 for an unknown path and 405 for a known path with another method', async () => {
    const emu = await start();
    const unknown = await call(emu, 'GET', '/api/v1/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ httpStatus: 404 });
    const wrongMethod = await call(emu, 'PATCH', '/api/v1/catalog/definitions');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('GET');
  });
});
