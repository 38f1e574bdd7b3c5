/**
 * Contract suite: every operation the emulator implements, called with a request that is valid
 * per the vendor OpenAPI, answers a body that validates against the vendor's response schema for
 * that status; invalid requests answer the vendor's error shape.
 *
 * Operations the vendor file has no schema for, and so are checked only for the error shape:
 * - catalog pages (`/api/v1/catalog-pages`) and Scaffolder templates (`/api/v1/scaffolders`):
 *   absent from the vendor file (it predates them);
 * - success statuses the vendor leaves undocumented (e.g. the 200 of `DELETE /initiatives/{cid}`,
 *   `DELETE /catalog/{tagOrId}`, `DELETE /catalog/definitions/{type}`, bulk dependency DELETE):
 *   the body must be empty.
 * One documented schema is known wrong and replaced here: `GET /catalog/{callerTag}/dependencies`
 * is typed as a single `DependencyResponse`, but the endpoint pages a `dependencies` list
 * (verified with the vendor CLI's tests).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type EmulatorState, type RunningEmulator, startEmulator } from '../src/server.js';
import { componentSchema, responseSchemaRef, schemaErrors, validatorFor, withoutNulls } from './contract-schemas.js';
import { ApiKeyRecord, Initiative, listOf, Scaffolder } from './bodies.js';
import { bodyOf, call, descriptor, type Reply } from './helpers.js';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const DESCRIPTOR_TYPE = 'application/openapi;charset=UTF-8';
const ERROR_RESPONSE = componentSchema('ErrorResponse');
const PAGED = 'page=0&pageSize=250';

interface Ids {
  initiativeCid: string;
  scaffolderId: string;
  apiKeyCid: string;
  deployUuid: string;
  webhookId: string;
}

/** How a case's response body is checked. */
type Check =
  | { kind: 'vendor' } // the vendor's schema for the operation and status
  | { kind: 'schema'; schema: string | object; why: string } // another schema (e.g. ErrorResponse)
  | { kind: 'empty'; why: string } // no body; the vendor documents none
  | { kind: 'unchecked'; why: string }; // a body the vendor file has no schema for

interface Case {
  /** Vendor path template (for the schema lookup) or, for operations absent from the file, a label. */
  op: string;
  path: (ids: Ids) => string;
  body?: unknown;
  contentType?: string;
  status: number;
  check?: Check;
}

const NO_SCHEMA = (what: string): Check => ({ kind: 'unchecked', why: `the vendor file has no ${what} schema` });
const VENDOR_ERROR: Check = { kind: 'schema', schema: ERROR_RESPONSE, why: 'vendor ErrorResponse' };
const UNDOCUMENTED_SUCCESS: Check = { kind: 'empty', why: 'the vendor documents no success body' };

const initiative = (overrides: Record<string, unknown> = {}) => ({
  name: 'Prod readiness',
  scorecardTag: 'production-readiness',
  targetDate: '2026-12-31',
  isDraft: false,
  emphasizedLevels: [{ rank: 1 }],
  emphasizedRules: [{ expression: 'git != null' }],
  filter: { types: { include: ['service'] } },
  notificationSchedule: { isDisabled: false, timeInterval: 1, timeUnit: 'WEEK', replyToEmails: ['a@b.c'] },
  ...overrides,
});
const catalogPage = { slug: 'pipelines', name: 'Pipelines', iconTag: 'cortex', isDraft: false, filter: {} };
const scaffolder = {
  tag: 'node-service',
  name: 'Node service',
  type: 'COOKIECUTTER',
  repoLocator: { type: 'GITHUB', org: 'acme', repoName: 'node-template' },
};
const depPath = '/api/v1/catalog/payments/dependencies/ledger?method=POST&path=%2Fv1%2Fentries';
// Object values: the vendor file types custom data values and deploy customData values as `object`
// (springdoc's rendering of Jackson's JsonNode / Map<String, Object>), though any JSON is sent.
const deployBody = {
  title: 'v1.2.0',
  type: 'DEPLOY',
  timestamp: '2026-05-30T10:00:00Z',
  sha: 'abc123',
  environment: 'prod',
  deployer: { email: 'dev@example.com', name: 'Dev' },
  customData: { build: { id: 7 } },
};
const gitopsLog = {
  commit: 'c0ffee',
  dateCreated: '2026-05-30T09:00:00Z',
  repository: { provider: 'GITHUB', repositoryName: 'acme/payments' },
  files: [
    {
      fileName: 'cortex.yaml',
      isPackageFile: false,
      entity: { tag: 'payments', name: 'P', type: 'service', operation: 'UPDATED' },
    },
  ],
};
const metrics = '/api/v1/eng-intel/custom-metrics/latency/entity/payments';
const UNCHECKED_DEPLOYS: Check = {
  kind: 'unchecked',
  why: 'the vendor types this bulk delete as one CustomDeploy; the emulator answers {deploys: [...]} as the other deletes',
};

