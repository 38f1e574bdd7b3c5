import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DesiredObject } from '../../../../src/core/model.js';
import { buildPlan } from '../../../../src/core/plan.js';
import { catalogPageKind, createCatalogPageKind } from '../../../../src/kinds/catalog-page/index.js';
import type { CatalogPageManifest } from '../../../../src/kinds/catalog-page/schema.js';
import { changeFor, type Harness, startHarness } from '../../../kinds/entity-type/emulator-harness.js';
import { parsedDoc } from '../../../kinds/entity-type/parsed-doc.js';
import { AT } from '../../../kinds/parse-context.js';

const page = (text: string): DesiredObject<CatalogPageManifest> => {
  const { objects, diagnostics } = catalogPageKind.manifest.parse(parsedDoc(text, '.cortex/catalog-pages/p.yaml'), AT);
  if (diagnostics.length > 0) throw new Error(diagnostics[0]?.message);
  return objects[0]!;
};

const PIPELINES = page(`slug: pipelines
name: Data Pipelines
description: Every data pipeline
iconTag: Cortex-builtin::Pipeline
isDraft: false
filter:
  types: {include: [service]}
  groups: {include: [etl, data]}
  query: entity.tag() != "legacy"
`);
const DOMAINS = page('slug: domains\nname: Domains\niconTag: Cortex-builtin::Domain\nisDraft: true\ntype: DOMAIN\n');

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.stop();
});

const live = async (desired: readonly DesiredObject<CatalogPageManifest>[] = []) =>
  new Map((await catalogPageKind.live.fetch(h.fetchContext(desired))).map((o) => [o.id, o]));

describe('catalog-page against the emulator', () => {
  it('reads the pages Cortex manages as protected: never changed, never pruned', async () => {
    const response = await h.client.request<Record<string, unknown>>({
      operation: 'peek',
      method: 'GET',
      path: '/api/v1/catalog-pages',
    });
    expect(JSON.stringify(response.body)).toContain('"isCortexManaged":true');
    const managed = [...(await live()).values()];
    expect(managed.map((p) => [p.id, p.protected])).toEqual([['services', true]]);
  });

  it('declaring a page Cortex manages is a plan error at its slug, not a 403 at apply', async () => {
    const declared = page('name: All services\nslug: services\niconTag: Cortex-builtin::Services\nisDraft: false\n');
    const plan = buildPlan({
      desired: [declared],
      live: [...(await live([declared])).values()],
      handlers: [catalogPageKind],
      options: {
        sourceId: 'test-repo',
        prune: false,
        allowTakeover: true,
        allowMassDelete: false,
        protect: [],
        manifestsComplete: true,
      },
    });
    expect(plan.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'managed-by-cortex',
        file: '.cortex/catalog-pages/p.yaml',
        line: 2,
        field: 'slug',
        id: 'services',
      }),
    ]);
    expect(h.sent.every((r) => r.method === 'GET')).toBe(true);
  });

  it('creates pages with the full payload and reads them back equal to their manifests', async () => {
    for (const desired of [PIPELINES, DOMAINS]) {
      await catalogPageKind.write.apply(changeFor(catalogPageKind, desired, undefined), h.applyContext());
    }
    const post = h.sent.find((r) => r.method === 'POST');
    expect(post?.operation).toBe('create catalog page `pipelines`');
    expect(post?.body).toMatchObject({ slug: 'pipelines', isDraft: false, description: 'Every data pipeline' });
    // A type left out is the server's to infer: it is not sent.
    expect(post?.body).not.toHaveProperty('type');
    const pages = await live([PIPELINES, DOMAINS]);
    for (const desired of [PIPELINES, DOMAINS]) {
      expect(catalogPageKind.live.canonical(pages.get(desired.id)!, desired)).toEqual(
        catalogPageKind.manifest.canonical(desired),
      );
    }
  });

  it('replaces a page on update, and deletes it (a page already gone counts as deleted)', async () => {
    const ctx = h.applyContext();
    await catalogPageKind.write.apply(changeFor(catalogPageKind, PIPELINES, undefined), ctx);
    const renamed = page(
      'slug: pipelines\nname: Pipelines\niconTag: Cortex-builtin::Pipeline\nisDraft: true\nfilter: {types: {exclude: [team]}}\n',
    );
    const before = (await live([renamed])).get('pipelines')!;
    expect(catalogPageKind.live.canonical(before, renamed)).not.toEqual(catalogPageKind.manifest.canonical(renamed));
    await catalogPageKind.write.apply(changeFor(catalogPageKind, renamed, before), ctx);
    const after = (await live([renamed])).get('pipelines')!;
    expect(catalogPageKind.live.canonical(after, renamed)).toEqual(catalogPageKind.manifest.canonical(renamed));
    expect(after.state.page.description).toBeUndefined();

    await catalogPageKind.write.apply(changeFor(catalogPageKind, undefined, after, 'delete'), ctx);
    expect([...(await live()).keys()]).toEqual(['services']);
    await expect(
      catalogPageKind.write.apply(changeFor(catalogPageKind, undefined, after, 'delete'), ctx),
    ).resolves.toBeUndefined();
  });

  it('reads every page of a long list', async () => {
    for (let i = 0; i < 5; i++) {
      const p = page(`slug: page-${i}\nname: Page ${i}\niconTag: Cortex-builtin::Box\nisDraft: false\n`);
      await catalogPageKind.write.apply(changeFor(catalogPageKind, p, undefined), h.applyContext());
    }
    h.sent.length = 0;
    const pages = await createCatalogPageKind({ pageSize: 2 }).live.fetch(h.fetchContext([]));
    expect(pages.map((p) => p.id).sort()).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4', 'services']);
    // 6 pages with the Cortex-managed one: 3 requests of 2.
    expect(h.sent.map((r) => r.query?.page)).toEqual([0, 1, 2]);
  });
});
