import { describe, expect, it } from 'vitest';
import { type ApiClient, emptyClientStats } from '../../../src/api/types.js';
import { deepEqual } from '../../../src/core/diff.js';
import type { LiveObject } from '../../../src/core/model.js';
import { catalogPageKind } from '../../../src/kinds/catalog-page/index.js';
import type { LiveCatalogPage } from '../../../src/kinds/catalog-page/schema.js';
import { parsedDoc } from '../entity-type/parsed-doc.js';
import { AT } from '../parse-context.js';

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
    const { objects, diagnostics } = catalogPageKind.manifest.parse(parsedDoc(PIPELINES, FILE), AT);
    // `cortex` is no built-in icon: Cortex may replace it, so it is not compared, and validate says so.
    expect(diagnostics.map((d) => [d.severity, d.code, d.line, d.field])).toEqual([
      ['warning', 'icon-not-kept', 3, 'iconTag'],
    ]);
    expect(objects.map((o) => [o.id, o.source])).toEqual([['pipelines', { file: FILE, line: 1, column: 1 }]]);
  });

  it('references the custom entity types the filter names, not the built-in ones', () => {
    const [page] = catalogPageKind.manifest.parse(parsedDoc(PIPELINES, FILE), AT).objects;
    expect(catalogPageKind.manifest.references(page!)).toEqual([
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
    const both = catalogPageKind.manifest.parse(
      parsedDoc(`${PIPELINES.replace('{include: [pipeline, service]}', '{include: [a], exclude: [b]}')}`, FILE),
      AT,
    );
    expect(both.diagnostics.map((d) => d.message).join('\n')).toMatch(/either include or exclude/);
    const domain = catalogPageKind.manifest.parse(parsedDoc(`${PIPELINES}type: DOMAIN\n`, FILE), AT);
    expect(domain.diagnostics).toHaveLength(1);
    expect(domain.diagnostics[0]).toMatchObject({ field: 'filter', line: 5, kind: 'catalog-page', id: 'pipelines' });
    const rel = catalogPageKind.manifest.parse(
      parsedDoc('slug: r\nname: R\niconTag: i\nisDraft: true\ntype: RELATIONSHIP_TYPE\n', FILE),
      AT,
    );
    expect(rel.diagnostics.map((d) => d.field)).toEqual(['relationshipTypeTag']);
  });

  it('requires name, iconTag and isDraft', () => {
    const { diagnostics } = catalogPageKind.manifest.parse(parsedDoc('slug: x\n', FILE), AT);
    expect(diagnostics.map((d) => d.field).sort()).toEqual(['iconTag', 'isDraft', 'name']);
  });
});

describe('catalog-page comparable state', () => {
  const live = (page: LiveCatalogPage['page']): LiveObject<LiveCatalogPage> => ({
    kind: 'catalog-page',
    id: page.slug,
    state: { page },
  });

  it('compares a type only when the manifest states one, ignores timestamps and treats filter lists as sets', () => {
    const [desired] = catalogPageKind.manifest.parse(parsedDoc(PIPELINES, FILE), AT).objects;
    const server = live({
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
    });
    expect(catalogPageKind.live.canonical(server, desired)).toEqual(catalogPageKind.manifest.canonical(desired!));
  });

  it('sees a change of a filter', () => {
    const [desired] = catalogPageKind.manifest.parse(parsedDoc(PIPELINES, FILE), AT).objects;
    const server = live({
      slug: 'pipelines',
      name: 'Data Pipelines',
      isDraft: false,
      type: 'FILTER',
      filter: { types: { include: ['service'] } },
    });
    expect(catalogPageKind.live.canonical(server, desired)).not.toEqual(catalogPageKind.manifest.canonical(desired!));
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

  const compare = async (declaredIcon: string, servedIcon: string): Promise<boolean> => {
    const text = PIPELINES.replace('iconTag: cortex', `iconTag: ${declaredIcon}`);
    const [desired] = catalogPageKind.manifest.parse(parsedDoc(text, FILE), AT).objects;
    const served = {
      slug: 'pipelines',
      name: 'Data Pipelines',
      iconTag: servedIcon,
      isDraft: false,
      type: 'FILTER',
      filter: { types: { include: ['pipeline', 'service'] }, groups: { include: ['data', 'etl'] } },
    };
    const [live] = await catalogPageKind.live.fetch({
      client: listing([served]),
      desired: [desired!],
      managedIds: [],
      readBefore: [],
    });
    return deepEqual(catalogPageKind.live.canonical(live!, desired), catalogPageKind.manifest.canonical(desired!));
  };

  it('accepts whatever icon the server shows in place of a declared icon that is not built in', async () => {
    for (const served of ['Cortex-builtin::Box', 'Cortex-builtin::Catalog', 'cortex', ''])
      expect(await compare('cortex', served), served).toBe(true);
  });

  it('compares a declared built-in icon exactly', async () => {
    expect(await compare('Cortex-builtin::Pipeline', 'Cortex-builtin::Pipeline')).toBe(true);
    expect(await compare('Cortex-builtin::Pipeline', 'Cortex-builtin::Box')).toBe(false);
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
    await expect(catalogPageKind.live.fetch({ client, desired: [], managedIds: [], readBefore: [] })).rejects.toThrow(
      /list catalog pages: the response holds no list/,
    );
  });
});
