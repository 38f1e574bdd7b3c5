/**
 * The pure half of the `catalog-page` kind: catalog pages, one per document under
 * `.cortex/catalog-pages/`, identified by `slug`.
 */
import type { KindModel, ObjectReference, ParseResult } from '../../core/kind-contract.js';
import {
  type DesiredObject,
  type Diagnostic,
  type JsonObject,
  type JsonValue,
  type LiveObject,
  type ParsedDocument,
} from '../../core/model.js';
import { BUILT_IN_ENTITY_TYPES } from '../shared/built-in-entity-types.js';
import { ownsFilesIn, YAML_OR_JSON_FILE } from '../shared/layout.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import { comparedIconTag, comparedLiveIconTag, iconTagWarning } from '../shared/icon-tag.js';
import { type CatalogPageManifest, catalogPageManifestSchema, type LiveCatalogPage } from './schema.js';
import { toManifestFiles } from './to-manifest.js';

export const KIND = 'catalog-page';

/** Sorted names, or undefined for none. */
const nameSet = (names: readonly string[] | null | undefined): string[] | undefined =>
  names && names.length > 0 ? [...new Set(names)].sort() : undefined;

interface IncludeExclude {
  include?: readonly string[] | null;
  exclude?: readonly string[] | null;
}

interface FilterLike {
  types?: IncludeExclude | null;
  groups?: IncludeExclude | null;
  query?: string | null;
}

const canonicalIncludeExclude = (value: IncludeExclude | null | undefined): JsonObject | undefined => {
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
  isDraft?: boolean | null;
  filter?: FilterLike | null;
  relationshipTypeTag?: string | null;
}

/**
 * The compared form. `iconTag` and `type` are passed in: each is compared only when the manifest
 * states it (a non-built-in icon is replaced by the server; an omitted type is the server's to infer).
 */
const canonical = (page: PageLike, iconTag: string | undefined, type: string | undefined): JsonValue => {
  const filter = canonicalFilter(page.filter);
  const out: JsonObject = { slug: page.slug };
  if (page.name) out.name = page.name;
  if (page.description) out.description = page.description;
  if (iconTag !== undefined) out.iconTag = iconTag;
  out.isDraft = page.isDraft ?? false;
  if (type !== undefined) out.type = type;
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
  const warning = iconTagWarning(result.data.iconTag, doc, { kind: KIND, id: result.data.slug });
  return { objects: [object], diagnostics: warning ? [warning] : [] };
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

/** A page Cortex manages itself cannot be declared: the API refuses every write to it (403). */
const checkAgainstLive = (
  obj: DesiredObject<CatalogPageManifest>,
  live: LiveObject<LiveCatalogPage> | undefined,
): Diagnostic[] => {
  if (live?.state.page.isCortexManaged !== true) return [];
  const at = obj.doc.locate(['slug']);
  return [
    {
      severity: 'error',
      code: 'managed-by-cortex',
      message: `catalog page \`${obj.id}\` is managed by Cortex and cannot be declared or changed; remove this manifest or use another slug`,
      file: obj.source.file,
      line: at.line,
      column: at.column,
      field: 'slug',
      kind: KIND,
      id: obj.id,
    },
  ];
};

const LAYOUT_FOLDERS = ['catalog-pages'];

/** The pure half of the `catalog-page` kind. */
export const catalogPageModel: KindModel<CatalogPageManifest, LiveCatalogPage> = {
  kind: KIND,
  title: 'catalog page',
  refersTo: ['entity-type'],
  layout: { folders: LAYOUT_FOLDERS, ownsFile: ownsFilesIn(LAYOUT_FOLDERS, YAML_OR_JSON_FILE) },
  manifest: {
    schema: catalogPageManifestSchema,
    parse,
    references,
    canonical: (obj) => canonical(obj.spec, comparedIconTag(obj.spec.iconTag), obj.spec.type),
  },
  live: {
    canonical: (obj, desired) =>
      canonical(
        obj.state.page,
        comparedLiveIconTag(obj.state.page.iconTag, desired?.spec.iconTag),
        desired?.spec.type === undefined ? undefined : (obj.state.page.type ?? undefined),
      ),
    checkAgainstLive,
  },
  prune: { action: 'delete' },
  export: { toManifestFiles },
};
