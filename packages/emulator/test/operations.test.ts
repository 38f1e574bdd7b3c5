/**
 * Every operation of the vendor API's endpoint groups (and the vendor's scorecard operations cortex-sync
 * uses) answers on the emulator: each one is sent with a minimal valid request against a small
 * workspace, and its status is the one the emulator's readme table says (the table and this list
 * must name the same operations).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningEmulator } from '../src/server.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

interface Operation {
  /** `METHOD /path` as the vendor writes it. */
  op: string;
  /** The request actually sent ({placeholders} filled in), its body and content type. */
  path: string;
  body?: unknown;
  contentType?: string;
  /** No key (the inbound webhook). */
  noKey?: boolean;
}

const deploy = { title: 'first', type: 'DEPLOY', timestamp: '2026-01-01T00:00:00Z', environment: 'prod' };
const initiative = {
  name: 'Readiness',
  scorecardTag: 'production-readiness',
  targetDate: '2999-12-31',
  isDraft: false,
  emphasizedLevels: [{ rank: 1 }],
  emphasizedRules: [],
};
const scaffolder = {
  tag: 'svc-template',
  name: 'Service template',
  type: 'COOKIECUTTER',
  repoLocator: { type: 'GITHUB', org: 'acme', repoName: 'template' },
};
const catalogPage = {
  slug: 'data',
  name: 'Data',
  iconTag: 'cortex',
  isDraft: false,
  filter: { types: { include: ['service'] } },
};

