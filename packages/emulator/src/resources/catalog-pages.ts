/**
 * Catalog pages ("Catalogs"): `/api/v1/catalog-pages` (not in the vendor OpenAPI).
 * POST creates or replaces by `slug` (a replace overwrites every field); Cortex-managed pages are
 * read-only (403). The emulator starts with one Cortex-managed page, `services`.
 */
import { z } from 'zod';
import { type EmulatorResponse, errorResponse, pagedResponse, type RouteDef } from '../contract.js';
import { hashOrder, isoSeconds } from '../util.js';
import { readBody } from './initiatives-body.js';

/** List envelope key. Inferred: the vendor's list key is not documented. */
export const CATALOG_PAGES_LIST_KEY = 'catalogPages';

const stringSet = z.array(z.string());
const includeOrExclude = z
  .object({ include: stringSet.optional(), exclude: stringSet.optional() })
  .refine((f) => f.include === undefined || f.exclude === undefined, {
    message: 'Only one of include or exclude can be set',
  });

const catalogFilterSchema = z.object({
  types: includeOrExclude.optional(),
  groups: includeOrExclude.optional(),
  query: z.string().optional(),
});

export const CATALOG_PAGE_TYPES = ['FILTER', 'RELATIONSHIP_TYPE', 'DOMAIN'] as const;
export type CatalogPageType = (typeof CATALOG_PAGE_TYPES)[number];

/** The create-or-replace body. The slug is one path segment: no whitespace and no `/`. */
export const catalogPageRequestSchema = z.object({
  slug: z.string().regex(/^[^\s/]+$/, 'slug must be non-empty, without whitespace or "/"'),
  name: z.string().min(1),
  description: z.string().optional(),
  iconTag: z.string().min(1),
  isDraft: z.boolean(),
  type: z.enum(CATALOG_PAGE_TYPES).optional(),
  filter: catalogFilterSchema.optional(),
  relationshipTypeTag: z.string().min(1).optional(),
});
export type CatalogPageRequest = z.infer<typeof catalogPageRequestSchema>;

/** A catalog page as stored: the request with its resolved `type`, flags and timestamps. */
export interface StoredCatalogPage extends Omit<CatalogPageRequest, 'type'> {
  type: CatalogPageType;
  isCortexManaged: boolean;
  /** ISO 8601 timestamps. */
  dateCreated: string;
  dateUpdated: string;
}

/** The catalog-pages slice of the emulator state (an array: JSON-serializable, no prototype keys). */
export interface CatalogPagesState {
  items: StoredCatalogPage[];
}

/** The part of the emulator state the catalog-page routes read. */
export interface CatalogPagesSlice {
  catalogPages: CatalogPagesState;
}

/** The Cortex-managed page every workspace starts with (it cannot be changed or deleted). */
export const MANAGED_CATALOG_PAGE: StoredCatalogPage = {
  slug: 'services',
  name: 'Services',
  description: 'All services (managed by Cortex)',
  iconTag: 'Cortex-builtin::Services',
  isDraft: false,
  type: 'FILTER',
  filter: { types: { include: ['service'] } },
  isCortexManaged: true,
  dateCreated: '2024-01-01T00:00:00.000Z',
  dateUpdated: '2024-01-01T00:00:00.000Z',
};

/** A fresh catalog-pages slice holding the Cortex-managed `services` page. */
export const initialCatalogPagesState = (): CatalogPagesState => ({
  items: [structuredClone(MANAGED_CATALOG_PAGE)],
});

/**
 * Resolves the page type: explicit, else RELATIONSHIP_TYPE when `relationshipTypeTag` is given,
 * else FILTER. Returns the problem as a message when the fields do not fit the type.
 */
