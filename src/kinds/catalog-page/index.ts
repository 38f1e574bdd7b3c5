/**
 * The `catalog-page` kind: catalog pages ("Catalogs", `/api/v1/catalog-pages`), one per document
 * under `.cortex/catalog-pages/`, identified by `slug`. Pages Cortex manages are left alone.
 */
import type { ApiClient } from '../../api/types.js';
import { encodePathSegment } from '../../api/types.js';
import { CortexSyncError } from '../../core/errors.js';
import {
  BUILT_IN_ENTITY_TYPES,
  type Change,
  type DesiredObject,
  type JsonObject,
  type JsonValue,
  type LiveObject,
  type ParsedDocument,
} from '../../core/model.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import type { ApplyContext, FetchContext, KindHandler, ObjectReference, ParseResult } from '../types.js';
import {
  type CatalogPageManifest,
  catalogPageManifestSchema,
  inferCatalogPageType,
  type LiveCatalogPage,
  liveCatalogPageSchema,
} from './schema.js';

const KIND = 'catalog-page';
const PAGES_PATH = '/api/v1/catalog-pages';
const PAGE_SIZE = 1000;

/** Icons the server may show in place of one it does not know (inferred; see readme). */
export const SERVER_DEFAULT_ICON_TAGS: readonly string[] = ['Cortex-builtin::Box'];

const isServerDefaultIcon = (iconTag: string | null | undefined): boolean =>
  !iconTag || SERVER_DEFAULT_ICON_TAGS.includes(iconTag);

/** Sorted names, or undefined for none. */
const nameSet = (names: readonly string[] | null | undefined): string[] | undefined =>
  names && names.length > 0 ? [...new Set(names)].sort() : undefined;

interface FilterLike {
  types?: { include?: readonly string[] | null; exclude?: readonly string[] | null } | null;
  groups?: { include?: readonly string[] | null; exclude?: readonly string[] | null } | null;
  query?: string | null;
}

const canonicalIncludeExclude = (
  value: { include?: readonly string[] | null; exclude?: readonly string[] | null } | null | undefined,
): JsonObject | undefined => {
  const include = nameSet(value?.include);
  const exclude = nameSet(value?.exclude);
  if (!include && !exclude) return undefined;
  return { ...(include ? { include } : {}), ...(exclude ? { exclude } : {}) };
};

/** Lists as sets, empty parts left out; an empty filter reads the same as none. */
const canonicalFilter = (filter: FilterLike | null | undefined): JsonObject | undefined => {
  if (!filter) return undefined;
  const types = canonicalIncludeExclude(filter.types);
  const groups = canonicalIncludeExclude(filter.groups);
  const out: JsonObject = {
    ...(types ? { types } : {}),
    ...(groups ? { groups } : {}),
    ...(filter.query ? { query: filter.query } : {}),
  };
  return Object.keys(out).length > 0 ? out : undefined;
};

interface PageLike {
  slug: string;
  name?: string | null;
  description?: string | null;
  iconTag?: string | null;
  isDraft?: boolean | null;
  type?: string | null;
  filter?: FilterLike | null;
  relationshipTypeTag?: string | null;
}

const canonical = (page: PageLike, iconTag: string | undefined): JsonValue => {
  const filter = canonicalFilter(page.filter);
  const out: JsonObject = { slug: page.slug };
  if (page.name) out.name = page.name;
  if (page.description) out.description = page.description;
  if (iconTag !== undefined) out.iconTag = iconTag;
  out.isDraft = page.isDraft ?? false;
  out.type = inferCatalogPageType(page);
  if (filter) out.filter = filter;
  if (page.relationshipTypeTag) out.relationshipTypeTag = page.relationshipTypeTag;
  return out;
};

const slugOf = (value: unknown): string | undefined => {
  const slug = (value as { slug?: unknown } | null)?.slug;
  return typeof slug === 'string' && slug !== '' ? slug : undefined;
};

const parse = (doc: ParsedDocument): ParseResult<CatalogPageManifest> => {
  const result = catalogPageManifestSchema.safeParse(doc.value);
  if (!result.success) {
    const id = slugOf(doc.value);
    return {
      objects: [],
      diagnostics: zodIssuesToDiagnostics(result.error.issues, doc, { kind: KIND, ...(id ? { id } : {}) }),
    };
  }
  const object: DesiredObject<CatalogPageManifest> = {
    kind: KIND,
    id: result.data.slug,
    source: { file: doc.file, line: doc.line, column: doc.column },
    spec: result.data,
    doc,
  };
  return { objects: [object], diagnostics: [] };
};

