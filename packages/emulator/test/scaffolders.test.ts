import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { deriveScaffolderTag } from '../src/resources/scaffolders.js';
import { pageOf, Scaffolder } from './bodies.js';
import { bodyOf, call, start } from './helpers.js';

const template = (overrides: Record<string, unknown> = {}) => ({
  tag: 'node-service',
  name: 'Node Service',
  description: 'A Node.js service',
  type: 'COOKIECUTTER',
  labels: ['node'],
  repoLocator: {
    type: 'GITHUB',
    org: 'acme',
    repoName: 'node-template',
    url: 'https://github.com/acme/node-template',
  },
  requireNewService: true,
  requirePullRequest: true,
  createYamlFile: true,
  showReadme: true,
  strictAliasUsage: true,
  ...overrides,
});

const tags = async (emu: { url: string; apiKey: string }) =>
  bodyOf(await call(emu, 'GET', '/api/v1/scaffolders'), pageOf('scaffolders', Scaffolder))
    .scaffolders.map((s) => s.tag)
    .sort();

describe('Scaffolder templates', () => {
  it('creates a template with a Cortex-generated id, readable by tag, by id and in the list', async () => {
    const emu = await start();
    const created = await call(emu, 'POST', '/api/v1/scaffolders', { body: template() });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ ...template(), id: expect.any(String) });
    const { id } = bodyOf(created, Scaffolder);
    expect(id).not.toBe('node-service');
    expect((await call(emu, 'GET', '/api/v1/scaffolders/node-service')).json).toEqual(created.json);
    expect((await call(emu, 'GET', `/api/v1/scaffolders/${id}`)).json).toEqual(created.json);
    const list = await call(emu, 'GET', '/api/v1/scaffolders');
    expect(list.json).toEqual({ scaffolders: [created.json], page: 0, total: 1, totalPages: 1 });
  });

  it('POST with an existing tag updates that template (same id, no new one); omitted fields reset', async () => {
    const emu = await start();
    const first = await call(emu, 'POST', '/api/v1/scaffolders', { body: template() });
    const again = await call(emu, 'POST', '/api/v1/scaffolders', {
      body: { tag: 'node-service', name: 'Node Svc', type: 'COOKIECUTTER', repoLocator: template().repoLocator },
    });
    expect(again.status).toBe(200);
    expect(bodyOf(again, Scaffolder).id).toBe(bodyOf(first, Scaffolder).id);
    expect(again.json).toMatchObject({
      name: 'Node Svc',
      labels: [],
      requireNewService: false,
      requirePullRequest: false,
      createYamlFile: false,
      showReadme: false,
      strictAliasUsage: false,
    });
    expect(again.json).not.toHaveProperty('description');
    expect(await tags(emu)).toEqual(['node-service']);
  });

  it('derives the tag from the name when none is given, and never overwrites on a derived tag', async () => {
    const emu = await start();
    const body = { ...template({ name: '  My Node.js Service (v2)! ' }), tag: undefined };
    const a = await call(emu, 'POST', '/api/v1/scaffolders', { body });
    const derived = bodyOf(a, Scaffolder);
    expect(derived.tag).toBe('my-node-js-service-v2');
    const b = await call(emu, 'POST', '/api/v1/scaffolders', { body });
    expect(b.status).toBe(200);
    expect(bodyOf(b, Scaffolder).id).not.toBe(derived.id);
    expect(await tags(emu)).toEqual(['my-node-js-service-v2', 'my-node-js-service-v2-2']);
    const unnamable = await call(emu, 'POST', '/api/v1/scaffolders', { body: { ...body, name: '!!!' } });
    expect(unnamable.status).toBe(400);
    expect(deriveScaffolderTag('Data--Pipeline__Template')).toBe('data-pipeline-template');
  });

  it('PUT replaces an existing template, renames it when the body has another tag, and 404s when missing', async () => {
    const emu = await start();
    const { id } = bodyOf(await call(emu, 'POST', '/api/v1/scaffolders', { body: template() }), Scaffolder);
    const missing = await call(emu, 'PUT', '/api/v1/scaffolders/nope', { body: template({ tag: 'nope' }) });
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ type: 'NOT_FOUND', httpStatus: 404 });
    expect(await tags(emu)).toEqual(['node-service']);

    const kept = await call(emu, 'PUT', '/api/v1/scaffolders/node-service', {
      body: { ...template({ description: undefined }), tag: undefined },
    });
    expect(kept.json).toMatchObject({ id, tag: 'node-service' });
    expect(kept.json).not.toHaveProperty('description');

    const renamed = await call(emu, 'PUT', `/api/v1/scaffolders/${id}`, {
      body: template({ tag: 'node-service-v2' }),
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ id, tag: 'node-service-v2' });
    expect((await call(emu, 'GET', '/api/v1/scaffolders/node-service')).status).toBe(404);
    expect(await tags(emu)).toEqual(['node-service-v2']);
  });

  it('PUT refuses to rename onto a tag another template holds (409)', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/scaffolders', { body: template() });
    await call(emu, 'POST', '/api/v1/scaffolders', { body: template({ tag: 'go-service' }) });
    const r = await call(emu, 'PUT', '/api/v1/scaffolders/go-service', { body: template({ tag: 'node-service' }) });
    expect(r.status).toBe(409);
    expect(r.json).toMatchObject({ type: 'CONFLICT', httpStatus: 409 });
    expect(await tags(emu)).toEqual(['go-service', 'node-service']);
  });

  it('DELETE by tag or id removes the template; unknown → 404', async () => {
    const emu = await start();
    const a = await call(emu, 'POST', '/api/v1/scaffolders', { body: template() });
    await call(emu, 'POST', '/api/v1/scaffolders', { body: template({ tag: 'go-service' }) });
    expect((await call(emu, 'DELETE', `/api/v1/scaffolders/${bodyOf(a, Scaffolder).id}`)).status).toBe(200);
    expect((await call(emu, 'DELETE', '/api/v1/scaffolders/go-service')).status).toBe(200);
    expect((await call(emu, 'DELETE', '/api/v1/scaffolders/go-service')).status).toBe(404);
    expect(await tags(emu)).toEqual([]);
  });

  it.each([
    ['tag starting with a dash', template({ tag: '-node' })],
    ['tag ending with a dash', template({ tag: 'node-' })],
    ['tag with upper case', template({ tag: 'Node' })],
    ['tag with an underscore', template({ tag: 'node_service' })],
    ['tag with a space', template({ tag: 'node service' })],
    ['name missing', template({ name: undefined })],
    ['type missing', template({ type: undefined })],
    ['repoLocator missing', template({ repoLocator: undefined })],
    ['GITHUB locator without org', template({ repoLocator: { type: 'GITHUB', repoName: 'x' } })],
    ['unknown locator type', template({ repoLocator: { type: 'SVN', url: 'svn://x' } })],
    ['labels not a list', template({ labels: 'node' })],
  ])('rejects a body with %s (400, vendor error shape)', async (_label, body) => {
    const emu = await start();
    const r = await call(emu, 'POST', '/api/v1/scaffolders', { body });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'BAD_REQUEST', httpStatus: 400 });
    expect(await tags(emu)).toEqual([]);
  });

  it('accepts YAML bodies and answers YAML when asked', async () => {
    const emu = await start();
    const yamlBody = [
      'tag: cli-test-scaffolder',
      'name: CLI Test Scaffolder',
      'type: COOKIECUTTER',
      'repoLocator:',
      '  type: GITHUB',
      '  org: cortextests',
      '  repoName: cli-test-scaffolder-template',
      'requireNewService: true',
    ].join('\n');
    const created = await call(emu, 'POST', '/api/v1/scaffolders', { body: yamlBody, contentType: 'application/yaml' });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ tag: 'cli-test-scaffolder', requireNewService: true });
    const res = await fetch(`${emu.url}/api/v1/scaffolders/cli-test-scaffolder`, {
      headers: { authorization: `Bearer ${emu.apiKey}`, accept: 'application/yaml' },
    });
    expect(res.headers.get('content-type')).toMatch(/yaml/);
    expect(parseYaml(await res.text())).toEqual(created.json);
  });

  it('reads need any valid key; writes need CONFIGURE_SCAFFOLDER', async () => {
    const emu = await start();
    emu.addApiKey({ value: 'reader', permissions: [] });
    emu.addApiKey({ value: 'configurer', permissions: ['CONFIGURE_SCAFFOLDER'] });
    expect((await call(emu, 'POST', '/api/v1/scaffolders', { body: template(), key: 'reader' })).status).toBe(403);
    expect((await call(emu, 'POST', '/api/v1/scaffolders', { body: template(), key: 'configurer' })).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/scaffolders', { key: 'reader' })).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/scaffolders/node-service', { key: 'reader' })).status).toBe(200);
    expect((await call(emu, 'DELETE', '/api/v1/scaffolders/node-service', { key: 'reader' })).status).toBe(403);
    expect((await call(emu, 'GET', '/api/v1/scaffolders', { key: null })).status).toBe(401);
  });
});
