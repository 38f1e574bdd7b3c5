import { describe, expect, it } from 'vitest';
import { type ApiClient, emptyClientStats } from '../../../src/api/types.js';
import { deepEqual } from '../../../src/core/diff.js';
import type { LiveObject } from '../../../src/core/model.js';
import { catalogPageKind } from '../../../src/kinds/catalog-page/index.js';
import type { LiveCatalogPage } from '../../../src/kinds/catalog-page/schema.js';
import { parsedDoc } from '../entity-type/parsed-doc.js';

const FILE = '.cortex/catalog-pages/pipelines.yaml';
const PIPELINES = `slug: pipelines
name: Data Pipelines
iconTag: cortex
isDraft: false
filter:
  types: {include: [pipeline, service]}
  groups: {include: [data, etl]}
`;

describe('catalog-page parse', () => {
  it('turns a valid document into one object identified by slug', () => {
    const { objects, diagnostics } = catalogPageKind.parse(parsedDoc(PIPELINES, FILE));
    expect(diagnostics).toEqual([]);
    expect(objects.map((o) => [o.id, o.source])).toEqual([['pipelines', { file: FILE, line: 1, column: 1 }]]);
  });

  it('references the custom entity types the filter names, not the built-in ones', () => {
    const [page] = catalogPageKind.parse(parsedDoc(PIPELINES, FILE)).objects;
    expect(catalogPageKind.references(page!)).toEqual([
      {
        kind: 'entity-type',
        id: 'pipeline',
        field: 'filter.types.include[0]',
        path: ['filter', 'types', 'include', 0],
        ordering: true,
      },
    ]);
  });

  it('refuses include and exclude together for types, and fields that do not fit the type', () => {
    const both = catalogPageKind.parse(
      parsedDoc(`${PIPELINES.replace('{include: [pipeline, service]}', '{include: [a], exclude: [b]}')}`, FILE),
    );
    expect(both.diagnostics.map((d) => d.message).join('\n')).toMatch(/either include or exclude/);
    const domain = catalogPageKind.parse(parsedDoc(`${PIPELINES}type: DOMAIN\n`, FILE));
    expect(domain.diagnostics).toHaveLength(1);
    expect(domain.diagnostics[0]).toMatchObject({ field: 'filter', line: 5, kind: 'catalog-page', id: 'pipelines' });
    const rel = catalogPageKind.parse(
      parsedDoc('slug: r\nname: R\niconTag: i\nisDraft: true\ntype: RELATIONSHIP_TYPE\n', FILE),
    );
    expect(rel.diagnostics.map((d) => d.field)).toEqual(['relationshipTypeTag']);
  });

  it('requires name, iconTag and isDraft', () => {
    const { diagnostics } = catalogPageKind.parse(parsedDoc('slug: x\n', FILE));
    expect(diagnostics.map((d) => d.field).sort()).toEqual(['iconTag', 'isDraft', 'name']);
  });
});

describe('catalog-page comparable state', () => {
  const live = (page: LiveCatalogPage['page'], comparedIconTag?: string): LiveObject<LiveCatalogPage> => ({
    kind: 'catalog-page',
    id: page.slug,
    state: { page, ...(comparedIconTag ? { comparedIconTag } : {}) },
  });

  it('infers the type the server records, ignores timestamps and treats filter lists as sets', () => {
    const [desired] = catalogPageKind.parse(parsedDoc(PIPELINES, FILE)).objects;
    const server = live(
      {
        slug: 'pipelines',
        name: 'Data Pipelines',
        iconTag: 'cortex',
        isDraft: false,
        type: 'FILTER',
        filter: {
          types: { include: ['service', 'pipeline'] },
          groups: { include: ['etl', 'data'], exclude: null },
          query: null,
        },
        isCortexManaged: false,
        dateCreated: '2026-01-01T00:00:00Z',
        dateUpdated: '2026-02-01T00:00:00Z',
      },
      'cortex',
    );
    expect(catalogPageKind.liveState(server)).toEqual(catalogPageKind.desiredState(desired!));
  });

  it('sees a change of a filter', () => {
    const [desired] = catalogPageKind.parse(parsedDoc(PIPELINES, FILE)).objects;
    const server = live(
      {
        slug: 'pipelines',
        name: 'Data Pipelines',
        isDraft: false,
        type: 'FILTER',
        filter: { types: { include: ['service'] } },
      },
      'cortex',
    );
    expect(catalogPageKind.liveState(server)).not.toEqual(catalogPageKind.desiredState(desired!));
  });
});

describe('catalog-page icon normalisation', () => {
  /** A port stub answering the list with fixed pages (the kind's own read logic is what is tested). */
  const listing = (pages: unknown[]): ApiClient => ({
    request: async <T>() => ({
      status: 200,
      headers: {},
      body: { catalogPages: pages, page: 0, totalPages: 1 } as T,
      attempts: 1,
      durationMs: 0,
    }),
    paginate: async () => [],
    close: async () => {},
    stats: emptyClientStats,
  });

  it('does not report an icon the server replaced with its default, but does report another icon', async () => {
    const [desired] = catalogPageKind.parse(parsedDoc(PIPELINES, FILE)).objects;
    const served = (iconTag: string) => ({
      slug: 'pipelines',
      name: 'Data Pipelines',
      iconTag,
      isDraft: false,
      filter: { types: { include: ['pipeline', 'service'] }, groups: { include: ['data', 'etl'] } },
    });
    for (const [iconTag, same] of [
      ['Cortex-builtin::Box', true],
      ['Cortex-builtin::Other', false],
    ] as const) {
      const [live] = await catalogPageKind.fetchLive({
        client: listing([served(iconTag)]),
        entityTypes: [],
        desired: [desired!],
        managedIds: [],
      });
      expect(deepEqual(catalogPageKind.liveState(live!), catalogPageKind.desiredState(desired!))).toBe(same);
    }
  });

  it('refuses a list it cannot recognise rather than reading it as empty', async () => {
    const client: ApiClient = {
      request: async <T>() => ({
        status: 200,
        headers: {},
        body: { page: 0, totalPages: 1 } as T,
        attempts: 1,
        durationMs: 0,
      }),
      paginate: async () => [],
      close: async () => {},
      stats: emptyClientStats,
    };
    await expect(catalogPageKind.fetchLive({ client, entityTypes: [], desired: [], managedIds: [] })).rejects.toThrow(
      /no list of catalog pages/,
    );
  });
});