/** The entity types the page's filter names (built-in `service`, `domain`, `team` need no object). */
const references = (obj: DesiredObject<CatalogPageManifest>): ObjectReference[] => {
  const refs: ObjectReference[] = [];
  const types = obj.spec.filter?.types;
  for (const list of ['include', 'exclude'] as const) {
    (types?.[list] ?? []).forEach((type, i) => {
      if (BUILT_IN_ENTITY_TYPES.includes(type)) return;
      refs.push({
        kind: 'entity-type',
        id: type,
        field: `filter.types.${list}[${i}]`,
        path: ['filter', 'types', list, i],
        ordering: true,
      });
    });
  }
  return refs;
};

/** The list in a page envelope: its single array-valued key (the vendor does not document the key). */
const listOf = (body: unknown, operation: string): unknown[] => {
  if (Array.isArray(body)) return body;
  if (body !== null && typeof body === 'object') {
    const arrays = Object.entries(body).filter(([, v]) => Array.isArray(v));
    const only = arrays.length === 1 ? arrays[0] : arrays.find(([k]) => k === 'catalogPages');
    if (only) return only[1] as unknown[];
  }
  throw new CortexSyncError('API', `${operation}: the response holds no list of catalog pages`);
};

const readAllPages = async (client: ApiClient, pageSize: number): Promise<unknown[]> => {
  const operation = 'list catalog pages';
  const items: unknown[] = [];
  for (let page = 0; ; page++) {
    const response = await client.request<unknown>({
      operation,
      method: 'GET',
      path: PAGES_PATH,
      query: { page, pageSize },
    });
    const list = listOf(response.body, operation);
    items.push(...list);
    const totalPages = (response.body as { totalPages?: unknown } | null)?.totalPages;
    if (list.length === 0 || typeof totalPages !== 'number' || page + 1 >= totalPages) return items;
  }
};

/** Reads every catalog page but those Cortex manages (read-only: never managed, never pruned). */
const fetchLiveWith = async (ctx: FetchContext, pageSize: number): Promise<LiveObject<LiveCatalogPage>[]> => {
  const items = await readAllPages(ctx.client, pageSize);
  const declaredIcons = new Map<string, string>();
  for (const obj of ctx.desired) declaredIcons.set(obj.id, (obj.spec as CatalogPageManifest).iconTag);
  const out: LiveObject<LiveCatalogPage>[] = [];
  for (const [index, item] of items.entries()) {
    const parsed = liveCatalogPageSchema.safeParse(item);
    if (!parsed.success) {
      throw new CortexSyncError(
        'API',
        `list catalog pages: item ${index} of the response is not a catalog page (${parsed.error.issues[0]?.message ?? 'invalid'})`,
      );
    }
    const page = parsed.data;
    if (page.isCortexManaged === true) continue;
    const declared = declaredIcons.get(page.slug);
    const comparedIconTag =
      declared !== undefined && isServerDefaultIcon(page.iconTag) ? declared : (page.iconTag ?? undefined);
    out.push({ kind: KIND, id: page.slug, state: { page, ...(comparedIconTag ? { comparedIconTag } : {}) } });
  }
  return out;
};

/** The create-or-replace body: the whole manifest, with the page type made explicit. */
const payloadOf = (spec: CatalogPageManifest): Record<string, unknown> => ({
  ...spec,
  type: inferCatalogPageType(spec),
});

const apply = async (change: Change, ctx: ApplyContext): Promise<void> => {
  switch (change.action) {
    case 'create':
    case 'update': {
      const spec = change.desired?.spec as CatalogPageManifest | undefined;
      if (!spec)
        throw new CortexSyncError(
          'INTERNAL',
          `${change.action} catalog page \`${change.id}\`: the change has no manifest`,
        );
      await ctx.client.request({
        operation: `${change.action} catalog page \`${change.id}\``,
        method: 'POST',
        path: PAGES_PATH,
        body: payloadOf(spec),
        // Create-or-replace by slug: sending it twice leaves the same page.
        idempotent: true,
      });
      return;
    }
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
  kind: KIND,
  title: 'catalog page',
  manifestSchema: catalogPageManifestSchema,
  ownsFile: (relPath) => relPath.startsWith('.cortex/catalog-pages/') && /\.(ya?ml|json)$/i.test(relPath),
  parse,
  references,
  fetchLive: (ctx) => fetchLiveWith(ctx, options.pageSize ?? PAGE_SIZE),
  desiredState: (obj) => canonical(obj.spec, obj.spec.iconTag),
  liveState: (obj) => canonical(obj.state.page, obj.state.comparedIconTag),
  pruneAction: 'delete',
  apply,
});

/** The `catalog-page` kind handler. */
export const catalogPageKind = createCatalogPageKind();
