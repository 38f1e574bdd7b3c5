/**
 * Entity writes against the emulator over real HTTP: full-replace upserts (a key removed from the
 * manifest disappears live), the ownership marker, unarchive/archive/delete, retries of the
 * idempotent upsert, and the API's violations turned into located diagnostics.
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type ApiClient, type ApiRequest, type ApiResponse, emptyClientStats } from '../../../src/api/types.js';
import { ApiError } from '../../../src/core/errors.js';
import type { Diagnostic } from '../../../src/core/model.js';
import { descriptorYaml, wireDescriptor } from '../../../src/kinds/entity/apply.js';
import { type EntityLive, entityKind } from '../../../src/kinds/entity/index.js';
import type { EntityDescriptor } from '../../../src/kinds/entity/schema.js';
import type { KindChange } from '../../../src/kinds/types.js';
import {
  applyContext,
  type DesiredEntity,
  entity,
  fetchContext,
  type Harness,
  type LiveEntity,
  liveById,
  SOURCE_ID,
  startHarness,
  removeChange,
  writeChange,
} from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.stop();
});

const readLive = async (desired: DesiredEntity): Promise<LiveEntity | undefined> =>
  liveById(await entityKind.live.fetch(fetchContext(h.client, [desired])), desired.id);

const storedDescriptor = (tag: string) => {
  const id = h.emulator.state.entities.idByTag[tag];
  return id === undefined ? undefined : h.emulator.state.entities.byId[id];
};

const applyOk = (change: KindChange<EntityDescriptor, EntityLive>, warnings?: Diagnostic[]) =>
  entityKind.write.apply(change, applyContext(h.client, warnings));

const full = `openapi: 3.0.1
info:
  title: Payments API
  x-cortex-tag: payments-api
  x-cortex-groups: [tier-0, lang-go]
  x-cortex-link:
    - {name: Runbook, type: runbook, url: https://wiki/run}
  x-cortex-custom-metadata:
    tier: 0
    cost-center: CC-12
`;
const trimmed = `openapi: 3.0.1
info:
  title: Payments API
  x-cortex-tag: payments-api
  x-cortex-custom-metadata:
    tier: 0
`;

describe('entity apply: create and update', () => {
  it('creates the entity with the ownership marker, and reads back in sync', async () => {
    const desired = entity(full);
    await applyOk(writeChange(desired));
    const live = await readLive(desired);
    expect(live?.owner).toBe(SOURCE_ID);
    expect(entityKind.live.canonical(live as LiveEntity)).toEqual(entityKind.manifest.canonical(desired));
    const post = h.emulator.requests.find((r) => r.method === 'POST');
    expect(post?.path).toBe('/api/v1/open-api');
  });

  it('removes live the keys removed from the manifest', async () => {
    const before = entity(full);
    await applyOk(writeChange(before));
    const after = entity(trimmed);
    const live = await readLive(after);
    expect(entityKind.live.canonical(live as LiveEntity)).not.toEqual(entityKind.manifest.canonical(after));

    await applyOk(writeChange(after, live));
    const updated = await readLive(after);
    const info = (updated?.state.descriptor?.info ?? {}) as Record<string, unknown>;
    expect(info['x-cortex-groups']).toBeUndefined();
    expect(info['x-cortex-link']).toBeUndefined();
    expect(info['x-cortex-custom-metadata']).toEqual({ tier: 0, 'cortex-sync': { source: SOURCE_ID } });
    expect(entityKind.live.canonical(updated as LiveEntity)).toEqual(entityKind.manifest.canonical(after));
  });

  it('keeps a protected flag a user set live when it updates the entity', async () => {
    const desired = entity(full);
    await applyOk(writeChange(desired));
    await h.client.request({
      operation: 'protect',
      method: 'PATCH',
      path: '/api/v1/open-api',
      contentType: 'application/openapi;charset=UTF-8',
      body: `info:\n  x-cortex-tag: payments-api\n  x-cortex-custom-metadata:\n    cortex-sync: {source: ${SOURCE_ID}, protected: true}\n`,
    });
    const live = await readLive(desired);
    expect(live?.protected).toBe(true);
    await applyOk(writeChange(entity(trimmed), live));
    expect(await readLive(desired)).toMatchObject({ owner: SOURCE_ID, protected: true });
  });

  it('writes legacy keys under their current names', async () => {
    const desired = entity(`openapi: 3.0.1
info:
  title: Mobile
  x-cortex-tag: mobile
  x-cortex-service-groups: [mobile]
  x-cortex-domain-parents: [{tag: apps}]
`);
    await applyOk(writeChange(desired));
    const info = storedDescriptor('mobile')?.descriptor.info as Record<string, unknown>;
    expect(info['x-cortex-groups']).toEqual(['mobile']);
    expect(info['x-cortex-parents']).toEqual([{ tag: 'apps' }]);
    expect(info['x-cortex-service-groups']).toBeUndefined();
    expect(entityKind.live.canonical((await readLive(desired)) as LiveEntity)).toEqual(
      entityKind.manifest.canonical(desired),
    );
  });

  it('retries the upsert after a lost response (it is idempotent) and ends with one entity', async () => {
    await h.stop();
    // With this seed the first two responses are lost (the writes are processed) and the third arrives.
    h = await startHarness({ faults: { lostResponseRate: 0.5 }, seed: 7 });
    const desired = entity(full);
    await applyOk(writeChange(desired));
    const posts = h.emulator.requests.filter((r) => r.method === 'POST');
    expect(posts[0]?.fault).toBe('lost-response');
    expect(posts.length).toBeGreaterThan(1);
    expect(Object.keys(h.emulator.state.entities.byId)).toHaveLength(1);
  });
});

describe('entity apply: archive, unarchive, delete', () => {
  it('archives, then unarchives before writing when the manifest comes back', async () => {
    const desired = entity(full);
    await applyOk(writeChange(desired));
    await applyOk(removeChange(desired.id, 'archive'));
    const archived = await readLive(desired);
    expect(archived?.archived).toBe(true);

    h.mark();
    const next = entity(trimmed);
    await applyOk(writeChange(next, archived, { unarchive: true }));
    expect(h.requestsSinceMark().map((r) => `${r.method} ${r.path}`)).toEqual([
      'PUT /api/v1/catalog/payments-api/unarchive',
      'POST /api/v1/open-api',
    ]);
    const live = await readLive(next);
    expect(live?.archived).toBeUndefined();
    expect(entityKind.live.canonical(live as LiveEntity)).toEqual(entityKind.manifest.canonical(next));
  });

  it('deletes, and a delete of an entity already gone succeeds', async () => {
    const desired = entity(full);
    await applyOk(writeChange(desired));
    const remove = removeChange(desired.id, 'delete');
    await applyOk(remove);
    expect(storedDescriptor(desired.id)).toBeUndefined();
    await expect(applyOk(remove)).resolves.toBeUndefined();
  });

  it('encodes tags in paths (npm-style tags with @ and /)', async () => {
    const desired = entity(
      `openapi: 3.0.1\ninfo:\n  title: Crowdstrike\n  x-cortex-tag: '@jupiterone/graph-crowdstrike'\n`,
    );
    await applyOk(writeChange(desired));
    await applyOk(removeChange(desired.id, 'archive'));
    expect(h.emulator.requests.at(-1)?.path).toBe('/api/v1/catalog/%40jupiterone%2Fgraph-crowdstrike/archive');
    expect((await readLive(desired))?.archived).toBe(true);
  });
});

describe('entity apply: the API refuses a descriptor', () => {
  const failureOf = async (change: KindChange<EntityDescriptor, EntityLive>): Promise<Error> => {
    try {
      await applyOk(change);
    } catch (error) {
      return error as Error;
    }
    throw new Error('the write was expected to fail');
  };

  it('locates each violation in the manifest', async () => {
    const desired = entity(
      `openapi: 3.0.1
info:
  title: Agent
  x-cortex-tag: agent-1
  x-cortex-type: ai-agent
  x-cortex-definition: {model: claude}
`,
      '.cortex/catalog/agent.yaml',
    );
    const change = writeChange(desired);
    const error = await failureOf(change);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    const diagnostics = entityKind.write.explainFailure?.(change, error) ?? [];
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      severity: 'error',
      code: 'api-violation',
      file: '.cortex/catalog/agent.yaml',
      line: 5,
      column: 3,
      field: 'info.x-cortex-type',
      kind: 'entity',
      id: 'agent-1',
    });
    expect(diagnostics[0]?.message).toContain("Entity type 'ai-agent' does not exist");
  });

  const apiError = (body: unknown): ApiError =>
    new ApiError('API', {
      operation: 'upsert entity',
      method: 'POST',
      path: '/api/v1/open-api',
      status: 400,
      body,
      attempts: 1,
      durationMs: 1,
    });

  const legacyManifest = `openapi: 3.0.1
info:
  title: Mobile
  x-cortex-tag: mobile
  x-cortex-domain-parents:
    - tag: apps
`;

  it('points at the legacy key the manifest wrote, and at the document start without a path', () => {
    const change = writeChange(entity(legacyManifest));
    const body = {
      ok: false,
      violations: [
        {
          title: 'Unknown parent',
          description: 'apps does not exist',
          violationType: 'MUST',
          pointer: '/info/x-cortex-parents/0',
        },
        { title: 'Broken', description: 'something', violationType: 'MUST' },
        { title: 'Style', description: 'prefer a description', violationType: 'SHOULD', paths: ['info.title'] },
      ],
    };
    const diagnostics = entityKind.write.explainFailure?.(change, apiError(body)) ?? [];
    expect(diagnostics.map((d) => [d.severity, d.line, d.field])).toEqual([
      ['error', 6, 'info.x-cortex-domain-parents[0]'],
      ['error', 1, undefined],
      ['warning', 3, 'info.title'],
    ]);
  });

  it('places a violation that only gives a line of the sent descriptor', () => {
    const change = writeChange(entity(legacyManifest));
    const sent = descriptorYaml(wireDescriptor(change.desired?.spec, { source: SOURCE_ID }));
    const line = sent.split('\n').findIndex((l) => l.includes('tag: apps')) + 1;
    const body = {
      ok: false,
      violations: [{ title: 'Unknown parent', description: 'no such entity', startLine: line }],
    };
    const [diagnostic] = entityKind.write.explainFailure?.(change, apiError(body)) ?? [];
    expect(diagnostic).toMatchObject({ line: 6, field: 'info.x-cortex-domain-parents[0].tag' });
  });

  it('has nothing to add for errors without violations', () => {
    const change = writeChange(entity(legacyManifest));
    expect(entityKind.write.explainFailure?.(change, apiError({ type: 'FORBIDDEN', message: 'no' }))).toEqual([]);
    expect(entityKind.write.explainFailure?.(change, new Error('socket hang up'))).toEqual([]);
  });
});

describe('entity apply: answers that are 200 but not plain success', () => {
  /** A port that answers every request with one fixed body (the emulator never sends warnings). */
  const answering = (body: unknown, sent: ApiRequest[]): ApiClient => ({
    request: async <T>(req: ApiRequest): Promise<ApiResponse<T>> => {
      sent.push(req);
      return { status: 200, headers: {}, body: body as T, attempts: 1, durationMs: 1 };
    },
    paginate: async () => [],
    close: async () => {},
    stats: emptyClientStats,
  });
  const desired = () => entity('openapi: 3.0.1\ninfo: {title: A, x-cortex-tag: a}\n');

  it('passes the API’s warnings on as warnings located in the manifest', async () => {
    const sent: ApiRequest[] = [];
    const warnings: Diagnostic[] = [];
    const client = answering(
      { ok: true, violations: [{ title: 'Missing owner', description: 'add owners', pointer: '/info' }] },
      sent,
    );
    await entityKind.write.apply(writeChange(desired()), applyContext(client, warnings));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ severity: 'warning', code: 'api-violation', line: 2, field: 'info' });
    expect(sent[0]).toMatchObject({
      method: 'POST',
      contentType: 'application/openapi;charset=UTF-8',
      idempotent: true,
    });
  });

  it('fails on a 200 that says ok: false', async () => {
    const client = answering({ ok: false, violations: [{ title: 'Bad', description: 'bad' }] }, []);
    await expect(entityKind.write.apply(writeChange(desired()), applyContext(client))).rejects.toBeInstanceOf(ApiError);
  });
});

describe('entity descriptor text', () => {
  it('quotes every string a YAML 1.1 reader would retype, so the API keeps strings', () => {
    const spec = {
      openapi: '3.0.1',
      info: {
        title: 'A',
        'x-cortex-tag': 'a',
        'x-cortex-custom-metadata': {
          flag: 'yes',
          on: 'off',
          generated: '2024-01-25T14:45:14.646626276',
          mode: '0777',
          n: 12,
        },
      },
    };
    const text = descriptorYaml(wireDescriptor(spec, { source: SOURCE_ID }));
    expect(parseYaml(text, { version: '1.1' })).toEqual(parseYaml(text));
    expect((parseYaml(text, { version: '1.1' }) as typeof spec).info['x-cortex-custom-metadata']).toEqual({
      ...spec.info['x-cortex-custom-metadata'],
      'cortex-sync': { source: SOURCE_ID },
    });
  });
});
