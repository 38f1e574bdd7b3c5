/**
 * Live catalog pages → manifests under `.cortex/catalog-pages/` (`export`). Pure.
 *
 * Pages Cortex manages (`isCortexManaged`) are not the workspace's to declare and are left out.
 * Left out of a page: `type` when it is the one Cortex infers from the rest (so does the manifest
 * schema), an empty description, empty filter parts and dates. `iconTag` is required by the
 * manifest: a page without one gets Cortex's default icon.
 */
import { manifestPath } from '../../export/file-name.js';
import type { JsonObject, LiveObject } from '../../core/model.js';
import { nameLists } from '../shared/name-lists.js';
import type { ManifestFile } from '../types.js';
import { inferCatalogPageType, type LiveCatalogPage } from './schema.js';

const FOLDER = '.cortex/catalog-pages';

/** The icon Cortex shows for a page without one (as `SERVER_DEFAULT_ICON_TAGS` in `index.ts`). */
const DEFAULT_ICON_TAG = 'Cortex-builtin::Box';

/** The manifest document of one live page, keys in the order the vendor's docs use. */
export const catalogPageManifestDocument = (obj: LiveObject<LiveCatalogPage>): JsonObject => {
  const { page } = obj.state;
  const document: JsonObject = { slug: page.slug, name: page.name || page.slug };
  if (page.description) document.description = page.description;
  document.iconTag = page.iconTag || DEFAULT_ICON_TAG;
  document.isDraft = page.isDraft ?? false;
  const inferred = inferCatalogPageType({ relationshipTypeTag: page.relationshipTypeTag ?? null });
  if (page.type && page.type !== inferred) document.type = page.type;
  const types = nameLists(page.filter?.types);
  const groups = nameLists(page.filter?.groups);
  const filter: JsonObject = {
    ...(types ? { types } : {}),
    ...(groups ? { groups } : {}),
    ...(page.filter?.query ? { query: page.filter.query } : {}),
  };
  if (Object.keys(filter).length > 0) document.filter = filter;
  if (page.relationshipTypeTag) document.relationshipTypeTag = page.relationshipTypeTag;
  return document;
};

/** One file per page the workspace made, named by its slug. */
export const toManifestFiles = (live: readonly LiveObject<LiveCatalogPage>[]): ManifestFile[] =>
  live
    .filter((obj) => obj.state.page.isCortexManaged !== true)
    .map((obj) => ({
      path: manifestPath(FOLDER, obj.id),
      document: catalogPageManifestDocument(obj),
      ids: [obj.id],
    }));
