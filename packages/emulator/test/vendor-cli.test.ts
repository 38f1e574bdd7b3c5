/**
 * What the vendor's CLI (cortexapps/cli) reads from a live tenant, asked of the emulator the way
 * that CLI asks: its tests `test_catalog_get_entity_details_hierarchy`, `test_catalog_include_metadata`,
 * `test_catalog_include_links` and `test_catalog_list_entity_descriptors_yaml`, with the CLI's own
 * data files (a service under a domain declared by `x-cortex-children` of its parent domains).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call, type Reply, start } from './helpers.js';

const descriptor = (tag: string, info: string) => `openapi: 3.0.1
info:
  title: ${tag}
  x-cortex-tag: ${tag}
${info}`;

const service = descriptor(
  'cli-test-service',
  `  x-cortex-type: service
  x-cortex-groups:
  - cli-test
  x-cortex-custom-metadata:
    cicd: circle-ci
  x-cortex-link:
  - {name: docs, type: documentation, url: https://example.com/docs}
`,
);
const domainChild = descriptor(
  'cli-test-domain-child',
  `  x-cortex-type: domain
  x-cortex-groups:
  - cli-test
  x-cortex-children:
  - tag: cli-test-service
`,
);
const domainParent = descriptor(
  'cli-test-domain-parent',
  `  x-cortex-type: domain
  x-cortex-groups:
  - cli-test
  - top
  x-cortex-children:
  - tag: cli-test-domain-child
`,
);

const startWithCliData = async () => {
  const emu = await start();
  for (const body of [service, domainChild, domainParent]) {
    expect((await call(emu, 'POST', '/api/v1/open-api', { body })).status).toBe(200);
  }
  return emu;
};

/** The CLI's requests carry `Content-Type: application/yaml` even on GETs and booleans as `True`. */
const get = (emu: { url: string; apiKey: string }, path: string): Promise<Reply> => call(emu, 'GET', path);

const Node: z.ZodType<{ tag: string; groups?: string[] | undefined; parents?: unknown[] | undefined }> = z.looseObject({
  tag: z.string(),
  groups: z.array(z.string()).optional(),
  parents: z.array(z.lazy(() => Node)).optional(),
});
const Details = z.looseObject({
  tag: z.string(),
  hierarchy: z.looseObject({ parents: z.array(Node), children: z.array(Node) }),
});

describe('the emulator answers what the vendor CLI reads from a live tenant', () => {
  it('catalog details -i groups: the nested parent chain, each node with its groups', async () => {
    const emu = await startWithCliData();
    const reply = await get(emu, '/api/v1/catalog/cli-test-service?hierarchyDepth=full&includeHierarchyFields=groups');
    expect(reply.status).toBe(200);
    const details = Details.parse(reply.json);
    expect(details.hierarchy.parents).toMatchObject([
      {
        tag: 'cli-test-domain-child',
        groups: ['cli-test'],
        parents: [{ tag: 'cli-test-domain-parent', groups: ['cli-test', 'top'], parents: [] }],
      },
    ]);

    // The chain down from the top, and depth 1 stops after one level; no groups unless asked.
    const top = Details.parse((await get(emu, '/api/v1/catalog/cli-test-domain-parent')).json);
    expect(top.hierarchy.children).toMatchObject([
      { tag: 'cli-test-domain-child', children: [{ tag: 'cli-test-service', children: [] }] },
    ]);
    expect(top.hierarchy.children[0]).not.toHaveProperty('groups');
    const shallow = Details.parse((await get(emu, '/api/v1/catalog/cli-test-service?hierarchyDepth=1')).json);
    expect(shallow.hierarchy.parents).toMatchObject([{ tag: 'cli-test-domain-child', parents: [] }]);
    expect((await get(emu, '/api/v1/catalog/cli-test-service?hierarchyDepth=deep')).status).toBe(400);
  });

  it('a parent named by x-cortex-parents and a cycle: each node once per path', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', {
      body: descriptor('a', '  x-cortex-type: domain\n  x-cortex-parents:\n  - tag: b\n'),
    });
    await call(emu, 'POST', '/api/v1/open-api', {
      body: descriptor('b', '  x-cortex-type: domain\n  x-cortex-parents:\n  - tag: a\n'),
    });
    const details = Details.parse((await get(emu, '/api/v1/catalog/a')).json);
    expect(details.hierarchy.parents).toMatchObject([{ tag: 'b', parents: [] }]);
  });

  it('catalog list -g: entities carry metadata: [] and links: [] unless -m / -l ask for them', async () => {
    const emu = await startWithCliData();
    const Entities = z.looseObject({
      total: z.number(),
      entities: z.array(
        z.looseObject({ tag: z.string(), metadata: z.array(z.unknown()), links: z.array(z.unknown()) }),
      ),
    });
    const plain = Entities.parse((await get(emu, '/api/v1/catalog?groups=cli-test&types=service&pageSize=250')).json);
    expect(plain.total).toBe(1);
    expect(plain.entities[0]).toMatchObject({ tag: 'cli-test-service', metadata: [], links: [] });
    const asked = Entities.parse(
      (await get(emu, '/api/v1/catalog?groups=cli-test&types=service&includeMetadata=True&includeLinks=True')).json,
    );
    expect(asked.entities[0]?.metadata).toEqual([{ key: 'cicd', value: 'circle-ci', source: 'YAML' }]);
    expect(asked.entities[0]?.links).toMatchObject([{ name: 'docs', url: 'https://example.com/docs' }]);
  });

  it('catalog list-descriptors -y: the items are descriptor objects', async () => {
    const emu = await startWithCliData();
    const reply = await get(emu, '/api/v1/catalog/descriptors?yaml=True&types=service&pageSize=250');
    const body = z
      .looseObject({ descriptors: z.array(z.looseObject({ info: z.looseObject({ 'x-cortex-tag': z.string() }) })) })
      .parse(reply.json);
    const [found] = body.descriptors.filter((d) => d.info['x-cortex-tag'] === 'cli-test-service');
    expect(found?.info['x-cortex-custom-metadata']).toEqual({ cicd: 'circle-ci' });
  });
});