const must = async (reply: Promise<Reply>): Promise<Reply> => {
  const r = await reply;
  if (r.status >= 300) throw new Error(`setup request failed: ${r.status} ${r.text}`);
  return r;
};

/** Fills a workspace with an entity type, three entities, a dependency, and one object of each other resource. */
const prepare = async (emu: RunningEmulator): Promise<Ids> => {
  await must(call(emu, 'POST', '/api/v1/catalog/definitions', { body: { type: 'pipeline', schema: {} } }));
  for (const [tag, info] of [
    ['payments', { description: 'Payments', 'x-cortex-groups': ['tier-0'] }],
    ['ledger', {}],
    ['nightly-etl', { 'x-cortex-type': 'pipeline', 'x-cortex-definition': {} }],
  ] as const) {
    await must(call(emu, 'POST', '/api/v1/open-api', { body: descriptor(tag, info), contentType: DESCRIPTOR_TYPE }));
  }
  const deps = {
    values: { payments: [{ tag: 'ledger', method: 'POST', path: '/v1/entries', description: 'writes' }] },
  };
  await must(call(emu, 'PUT', '/api/v1/catalog/dependencies', { body: deps }));
  const created = await must(call(emu, 'POST', '/api/v1/initiatives', { body: initiative() }));
  await must(call(emu, 'POST', '/api/v1/catalog-pages', { body: catalogPage }));
  const template = await must(call(emu, 'POST', '/api/v1/scaffolders', { body: scaffolder }));
  await must(
    call(emu, 'POST', '/api/v1/auth/key', { body: { name: 'ci', roles: [{ type: 'DEFAULT', role: 'READ_ONLY' }] } }),
  );
  // The create answer carries the key's value but no cid (the vendor's Create API key): the list has it.
  const keys = await must(call(emu, 'GET', '/api/v1/auth/key'));
  const apiKeyCid = bodyOf(keys, listOf('apiKeys', ApiKeyRecord)).apiKeys.find((k) => k.name === 'ci')?.cid;
  if (apiKeyCid === undefined) throw new Error(`setup: the created key is not listed: ${keys.text}`);
  const deploy = await must(call(emu, 'POST', '/api/v1/catalog/payments/deploys', { body: deployBody }));
  await must(call(emu, 'POST', '/api/v1/catalog/payments/custom-data', { body: { key: 'team', value: { n: 1 } } }));
  await must(call(emu, 'POST', '/api/v1/eng-intel/custom-metrics/latency/entity/payments', { body: { value: 2 } }));
  await must(call(emu, 'POST', '/_emulator/gitops-logs', { key: null, body: gitopsLog }));
  const hook = await must(
    call(emu, 'POST', '/_emulator/custom-integrations', {
      key: null,
      body: { name: 'deploys', entityTagJq: '.service', key: 'hooked' },
    }),
  );
  return {
    initiativeCid: bodyOf(created, Initiative).cid,
    scaffolderId: bodyOf(template, Scaffolder).id,
    apiKeyCid,
    deployUuid: bodyOf(deploy, z.looseObject({ uuid: z.string() })).uuid,
    webhookId: bodyOf(hook, z.looseObject({ id: z.string() })).id,
  };
};

