/**
 * Live catalog pages → manifests under `.cortex/catalog-pages/` (`export`). Pure.
 *
 * Pages Cortex manages (`isCortexManaged`) are not the workspace's to declare and are left out.
 * Left out of a page: `type` when it is the one Cortex infers from the rest (so does the manifest
 * schema), an empty description, empty filter parts and dates. The icon is written as the server
 * answers it, whichever it is (a built-in one is compared as written, so the manifest equals the
 * live page). Only a page the server answers without any icon needs one made up, since the manifest
 * and every write require one: `PLACEHOLDER_ICON_TAG`, which apply then writes.
 */
import { manifestPath } from '../shared/file-name.js';
import type { JsonObject, LiveObject } from '../../core/model.js';
import { nameLists } from '../shared/name-lists.js';
import type { ManifestFile } from '../types.js';
import { inferCatalogPageType, type LiveCatalogPage } from './schema.js';

const FOLDER = '.cortex/catalog-pages';

/**
 * The icon written for a page the server answers without one. A guess: which icon Cortex shows for
 * such a page is not known (every write requires an icon, so only a page made another way has none).
 */
const PLACEHOLDER_ICON_TAG = 'Cortex-builtin::Box';

/** The manifest document of one live page, keys in the order the vendor's docs use. */
const catalogPageManifestDocument = (obj: LiveObject<LiveCatalogPage>): JsonObject => {
  const { page } = obj.state;
  const document: JsonObject = { slug: page.slug, name: page.name || page.slug };
  if (page.description) document.description = page.description;
  document.iconTag = page.iconTag || PLACEHOLDER_ICON_TAG;
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
