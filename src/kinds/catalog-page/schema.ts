/**
 * Catalog page schemas: the strict manifest (the `POST /api/v1/catalog-pages` payload)
 * and the tolerant live shape (only compared fields typed).
 */
import { z } from 'zod';

/** What a catalog page lists: entities matching a filter, a relationship type's graph, or domains. */
const CATALOG_PAGE_TYPES = ['FILTER', 'RELATIONSHIP_TYPE', 'DOMAIN'] as const;

const nameList = z.array(z.string().min(1, { error: 'a name in this list must not be empty' }));

const includeOrExclude = (what: string) =>
  z
    .strictObject({ include: nameList.optional(), exclude: nameList.optional() })
    .refine((f) => !(f.include !== undefined && f.exclude !== undefined), {
      error: `filter.${what} takes either include or exclude, not both`,
    });

const filterSchema = z.strictObject({
  /** Entity types (`service`, a custom type, …) to include or exclude: one of the two. */
  types: includeOrExclude('types').optional(),
  /** Entity groups to include and/or exclude. */
  groups: z.strictObject({ include: nameList.optional(), exclude: nameList.optional() }).optional(),
  /** A CQL expression entities must satisfy. */
  query: z.string().min(1, { error: 'query must not be empty; leave it out instead' }).optional(),
});

/** One catalog page manifest under `.cortex/catalog-pages/`; identity is `slug`. */
export const catalogPageManifestSchema = z
  .strictObject({
    slug: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, {
      error: 'slug must start with a letter or digit and hold only letters, digits, `.`, `_` and `-`',
    }),
    name: z.string().trim().min(1, { error: 'name must not be empty' }),
    description: z.string().optional(),
    iconTag: z.string().min(1, { error: 'iconTag must not be empty' }),
    isDraft: z.boolean(),
    /** Left out: the server infers it (and it is not compared). */
    type: z.enum(CATALOG_PAGE_TYPES, { error: `type must be one of ${CATALOG_PAGE_TYPES.join(', ')}` }).optional(),
    filter: filterSchema.optional(),
    relationshipTypeTag: z.string().min(1).optional(),
  })
  .superRefine((page, ctx) => {
    const type = page.type;
    if (page.filter !== undefined && page.relationshipTypeTag !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['relationshipTypeTag'],
        message: 'a catalog page lists either a filter or a relationship type, not both',
      });
      return;
    }
    if (type === 'RELATIONSHIP_TYPE' && page.relationshipTypeTag === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['relationshipTypeTag'],
        message: 'type RELATIONSHIP_TYPE needs relationshipTypeTag',
      });
    }
    if (type !== undefined && type !== 'RELATIONSHIP_TYPE' && page.relationshipTypeTag !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['relationshipTypeTag'],
        message: `relationshipTypeTag only goes with type RELATIONSHIP_TYPE, not ${type}`,
      });
    }
    if (type !== undefined && type !== 'FILTER' && page.filter !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['filter'], message: `filter only goes with type FILTER, not ${type}` });
    }
  });

export type CatalogPageManifest = z.output<typeof catalogPageManifestSchema>;

const looseList = z.array(z.string()).nullish();
const looseIncludeExclude = z.object({ include: looseList, exclude: looseList }).loose().nullish();

/** A catalog page as the API returns it; `dateCreated`, `dateUpdated` and unknown fields are kept, not compared. */
export const liveCatalogPageSchema = z
  .object({
    slug: z.string().min(1),
    name: z.string().nullish(),
    description: z.string().nullish(),
    iconTag: z.string().nullish(),
    isDraft: z.boolean().nullish(),
    type: z.string().nullish(),
    filter: z
      .object({ types: looseIncludeExclude, groups: looseIncludeExclude, query: z.string().nullish() })
      .loose()
      .nullish(),
    relationshipTypeTag: z.string().nullish(),
    /** Pages Cortex ships are read-only (403 on change): never managed, never pruned. */
    isCortexManaged: z.boolean().nullish(),
  })
  .loose();

type LiveCatalogPageWire = z.output<typeof liveCatalogPageSchema>;

/** What cortex-sync keeps of a live catalog page. */
export interface LiveCatalogPage {
  page: LiveCatalogPageWire;
}

/** The page type the server records: the declared one, else `RELATIONSHIP_TYPE` with a `relationshipTypeTag`, else `FILTER`. */
export const inferCatalogPageType = (page: { type?: string | null; relationshipTypeTag?: string | null }): string =>
  page.type ?? (page.relationshipTypeTag ? 'RELATIONSHIP_TYPE' : 'FILTER');