const CASES: Case[] = [
  // Entities
  { op: 'POST /api/v1/open-api', path: () => '/api/v1/open-api', body: descriptor('orders'), status: 200 },
  { op: 'POST /api/v1/open-api', path: () => '/api/v1/open-api?dryRun=true', body: descriptor('x'), status: 200 },
  {
    op: 'POST /api/v1/open-api',
    path: () => '/api/v1/open-api',
    body: 'openapi: 3.0.1\ninfo: {title: T}',
    status: 400,
  },
  { op: 'PATCH /api/v1/open-api', path: () => '/api/v1/open-api', body: descriptor('payments'), status: 200 },
  { op: 'PATCH /api/v1/open-api', path: () => '/api/v1/open-api', body: descriptor('brand-new'), status: 201 },
  { op: 'PATCH /api/v1/open-api', path: () => '/api/v1/open-api', body: 'info: [', status: 400 },
  { op: 'GET /api/v1/catalog', path: () => `/api/v1/catalog?${PAGED}`, status: 200 },
  { op: 'GET /api/v1/catalog', path: () => '/api/v1/catalog?page=0&pageSize=5000', status: 400 },
  { op: 'GET /api/v1/catalog/descriptors', path: () => `/api/v1/catalog/descriptors?${PAGED}`, status: 200 },
  { op: 'GET /api/v1/catalog/descriptors', path: () => `/api/v1/catalog/descriptors?yaml=true&${PAGED}`, status: 200 },
  { op: 'GET /api/v1/catalog/{tagOrId}', path: () => '/api/v1/catalog/payments', status: 200 },
  { op: 'GET /api/v1/catalog/{tagOrId}', path: () => '/api/v1/catalog/nope', status: 404 },
  { op: 'GET /api/v1/catalog/{tagOrId}/openapi', path: () => '/api/v1/catalog/payments/openapi', status: 200 },
  { op: 'GET /api/v1/catalog/{tagOrId}/openapi', path: () => '/api/v1/catalog/nope/openapi', status: 404 },
  { op: 'PUT /api/v1/catalog/{tagOrId}/archive', path: () => '/api/v1/catalog/ledger/archive', status: 200 },
  { op: 'PUT /api/v1/catalog/{tagOrId}/archive', path: () => '/api/v1/catalog/nope/archive', status: 404 },
  { op: 'PUT /api/v1/catalog/{tagOrId}/unarchive', path: () => '/api/v1/catalog/ledger/unarchive', status: 200 },
  {
    op: 'DELETE /api/v1/catalog/{tagOrId}',
    path: () => '/api/v1/catalog/ledger',
    status: 200,
    check: UNDOCUMENTED_SUCCESS,
  },
  { op: 'DELETE /api/v1/catalog/{tagOrId}', path: () => '/api/v1/catalog/nope', status: 404 },
  // Entity types
  { op: 'GET /api/v1/catalog/definitions', path: () => `/api/v1/catalog/definitions?${PAGED}`, status: 200 },
  { op: 'GET /api/v1/catalog/definitions/{type}', path: () => '/api/v1/catalog/definitions/pipeline', status: 200 },
  { op: 'GET /api/v1/catalog/definitions/{type}', path: () => '/api/v1/catalog/definitions/nope', status: 404 },
  {
    op: 'POST /api/v1/catalog/definitions',
    path: () => '/api/v1/catalog/definitions',
    body: { type: 'queue', name: 'Queue', description: 'Message queues', schema: { type: 'object' } },
    status: 200,
  },
  {
    op: 'POST /api/v1/catalog/definitions',
    path: () => '/api/v1/catalog/definitions',
    body: { type: 'q' },
    status: 400,
  },
  {
    op: 'PUT /api/v1/catalog/definitions/{type}',
    path: () => '/api/v1/catalog/definitions/pipeline',
    body: { name: 'Pipeline', schema: {} },
    status: 200,
  },
  {
    op: 'PUT /api/v1/catalog/definitions/{type}',
    path: () => '/api/v1/catalog/definitions/pipeline',
    body: { name: 'No schema' },
    status: 400,
  },
  {
    op: 'PUT /api/v1/catalog/definitions/{type}',
    path: () => '/api/v1/catalog/definitions/nope',
    body: { schema: {} },
    status: 404,
  },
  { op: 'DELETE /api/v1/catalog/definitions/{type}', path: () => '/api/v1/catalog/definitions/nope', status: 404 },
  // Dependencies
  {
    op: 'PUT /api/v1/catalog/dependencies',
    path: () => '/api/v1/catalog/dependencies',
    body: { values: { payments: [{ tag: 'nightly-etl', method: 'GET', path: '/runs', metadata: { prod: true } }] } },
    status: 200,
  },
  { op: 'PUT /api/v1/catalog/dependencies', path: () => '/api/v1/catalog/dependencies', body: {}, status: 400 },
  {
    op: 'DELETE /api/v1/catalog/dependencies',
    path: () => '/api/v1/catalog/dependencies',
    body: { values: { payments: [{ tag: 'ledger', method: 'POST', path: '/v1/entries' }] } },
    status: 204,
    check: UNDOCUMENTED_SUCCESS,
  },
  {
    op: 'GET /api/v1/catalog/{callerTag}/dependencies',
    path: () => `/api/v1/catalog/payments/dependencies?${PAGED}`,
    status: 200,
    check: {
      kind: 'schema',
      why: 'the vendor types this list as one DependencyResponse; it is a paged `dependencies` list',
      schema: {
        type: 'object',
        required: ['dependencies', 'page', 'total', 'totalPages'],
        properties: {
          dependencies: { type: 'array', items: { $ref: componentSchema('DependencyResponse') } },
          page: { type: 'integer' },
          total: { type: 'integer' },
          totalPages: { type: 'integer' },
        },
      },
    },
  },
  { op: 'GET /api/v1/catalog/{callerTag}/dependencies/{calleeTag}', path: () => depPath, status: 200 },
  {
    op: 'GET /api/v1/catalog/{callerTag}/dependencies/{calleeTag}',
    path: () => '/api/v1/catalog/payments/dependencies/nightly-etl',
    status: 404,
  },
  {
    op: 'POST /api/v1/catalog/{callerTag}/dependencies/{calleeTag}',
    path: () => '/api/v1/catalog/payments/dependencies/nightly-etl',
    body: { description: 'triggers', metadata: { async: true } },
    status: 201,
  },
  {
    op: 'POST /api/v1/catalog/{callerTag}/dependencies/{calleeTag}',
    path: () => '/api/v1/catalog/payments/dependencies/nightly-etl',
    body: '{"description": ',
    contentType: 'application/json',
    status: 400,
  },
  {
    op: 'PUT /api/v1/catalog/{callerTag}/dependencies/{calleeTag}',
    path: () => depPath,
    body: { description: 'writes rows', metadata: {} },
    status: 200,
  },
  {
    op: 'PUT /api/v1/catalog/{callerTag}/dependencies/{calleeTag}',
    path: () => depPath,
    body: { description: 'no metadata' },
    status: 400,
  },
  { op: 'DELETE /api/v1/catalog/{callerTag}/dependencies/{calleeTag}', path: () => depPath, status: 204 },
  {
    op: 'DELETE /api/v1/catalog/{callerTag}/dependencies',
    path: () => '/api/v1/catalog/payments/dependencies',
    status: 204,
  },
  // Initiatives
  { op: 'GET /api/v1/initiatives', path: () => '/api/v1/initiatives?includeDrafts=true&page=0', status: 200 },
  { op: 'GET /api/v1/initiatives/{cid}', path: (ids) => `/api/v1/initiatives/${ids.initiativeCid}`, status: 200 },
  { op: 'GET /api/v1/initiatives/{cid}', path: () => '/api/v1/initiatives/in0000000000000000', status: 404 },
  { op: 'POST /api/v1/initiatives', path: () => '/api/v1/initiatives', body: initiative({ name: 'Two' }), status: 200 },
  {
    op: 'POST /api/v1/initiatives',
    path: () => '/api/v1/initiatives',
    body: initiative({ emphasizedRules: undefined }),
    status: 400,
  },
  {
    op: 'PUT /api/v1/initiatives/{cid}',
    path: (ids) => `/api/v1/initiatives/${ids.initiativeCid}`,
    body: initiative({ isDraft: true, filter: undefined }),
    status: 200,
  },
  {
    op: 'PUT /api/v1/initiatives/{cid}',
    path: (ids) => `/api/v1/initiatives/${ids.initiativeCid}`,
    body: initiative({ targetDate: '2020-01-01' }),
    status: 400,
  },
  {
    op: 'PUT /api/v1/initiatives/{cid}',
    path: () => '/api/v1/initiatives/in0000000000000000',
    body: initiative(),
    status: 404,
  },
  {
    op: 'DELETE /api/v1/initiatives/{cid}',
    path: (ids) => `/api/v1/initiatives/${ids.initiativeCid}`,
    status: 200,
    check: UNDOCUMENTED_SUCCESS,
  },
  { op: 'DELETE /api/v1/initiatives/{cid}', path: () => '/api/v1/initiatives/in0000000000000000', status: 404 },
  // Scorecards
  { op: 'GET /api/v1/scorecards', path: () => `/api/v1/scorecards?${PAGED}`, status: 200 },
  { op: 'GET /api/v1/scorecards/{tag}', path: () => '/api/v1/scorecards/production-readiness', status: 200 },
  { op: 'GET /api/v1/scorecards/{tag}', path: () => '/api/v1/scorecards/nope', status: 404 },
  {
    op: 'POST /api/v1/scorecards/descriptor',
    path: () => '/api/v1/scorecards/descriptor',
    body: 'tag: contract-sc\nname: Contract\nladder:\n  levels:\n  - {name: One, rank: 1}\nrules:\n- {expression: git != null, level: One}\n',
    contentType: 'application/yaml;charset=UTF-8',
    status: 200,
  },
  {
    op: 'POST /api/v1/scorecards/descriptor',
    path: () => '/api/v1/scorecards/descriptor',
    body: 'name: no tag\n',
    contentType: 'application/yaml;charset=UTF-8',
    status: 400,
  },
  {
    // The filter the vendor's own notes say 400s with "Invalid scorecard yaml" and no detail.
    op: 'POST /api/v1/scorecards/descriptor',
    path: () => '/api/v1/scorecards/descriptor',
    body: 'tag: contract-sc\nname: Contract\nfilter: {entityType: service}\n',
    contentType: 'application/yaml;charset=UTF-8',
    status: 400,
  },
  {
    op: 'GET /api/v1/scorecards/{tag}/descriptor',
    path: () => '/api/v1/scorecards/production-readiness/descriptor',
    status: 200,
  },
  { op: 'GET /api/v1/scorecards/{tag}/descriptor', path: () => '/api/v1/scorecards/nope/descriptor', status: 404 },
  {
    op: 'DELETE /api/v1/scorecards/{tag}',
    path: () => '/api/v1/scorecards/security-baseline',
    status: 200,
    check: UNDOCUMENTED_SUCCESS,
  },
  { op: 'DELETE /api/v1/scorecards/{tag}', path: () => '/api/v1/scorecards/contract-sc', status: 404 },
  // API keys
  { op: 'GET /api/v1/auth/key', path: () => '/api/v1/auth/key', status: 200 },
  { op: 'GET /api/v1/auth/key/{cid}', path: (ids) => `/api/v1/auth/key/${ids.apiKeyCid}`, status: 200 },
  { op: 'GET /api/v1/auth/key/{cid}', path: () => '/api/v1/auth/key/ak0000000000000000', status: 404 },
  {
    op: 'POST /api/v1/auth/key',
    path: () => '/api/v1/auth/key',
    body: { name: 'bot', description: 'x', roles: [{ type: 'CUSTOM', tag: 'EDIT_ENTITIES' }] },
    status: 200,
  },
  { op: 'POST /api/v1/auth/key', path: () => '/api/v1/auth/key', body: { roles: [] }, status: 400 },
  {
    op: 'PUT /api/v1/auth/key/{cid}',
    path: (ids) => `/api/v1/auth/key/${ids.apiKeyCid}`,
    body: { name: 'ci-2', description: 'renamed' },
    status: 200,
  },
  {
    op: 'PUT /api/v1/auth/key/{cid}',
    path: (ids) => `/api/v1/auth/key/${ids.apiKeyCid}`,
    body: {},
    status: 400,
  },
  {
    op: 'DELETE /api/v1/auth/key/{cid}',
    path: (ids) => `/api/v1/auth/key/${ids.apiKeyCid}`,
    status: 204,
    check: UNDOCUMENTED_SUCCESS,
  },
  // Catalog pages: absent from the vendor file.
  {
    op: 'GET /api/v1/catalog-pages',
    path: () => '/api/v1/catalog-pages',
    status: 200,
    check: NO_SCHEMA('catalog-page'),
  },
  {
    op: 'GET /api/v1/catalog-pages/{slug}',
    path: () => '/api/v1/catalog-pages/pipelines',
    status: 200,
    check: NO_SCHEMA('catalog-page'),
  },
  {
    op: 'GET /api/v1/catalog-pages/{slug}',
    path: () => '/api/v1/catalog-pages/nope',
    status: 404,
    check: VENDOR_ERROR,
  },
  {
    op: 'POST /api/v1/catalog-pages',
    path: () => '/api/v1/catalog-pages',
    body: { ...catalogPage, name: 'Renamed' },
    status: 200,
    check: NO_SCHEMA('catalog-page'),
  },
  {
    op: 'POST /api/v1/catalog-pages',
    path: () => '/api/v1/catalog-pages',
    body: { slug: 'x', name: 'X' },
    status: 400,
    check: VENDOR_ERROR,
  },
  {
    op: 'POST /api/v1/catalog-pages',
    path: () => '/api/v1/catalog-pages',
    body: { ...catalogPage, slug: 'services' },
    status: 403,
    check: VENDOR_ERROR,
  },
  {
    op: 'DELETE /api/v1/catalog-pages/{slug}',
    path: () => '/api/v1/catalog-pages/pipelines',
    status: 200,
    check: UNDOCUMENTED_SUCCESS,
  },
  // Scaffolder templates: absent from the vendor file.
  { op: 'GET /api/v1/scaffolders', path: () => '/api/v1/scaffolders', status: 200, check: NO_SCHEMA('scaffolder') },
  {
    op: 'GET /api/v1/scaffolders/{tagOrId}',
    path: (ids) => `/api/v1/scaffolders/${ids.scaffolderId}`,
    status: 200,
    check: NO_SCHEMA('scaffolder'),
  },
  {
    op: 'POST /api/v1/scaffolders',
    path: () => '/api/v1/scaffolders',
    body: { ...scaffolder, labels: ['node'] },
    status: 200,
    check: NO_SCHEMA('scaffolder'),
  },
  {
    op: 'POST /api/v1/scaffolders',
    path: () => '/api/v1/scaffolders',
    body: { ...scaffolder, tag: 'Bad_Tag' },
    status: 400,
    check: VENDOR_ERROR,
  },
  {
    op: 'PUT /api/v1/scaffolders/{tagOrId}',
    path: () => '/api/v1/scaffolders/missing',
    body: scaffolder,
    status: 404,
    check: VENDOR_ERROR,
  },
  {
    op: 'PUT /api/v1/scaffolders/{tagOrId}',
    path: () => '/api/v1/scaffolders/node-service',
    body: { ...scaffolder, tag: 'node-service-v2' },
    status: 200,
    check: NO_SCHEMA('scaffolder'),
  },
  {
    op: 'DELETE /api/v1/scaffolders/{tagOrId}',
    path: () => '/api/v1/scaffolders/node-service',
    status: 200,
    check: UNDOCUMENTED_SUCCESS,
  },
  // Custom data
  {
    op: 'GET /api/v1/catalog/{tagOrId}/custom-data',
    path: () => `/api/v1/catalog/payments/custom-data?${PAGED}`,
    status: 200,
  },
  { op: 'GET /api/v1/catalog/{tagOrId}/custom-data', path: () => '/api/v1/catalog/nope/custom-data', status: 404 },
  {
    op: 'POST /api/v1/catalog/{tagOrId}/custom-data',
    path: () => '/api/v1/catalog/payments/custom-data',
    body: { key: 'owner', value: { team: 'payments' }, description: 'who' },
    status: 200,
  },
  {
    op: 'POST /api/v1/catalog/{tagOrId}/custom-data',
    path: () => '/api/v1/catalog/payments/custom-data',
    body: { value: {} },
    status: 400,
  },
  {
    op: 'GET /api/v1/catalog/{tagOrId}/custom-data/{key}',
    path: () => '/api/v1/catalog/payments/custom-data/team',
    status: 200,
  },
  {
    op: 'GET /api/v1/catalog/{tagOrId}/custom-data/{key}',
    path: () => '/api/v1/catalog/payments/custom-data/none',
    status: 404,
  },
  {
    op: 'DELETE /api/v1/catalog/{tagOrId}/custom-data',
    path: () => '/api/v1/catalog/payments/custom-data?key=team',
    status: 200,
    check: UNDOCUMENTED_SUCCESS,
  },
  { op: 'GET /api/v1/catalog/custom-data', path: () => '/api/v1/catalog/custom-data?tag=payments', status: 200 },
  {
    op: 'PUT /api/v1/catalog/custom-data',
    path: () => '/api/v1/catalog/custom-data',
    body: { values: { payments: [{ key: 'a', value: { x: 1 } }], ghost: [{ key: 'b', value: {} }] } },
    status: 200,
  },
  {
    op: 'PUT /api/v1/catalog/custom-data',
    path: () => '/api/v1/catalog/custom-data',
    body: { values: [] },
    status: 400,
  },
  // Deploys
  { op: 'GET /api/v1/catalog/{tagOrId}/deploys', path: () => `/api/v1/catalog/payments/deploys?${PAGED}`, status: 200 },
  {
    op: 'POST /api/v1/catalog/{tagOrId}/deploys',
    path: () => '/api/v1/catalog/payments/deploys',
    body: deployBody,
    status: 200,
  },
  {
    op: 'POST /api/v1/catalog/{tagOrId}/deploys',
    path: () => '/api/v1/catalog/nope/deploys',
    body: deployBody,
    status: 404,
  },
  {
    op: 'PUT /api/v1/catalog/{tagOrId}/deploys/{uuid}',
    path: (ids) => `/api/v1/catalog/payments/deploys/${ids.deployUuid}`,
    body: { ...deployBody, sha: 'def456' },
    status: 200,
  },
  {
    op: 'DELETE /api/v1/catalog/{tagOrId}/deploys/{uuid}',
    path: (ids) => `/api/v1/catalog/payments/deploys/${ids.deployUuid}`,
    status: 200,
  },
  {
    op: 'DELETE /api/v1/catalog/{tagOrId}/deploys/{uuid}',
    path: () => '/api/v1/catalog/payments/deploys/00000000-0000-4000-8000-000000000000',
    status: 404,
  },
  {
    op: 'DELETE /api/v1/catalog/{tagOrId}/deploys',
    path: () => '/api/v1/catalog/payments/deploys?sha=abc123',
    status: 200,
    check: UNCHECKED_DEPLOYS,
  },
  { op: 'DELETE /api/v1/catalog/deploys', path: () => '/api/v1/catalog/deploys?environment=prod', status: 200 },
  { op: 'DELETE /api/v1/catalog/deploys', path: () => '/api/v1/catalog/deploys?type=LAUNCH', status: 400 },
  { op: 'DELETE /api/v1/catalog/deploys/all', path: () => '/api/v1/catalog/deploys/all', status: 200 },
  // Custom metrics
  {
    op: 'GET /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}',
    path: () => `${metrics}?${PAGED}`,
    status: 200,
  },
  {
    op: 'POST /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}',
    path: () => metrics,
    body: { value: 3.5, timestamp: '2026-05-31T00:00:00Z' },
    status: 200,
    check: UNDOCUMENTED_SUCCESS,
  },
  {
    op: 'POST /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}',
    path: () => metrics,
    body: {},
    status: 400,
  },
  {
    op: 'POST /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}/bulk',
    path: () => `${metrics}/bulk`,
    body: { series: [{ timestamp: '2026-05-31T00:00:00Z', value: 1 }] },
    status: 200,
    check: UNDOCUMENTED_SUCCESS,
  },
  {
    op: 'DELETE /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}',
    path: () => `${metrics}?startDate=2026-01-01T00:00:00Z&endDate=2026-12-31T00:00:00Z`,
    status: 204,
  },
  {
    op: 'DELETE /api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}',
    path: () => metrics,
    status: 400,
  },
  // GitOps logs
  { op: 'GET /api/v1/gitops-logs', path: () => `/api/v1/gitops-logs?${PAGED}`, status: 200 },
  { op: 'GET /api/v1/catalog/{tagOrId}/gitops-logs', path: () => '/api/v1/catalog/payments/gitops-logs', status: 200 },
  { op: 'GET /api/v1/catalog/{tagOrId}/gitops-logs', path: () => '/api/v1/catalog/ledger/gitops-logs', status: 404 },
  // Scorecard scores and the inbound webhook
  { op: 'GET /api/v1/catalog/{tagOrId}/scorecards', path: () => '/api/v1/catalog/payments/scorecards', status: 200 },
  {
    op: 'POST /api/v1/custom-integrations/data/{uuid}',
    path: (ids) => `/api/v1/custom-integrations/data/${ids.webhookId}`,
    body: { service: 'payments' },
    status: 200,
    check: UNDOCUMENTED_SUCCESS,
  },
];