const resolveType = (body: CatalogPageRequest): { type: CatalogPageType } | { problem: string } => {
  const type = body.type ?? (body.relationshipTypeTag !== undefined ? 'RELATIONSHIP_TYPE' : 'FILTER');
  if (body.type === undefined && body.relationshipTypeTag !== undefined && body.filter !== undefined) {
    return { problem: 'type is required when both filter and relationshipTypeTag are given' };
  }
  if (type === 'RELATIONSHIP_TYPE' && body.relationshipTypeTag === undefined) {
    return { problem: 'relationshipTypeTag is required for a RELATIONSHIP_TYPE catalog' };
  }
  if (type !== 'RELATIONSHIP_TYPE' && body.relationshipTypeTag !== undefined) {
    return { problem: `relationshipTypeTag is only allowed for a RELATIONSHIP_TYPE catalog, not ${type}` };
  }
  if (type !== 'FILTER' && body.filter !== undefined) {
    return { problem: `filter is only allowed for a FILTER catalog, not ${type}` };
  }
  return { type };
};

/** The wire form: the stored fields in a stable order. */
export const renderCatalogPage = (page: StoredCatalogPage): Record<string, unknown> => ({
  slug: page.slug,
  name: page.name,
  ...(page.description !== undefined ? { description: page.description } : {}),
  iconTag: page.iconTag,
  isDraft: page.isDraft,
  type: page.type,
  ...(page.filter !== undefined ? { filter: page.filter } : {}),
  ...(page.relationshipTypeTag !== undefined ? { relationshipTypeTag: page.relationshipTypeTag } : {}),
  isCortexManaged: page.isCortexManaged,
  dateCreated: page.dateCreated,
  dateUpdated: page.dateUpdated,
});

const notFound = (slug: string): EmulatorResponse => errorResponse(404, 'NOT_FOUND', `Catalog '${slug}' not found`);
const managed = (slug: string): EmulatorResponse =>
  errorResponse(403, 'FORBIDDEN', `Catalog '${slug}' is managed by Cortex and cannot be changed or deleted`);

/** Routes of the catalog-pages resource. */
export const catalogPageRoutes: RouteDef<CatalogPagesSlice>[] = [
  {
    method: 'GET',
    pattern: '/api/v1/catalog-pages',
    permission: ['VIEW_CATALOGS'],
    handle: (req, state) =>
      pagedResponse(
        hashOrder(state.catalogPages.items, (p) => p.slug).map(renderCatalogPage),
        req.query,
        CATALOG_PAGES_LIST_KEY,
      ),
  },
  {
    method: 'GET',
    pattern: '/api/v1/catalog-pages/:slug',
    permission: ['VIEW_CATALOGS'],
    handle: (req, state) => {
      const page = state.catalogPages.items.find((p) => p.slug === req.params.slug);
      return page === undefined ? notFound(req.params.slug ?? '') : { status: 200, body: renderCatalogPage(page) };
    },
  },
  {
    method: 'POST',
    pattern: '/api/v1/catalog-pages',
    permission: ['EDIT_CATALOGS'],
    handle: (req, state, env) => {
      const body = readBody(req, catalogPageRequestSchema);
      if (!body.ok) return body.response;
      const resolved = resolveType(body.value);
      if ('problem' in resolved) return errorResponse(400, 'BAD_REQUEST', resolved.problem);
      const index = state.catalogPages.items.findIndex((p) => p.slug === body.value.slug);
      const existing = state.catalogPages.items[index];
      if (existing?.isCortexManaged) return managed(existing.slug);
      const now = isoSeconds(env.now());
      const { type: _omitted, ...fields } = body.value;
      const page: StoredCatalogPage = {
        ...fields,
        type: resolved.type,
        isCortexManaged: false,
        dateCreated: existing?.dateCreated ?? now,
        dateUpdated: now,
      };
      if (existing === undefined) state.catalogPages.items.push(page);
      else state.catalogPages.items[index] = page;
      return { status: 200, body: renderCatalogPage(page) };
    },
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/catalog-pages/:slug',
    permission: ['EDIT_CATALOGS'],
    handle: (req, state) => {
      const index = state.catalogPages.items.findIndex((p) => p.slug === req.params.slug);
      const existing = state.catalogPages.items[index];
      if (existing === undefined) return notFound(req.params.slug ?? '');
      if (existing.isCortexManaged) return managed(existing.slug);
      state.catalogPages.items.splice(index, 1);
      return { status: 200 };
    },
  },
];
