/**
 * The `catalog-page` kind: the pure half (`model.ts`) and the IO half against
 * `/api/v1/catalog-pages`. Pages Cortex manages are read (so declaring one is a plan error) but
 * never changed or pruned.
 */
import { encodePathSegment } from '../../api/types.js';
import { CortexSyncError } from '../../core/errors.js';
import type { LiveObject } from '../../core/model.js';
import { readEachOnce, readOneOrAbsent, readPagedList } from '../shared/api-reads.js';
import type { ApplyContext, FetchContext, KindChange, KindHandler } from '../types.js';
import { catalogPageModel, KIND } from './model.js';
import { type CatalogPageManifest, type LiveCatalogPage, liveCatalogPageSchema } from './schema.js';

const PAGES_PATH = '/api/v1/catalog-pages';
const PAGE_SIZE = 1000;

/** The list in a page envelope: its single array-valued key (the vendor does not document the key). */
const listOf = (body: unknown): readonly unknown[] | undefined => {
  if (Array.isArray(body)) return body as unknown[];
  if (body !== null && typeof body === 'object') {
    const arrays = Object.entries(body).filter(([, v]) => Array.isArray(v));
    const only = arrays.length === 1 ? arrays[0] : arrays.find(([k]) => k === 'catalogPages');
    if (only) return only[1] as unknown[];
  }
  return undefined;
};

/** One page as read; those Cortex manages are marked protected (never changed, never pruned). */
const liveOf = (page: LiveCatalogPage['page']): LiveObject<LiveCatalogPage> => ({
  kind: KIND,
  id: page.slug,
  ...(page.isCortexManaged === true ? { protected: true } : {}),
  state: { page },
});

/** Reads every catalog page. */
const fetchLiveWith = async (ctx: FetchContext, pageSize: number): Promise<LiveObject<LiveCatalogPage>[]> => {
  const pages = await readPagedList(ctx.client, {
    request: { operation: 'list catalog pages', method: 'GET', path: PAGES_PATH },
    list: listOf,
    item: liveCatalogPageSchema,
    itemName: 'a catalog page',
    pageSize,
  });
  return pages.map(liveOf);
};

/** The pages with these slugs, one `GET /catalog-pages/{slug}` each (404: none). */
const fetchByIds = async (ids: readonly string[], ctx: FetchContext): Promise<LiveObject<LiveCatalogPage>[]> => {
  return readEachOnce(ids, async (slug) => {
    const page = await readOneOrAbsent(ctx.client, {
      request: {
        operation: `read catalog page \`${slug}\``,
        method: 'GET',
        path: `${PAGES_PATH}/${encodePathSegment(slug)}`,
      },
      item: liveCatalogPageSchema,
      itemName: 'a catalog page',
    });
    return page?.slug === slug ? liveOf(page) : undefined;
  });
};

const apply = async (change: KindChange<CatalogPageManifest, LiveCatalogPage>, ctx: ApplyContext): Promise<void> => {
  switch (change.action) {
    case 'create':
    case 'update':
      await ctx.client.request({
        operation: `${change.action} catalog page \`${change.id}\``,
        method: 'POST',
        path: PAGES_PATH,
        // The manifest as written: a `type` left out is the server's to infer.
        body: change.desired.spec,
        // Create-or-replace by slug: sending it twice leaves the same page.
        idempotent: true,
      });
      return;
    case 'delete':
      await ctx.client.request({
        operation: `delete catalog page \`${change.id}\``,
        method: 'DELETE',
        path: `${PAGES_PATH}/${encodePathSegment(change.id)}`,
        // Already gone is the state we want.
        acceptStatus: [404],
      });
      return;
    case 'noop':
      return;
    case 'archive':
      throw new CortexSyncError('INTERNAL', `catalog pages cannot be archived (\`${change.id}\`)`);
  }
};

/** Options of the catalog-page kind (tests use a small page size to see paging). */
export interface CatalogPageKindOptions {
  /** Items per list request; default 1000 (the API's maximum). */
  pageSize?: number;
}

/** Builds the `catalog-page` kind handler. */
export const createCatalogPageKind = (
  options: CatalogPageKindOptions = {},
): KindHandler<CatalogPageManifest, LiveCatalogPage> => ({
  ...catalogPageModel,
  live: { ...catalogPageModel.live, fetch: (ctx) => fetchLiveWith(ctx, options.pageSize ?? PAGE_SIZE), fetchByIds },
  write: { apply },
});

/** The `catalog-page` kind handler. */
export const catalogPageKind = createCatalogPageKind();