/** In the vendor's order (deletes of one deploy before those of many). `{cid}` etc. come from `prepare`. */
const OPERATIONS = (ids: Record<string, string>): Operation[] => [
  { op: 'GET /api/v1/auth/key', path: '/api/v1/auth/key' },
  { op: 'GET /api/v1/auth/key/{cid}', path: `/api/v1/auth/key/${ids.keyCid}` },
  {
    op: 'POST /api/v1/auth/key',
    path: '/api/v1/auth/key',
    body: { name: 'ci', roles: [{ type: 'DEFAULT', role: 'READ_ONLY' }] },
  },
  { op: 'PUT /api/v1/auth/key/{cid}', path: `/api/v1/auth/key/${ids.keyCid}`, body: { name: 'renamed' } },
  { op: 'DELETE /api/v1/auth/key/{cid}', path: `/api/v1/auth/key/${ids.keyCid}` },
  {
    op: 'PUT /scim/v2/Users/{id}',
    path: '/scim/v2/Users/u1',
    body: { userName: 'jane@example.com', active: true },
    contentType: 'application/scim+json',
  },
  { op: 'GET /api/v1/scaffolders', path: '/api/v1/scaffolders' },
  { op: 'GET /api/v1/scaffolders/{tagOrId}', path: '/api/v1/scaffolders/svc-template' },
  { op: 'POST /api/v1/scaffolders', path: '/api/v1/scaffolders', body: scaffolder },
  { op: 'PUT /api/v1/scaffolders/{tagOrId}', path: '/api/v1/scaffolders/svc-template', body: scaffolder },
  { op: 'DELETE /api/v1/scaffolders/{tagOrId}', path: '/api/v1/scaffolders/svc-template' },
  { op: 'GET /api/v1/catalog', path: '/api/v1/catalog' },
  { op: 'GET /api/v1/catalog/search', path: '/api/v1/catalog/search?query=svc' },
  { op: 'GET /api/v1/catalog/descriptors', path: '/api/v1/catalog/descriptors' },
  { op: 'GET /api/v1/catalog/{tagOrId}', path: '/api/v1/catalog/svc' },
  { op: 'GET /api/v1/catalog/{tagOrId}/gitops-logs', path: '/api/v1/catalog/svc/gitops-logs' },
  { op: 'GET /api/v1/catalog/{tagOrId}/openapi', path: '/api/v1/catalog/svc/openapi' },
  { op: 'GET /api/v1/catalog/{tagOrId}/scorecards', path: '/api/v1/catalog/svc/scorecards' },
  { op: 'POST /api/v1/open-api', path: '/api/v1/open-api', body: descriptor('svc') },
  { op: 'PUT /api/v1/catalog/{tagOrId}/archive', path: '/api/v1/catalog/old/archive' },
  { op: 'PUT /api/v1/catalog/{tagOrId}/unarchive', path: '/api/v1/catalog/old/unarchive' },
  { op: 'PATCH /api/v1/open-api', path: '/api/v1/open-api', body: descriptor('svc') },
  { op: 'DELETE /api/v1/catalog/{tagOrId}', path: '/api/v1/catalog/old' },
  { op: 'DELETE /api/v1/catalog', path: '/api/v1/catalog?types=queue' },
  { op: 'GET /api/v1/catalog/{tagOrId}/k8s', path: '/api/v1/catalog/svc/k8s' },
  { op: 'GET /api/v1/catalog/{callerTag}/dependencies', path: '/api/v1/catalog/svc/dependencies' },
  { op: 'GET /api/v1/catalog/{callerTag}/dependencies/{calleeTag}', path: '/api/v1/catalog/svc/dependencies/db' },
  { op: 'POST /api/v1/catalog/{callerTag}/dependencies/{calleeTag}', path: '/api/v1/catalog/svc/dependencies/cache' },
  {
    op: 'PUT /api/v1/catalog/dependencies',
    path: '/api/v1/catalog/dependencies',
    body: { values: { svc: [{ tag: 'db' }] } },
  },
  {
    op: 'PUT /api/v1/catalog/{callerTag}/dependencies/{calleeTag}',
    path: '/api/v1/catalog/svc/dependencies/db',
    body: { description: 'reads', metadata: {} },
  },
  { op: 'DELETE /api/v1/catalog/{callerTag}/dependencies/{calleeTag}', path: '/api/v1/catalog/svc/dependencies/db' },
  { op: 'DELETE /api/v1/catalog/{callerTag}/dependencies', path: '/api/v1/catalog/svc/dependencies' },
  {
    op: 'DELETE /api/v1/catalog/dependencies',
    path: '/api/v1/catalog/dependencies',
    body: { values: { svc: [{ tag: 'cache' }] } },
  },
  { op: 'GET /api/v1/catalog/{tagOrId}/deploys', path: '/api/v1/catalog/svc/deploys' },
  { op: 'POST /api/v1/catalog/{tagOrId}/deploys', path: '/api/v1/catalog/svc/deploys', body: deploy },
  {
    op: 'PUT /api/v1/catalog/{tagOrId}/deploys/{uuid}',
    path: `/api/v1/catalog/svc/deploys/${ids.deploy}`,
    body: deploy,
  },
  { op: 'DELETE /api/v1/catalog/{tagOrId}/deploys/{uuid}', path: `/api/v1/catalog/svc/deploys/${ids.deploy}` },
  { op: 'DELETE /api/v1/catalog/{tagOrId}/deploys', path: '/api/v1/catalog/svc/deploys' },
  { op: 'DELETE /api/v1/catalog/deploys', path: '/api/v1/catalog/deploys?environment=prod' },
  { op: 'DELETE /api/v1/catalog/deploys/all', path: '/api/v1/catalog/deploys/all' },
  { op: 'GET /api/v1/deploys/environments', path: '/api/v1/deploys/environments' },
  { op: 'GET /api/v1/deploys/search', path: '/api/v1/deploys/search?environment=prod' },
  { op: 'GET /api/v1/initiatives', path: '/api/v1/initiatives' },
  { op: 'GET /api/v1/initiatives/{cid}', path: `/api/v1/initiatives/${ids.initiative}` },
  { op: 'POST /api/v1/initiatives', path: '/api/v1/initiatives', body: initiative },
  { op: 'PUT /api/v1/initiatives/{cid}', path: `/api/v1/initiatives/${ids.initiative}`, body: initiative },
  { op: 'DELETE /api/v1/initiatives/{cid}', path: `/api/v1/initiatives/${ids.initiative}` },
  { op: 'GET /api/v1/catalog/definitions', path: '/api/v1/catalog/definitions' },
  { op: 'GET /api/v1/catalog/definitions/{type}', path: '/api/v1/catalog/definitions/queue' },
  { op: 'POST /api/v1/catalog/definitions', path: '/api/v1/catalog/definitions', body: { type: 'topic', schema: {} } },
  { op: 'PUT /api/v1/catalog/definitions/{type}', path: '/api/v1/catalog/definitions/topic', body: { schema: {} } },
  { op: 'DELETE /api/v1/catalog/definitions/{type}', path: '/api/v1/catalog/definitions/topic' },
  {
    op: 'GET /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}',
    path: '/api/v1/eng-intel/custom-metrics/latency/entity/svc',
  },
  {
    op: 'POST /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}',
    path: '/api/v1/eng-intel/custom-metrics/latency/entity/svc',
    body: { value: 1.5 },
  },
  {
    op: 'POST /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}/bulk',
    path: '/api/v1/eng-intel/custom-metrics/latency/entity/svc/bulk',
    body: { series: [{ timestamp: ids.now ?? '', value: 2 }] },
  },
  {
    op: 'DELETE /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}',
    path: '/api/v1/eng-intel/custom-metrics/latency/entity/svc?startDate=2000-01-01T00:00:00Z&endDate=2999-01-01T00:00:00Z',
  },
  { op: 'GET /api/v1/catalog-pages', path: '/api/v1/catalog-pages' },
  { op: 'POST /api/v1/catalog-pages', path: '/api/v1/catalog-pages', body: catalogPage },
  { op: 'GET /api/v1/catalog-pages/{slug}', path: '/api/v1/catalog-pages/data' },
  { op: 'DELETE /api/v1/catalog-pages/{slug}', path: '/api/v1/catalog-pages/data' },
  {
    op: 'POST /api/v1/custom-integrations/data/{webhookId}',
    path: `/api/v1/custom-integrations/data/${ids.webhook}`,
    body: { service: 'svc' },
    noKey: true,
  },
  { op: 'GET /api/v1/scorecards', path: '/api/v1/scorecards' },
  { op: 'GET /api/v1/scorecards/{tag}', path: '/api/v1/scorecards/production-readiness' },
  { op: 'GET /api/v1/scorecards/{tag}/descriptor', path: '/api/v1/scorecards/production-readiness/descriptor' },
  {
    op: 'POST /api/v1/scorecards/descriptor',
    path: '/api/v1/scorecards/descriptor',
    body: 'tag: ops\nname: Ops\nrules:\n  - expression: git != null\n',
    contentType: 'application/yaml;charset=UTF-8',
  },
  { op: 'DELETE /api/v1/scorecards/{tag}', path: '/api/v1/scorecards/ops' },
];

