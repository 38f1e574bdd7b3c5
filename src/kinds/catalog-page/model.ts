/**
 * The pure half of the `catalog-page` kind: catalog pages, one per document under
 * `.cortex/catalog-pages/`, identified by `slug`.
 */
import type { KindModel, ObjectReference, ParseResult } from '../../core/kind-contract.js';
import {
  type DesiredObject,
  type Diagnostic,
  type JsonValue,
  type LiveObject,
  type ParsedDocument,
} from '../../core/model.js';
import { BUILT_IN_ENTITY_TYPES } from '../shared/built-in-entity-types.js';
import { ownsFilesIn, YAML_OR_JSON_FILE } from '../shared/layout.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import { entityFilterSets, type EntityFilterLike, entry, textOrNull } from '../shared/canonical.js';
import { comparedIconTag, comparedLiveIconTag, iconTagWarning } from '../shared/icon-tag.js';
import { type CatalogPageManifest, catalogPageManifestSchema, type LiveCatalogPage } from './schema.js';
import { toManifestFiles } from './to-manifest.js';

export const KIND = 'catalog-page';

interface PageLike {
  slug: string;
  name?: string | null;
  description?: string | null;
  isDraft?: boolean | null;
  filter?: EntityFilterLike | null;
  relationshipTypeTag?: string | null;
}

/**
 * The compared form. `iconTag` and `type` are passed in: each is compared only when the manifest
 * states it (a non-built-in icon is replaced by the server; an omitted type is the server's to infer).
 */
const canonical = (page: PageLike, iconTag: string | undefined, type: string | undefined): JsonValue => ({
  slug: page.slug,
  ...entry('name', textOrNull(page.name)),
  ...entry('description', textOrNull(page.description)),
  ...entry('iconTag', iconTag),
  isDraft: page.isDraft ?? false,
  ...entry('type', type),
  // Left out when empty (not `null`, as Initiatives and scorecards write it): every saved plan's
  // digest covers this form as it has always been written.
  ...entry('filter', entityFilterSets(page.filter, { empty: undefined })),
  ...entry('relationshipTypeTag', textOrNull(page.relationshipTypeTag)),
});

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
  layout: { identity: '`slug`', folders: LAYOUT_FOLDERS, ownsFile: ownsFilesIn(LAYOUT_FOLDERS, YAML_OR_JSON_FILE) },
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