/** Checks a reply's body against a case's expectation; returns the problems. */
const problemsOf = (c: Case, reply: Reply): string[] => {
  const [method = '', template = ''] = c.op.split(' ');
  const check = c.check ?? { kind: 'vendor' };
  if (check.kind === 'empty')
    return reply.text === '' ? [] : [`expected an empty body (${check.why}), got ${reply.text}`];
  if (check.kind === 'unchecked') return reply.json === undefined ? ['expected a JSON body'] : [];
  if (c.status === 204) return reply.text === '' ? [] : [`204 with a body: ${reply.text}`];
  const schema = check.kind === 'schema' ? check.schema : responseSchemaRef(method, template, c.status);
  if (schema === undefined) return [`the vendor documents no ${c.status} body for ${c.op}: annotate the case`];
  const body = reply.json === undefined && reply.text !== '' ? reply.text : reply.json;
  return schemaErrors(validatorFor(schema), withoutNulls(body));
};

describe('emulator contract with the vendor OpenAPI', () => {
  // One emulator, its prepared state restored before each case (fewer requests than a fresh setup).
  let emu: RunningEmulator;
  let ids: Ids;
  let prepared: EmulatorState;
  beforeAll(async () => {
    emu = await startEmulator({ now: () => T0, rateLimitPerMinute: 0 });
    ids = await prepare(emu);
    prepared = structuredClone(emu.state);
  });
  beforeEach(() => {
    Object.assign(emu.state, structuredClone(prepared));
    emu.setFaults({});
  });
  afterAll(async () => {
    await emu?.stop();
  });

  const run = async (c: Case): Promise<void> => {
    const [method = ''] = c.op.split(' ');
    const contentType = typeof c.body === 'string' ? (c.contentType ?? DESCRIPTOR_TYPE) : c.contentType;
    const reply = await call(emu, method, c.path(ids), { body: c.body, contentType });
    expect(reply.status, reply.text).toBe(c.status);
    expect(problemsOf(c, reply), reply.text).toEqual([]);
  };
  const title = (c: Case): string => `${c.op} → ${c.status} (${c.path(PLACEHOLDER_IDS)})`;

  it.each(CASES.map((c) => [title(c), c] as const))('%s', (_, c) => run(c));

  it('answers 429 with the vendor problem+json body and Retry-After', async () => {
    emu.setFaults({ every429: 1, retryAfterSeconds: 3 });
    const reply = await call(emu, 'GET', '/api/v1/initiatives');
    expect(reply.status).toBe(429);
    expect(reply.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(reply.headers.get('retry-after')).toBe('3');
    const schema = responseSchemaRef('GET', '/api/v1/initiatives', 429);
    expect(schema).toBeDefined();
    expect(schemaErrors(validatorFor(schema ?? ''), reply.json)).toEqual([]);
  });

  it('answers a scorecard write during an evaluation with a 5xx in the vendor ErrorResponse shape', async () => {
    const control = await call(emu, 'POST', '/_emulator/scorecard-evaluations', {
      body: { tag: 'production-readiness', failWrites: 1 },
      key: null,
    });
    expect(control.status).toBe(200);
    const reply = await call(emu, 'DELETE', '/api/v1/scorecards/production-readiness');
    expect(reply.status).toBe(500);
    expect(schemaErrors(validatorFor(ERROR_RESPONSE), reply.json)).toEqual([]);
    expect((await call(emu, 'DELETE', '/api/v1/scorecards/production-readiness')).status).toBe(200);
  });

  it('answers 403 for a missing permission in the vendor ErrorResponse shape', async () => {
    emu.addApiKey({ value: 'viewer', permissions: ['VIEW_INITIATIVES'] });
    const reply = await call(emu, 'POST', '/api/v1/initiatives', { body: initiative(), key: 'viewer' });
    expect(reply.status).toBe(403);
    expect(schemaErrors(validatorFor(ERROR_RESPONSE), reply.json)).toEqual([]);
  });
});

const PLACEHOLDER_IDS: Ids = {
  initiativeCid: '{cid}',
  scaffolderId: '{id}',
  apiKeyCid: '{cid}',
  deployUuid: '{uuid}',
  webhookId: '{uuid}',
};