/** A workspace every operation has something to act on. */
const prepare = async (emu: RunningEmulator): Promise<Record<string, string>> => {
  const ok = async (method: string, path: string, body?: unknown, key?: null) => {
    const r = await call(emu, method, path, {
      ...(body !== undefined ? { body } : {}),
      ...(key === null ? { key } : {}),
    });
    expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
    return r;
  };
  await ok('POST', '/api/v1/catalog/definitions', { type: 'queue', schema: {} });
  for (const tag of ['svc', 'db', 'cache', 'old']) await ok('POST', '/api/v1/open-api', descriptor(tag));
  await ok('POST', '/api/v1/open-api', descriptor('jobs', { 'x-cortex-type': 'queue' }));
  await ok('POST', '/api/v1/catalog/svc/dependencies/db');
  await ok('PUT', '/api/v1/catalog/old/archive');
  await ok('POST', '/api/v1/scaffolders', scaffolder);
  const Id = z.looseObject({ cid: z.string() });
  const initiativeCid = bodyOf(await ok('POST', '/api/v1/initiatives', initiative), Id).cid;
  const deployUuid = bodyOf(
    await ok('POST', '/api/v1/catalog/svc/deploys', deploy),
    z.looseObject({ uuid: z.string() }),
  ).uuid;
  await ok('POST', '/api/v1/catalog-pages', catalogPage);
  await ok('POST', '/_emulator/scim/users', { id: 'u1', userName: 'jane@example.com', active: true }, null);
  await ok(
    'POST',
    '/_emulator/gitops-logs',
    {
      commit: 'abc',
      repository: { provider: 'GITHUB', repositoryName: 'acme/svc' },
      files: [{ fileName: 'cortex.yaml', entity: { tag: 'svc', name: 'svc', type: 'service', operation: 'CREATED' } }],
    },
    null,
  );
  const webhook = bodyOf(
    await ok('POST', '/_emulator/custom-integrations', { name: 'n', entityTagJq: '.service', key: 'k' }, null),
    z.looseObject({ id: z.string() }),
  ).id;
  const keyCid = bodyOf(
    await ok('POST', '/_emulator/api-keys', { roles: [{ type: 'DEFAULT', role: 'USER' }] }, null),
    Id,
  ).cid;
  return { initiative: initiativeCid, deploy: deployUuid, webhook, keyCid, now: new Date().toISOString() };
};

/** The readme's table: operation → status. */
const readmeTable = (): Map<string, number> => {
  const text = readFileSync(new URL('../readme.md', import.meta.url), 'utf8');
  const section = /<!-- operations:start -->([\s\S]*?)<!-- operations:end -->/.exec(text)?.[1] ?? '';
  const rows = new Map<string, number>();
  for (const line of section.split('\n')) {
    const m = /^\|[^|]*\|[^|]*\|\s*`([A-Z]+ [^`]+)`\s*\|\s*(\d{3})\s*\|/.exec(line);
    if (m?.[1] && m[2]) rows.set(m[1], Number(m[2]));
  }
  return rows;
};

describe("every operation of the vendor API's endpoint groups", () => {
  it('answers a minimal valid request with the status the readme table gives', async () => {
    const emu = await start();
    const ids = await prepare(emu);
    const table = readmeTable();
    const operations = OPERATIONS(ids);
    expect([...table.keys()]).toEqual(operations.map((o) => o.op));
    for (const o of operations) {
      const method = o.op.split(' ')[0] ?? 'GET';
      const r = await call(emu, method, o.path, {
        ...(o.body !== undefined ? { body: o.body } : {}),
        ...(o.contentType ? { contentType: o.contentType } : {}),
        ...(o.noKey ? { key: null } : {}),
      });
      expect(r.status, `${o.op}: ${r.text}`).toBe(table.get(o.op));
    }
  });
});
