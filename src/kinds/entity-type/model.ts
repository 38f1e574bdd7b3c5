/**
 * The pure half of the `entity-type` kind: custom entity types, one per document under
 * `.cortex/entity-types/`, identified by `type`.
 */
import { sortKeys } from '../../core/diff.js';
import type { KindModel, ParseResult } from '../../core/kind-contract.js';
import type { DesiredObject, Diagnostic, JsonObject, JsonValue, LiveObject, ParsedDocument } from '../../core/model.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import { reservedEntityType } from '../entity/records/names.js';
import { comparedIconTag, comparedLiveIconTag, iconTagWarning } from '../shared/icon-tag.js';
import { ownsFilesIn, YAML_OR_JSON_FILE } from '../shared/layout.js';
import { checkDefinitionsAgainstTypes } from './definitions-check.js';
import { jsonSchemaDiagnostics } from './json-schema-check.js';
import {
  BUILT_IN_ENTITY_TYPES,
  type EntityTypeManifest,
  entityTypeManifestSchema,
  type LiveEntityType,
} from './schema.js';
import { toManifestFiles } from './to-manifest.js';
import { entityTypeUpdateOrder } from './update-order.js';

export const KIND = 'entity-type';

const nonEmpty = (s: string | null | undefined): string | undefined => (s ? s : undefined);

const canonical = (fields: {
  type: string;
  name: string | undefined;
  description: string | undefined;
  schema: unknown;
  iconTag: string | undefined;
}): JsonValue => {
  const out: JsonObject = { type: fields.type };
  if (fields.name !== undefined) out.name = fields.name;
  if (fields.description !== undefined) out.description = fields.description;
  out.schema = sortKeys(fields.schema ?? {});
  if (fields.iconTag !== undefined) out.iconTag = fields.iconTag;
  return out;
};

const idOf = (value: unknown): string | undefined => {
  const type = (value as { type?: unknown } | null)?.type;
  return typeof type === 'string' && type !== '' ? type : undefined;
};

const parse = (doc: ParsedDocument): ParseResult<EntityTypeManifest> => {
  const result = entityTypeManifestSchema.safeParse(doc.value);
  const id = idOf(doc.value);
  if (!result.success) {
    return {
      objects: [],
      diagnostics: zodIssuesToDiagnostics(result.error.issues, doc, { kind: KIND, ...(id ? { id } : {}) }),
    };
  }
  const spec = result.data;
  const schemaErrors = jsonSchemaDiagnostics(spec.schema, doc, spec.type);
  const warning = iconTagWarning(spec.iconTag, doc, { kind: KIND, id: spec.type });
  const diagnostics: Diagnostic[] = [...schemaErrors, ...(warning ? [warning] : [])];
  if (schemaErrors.length > 0) return { objects: [], diagnostics };
  const object: DesiredObject<EntityTypeManifest> = {
    kind: KIND,
    id: spec.type,
    source: { file: doc.file, line: doc.line, column: doc.column },
    spec,
    doc,
  };
  return { objects: [object], diagnostics };
};

const LAYOUT_FOLDERS = ['entity-types'];

/** The pure half of the `entity-type` kind. */
export const entityTypeModel: KindModel<EntityTypeManifest, LiveEntityType> = {
  kind: KIND,
  title: 'entity type',
  builtInIds: BUILT_IN_ENTITY_TYPES,
  layout: { identity: '`type`', folders: LAYOUT_FOLDERS, ownsFile: ownsFilesIn(LAYOUT_FOLDERS, YAML_OR_JSON_FILE) },
  manifest: {
    schema: entityTypeManifestSchema,
    parse,
    references: () => [],
    checkDesiredSet: checkDefinitionsAgainstTypes,
    canonical: (obj) =>
      canonical({
        type: obj.spec.type,
        name: obj.spec.name,
        description: nonEmpty(obj.spec.description),
        schema: obj.spec.schema,
        iconTag: comparedIconTag(obj.spec.iconTag),
      }),
    reservedFor: (obj) => reservedEntityType(obj.id),
  },
  live: {
    canonical: (obj: LiveObject<LiveEntityType>, desired?: DesiredObject<EntityTypeManifest>) =>
      canonical({
        type: obj.state.definition.type,
        name: nonEmpty(obj.state.definition.name),
        description: nonEmpty(obj.state.definition.description),
        schema: obj.state.definition.schema,
        // Compared only when the manifest names a built-in icon: any other is replaced by the server.
        iconTag: comparedLiveIconTag(obj.state.definition.iconTag, desired?.spec.iconTag),
      }),
  },
  write: { updateOrder: entityTypeUpdateOrder },
  prune: {
    action: 'delete',
    keptWhileHeld: {
      refusal: 'Cortex refuses to delete an entity type that entities still have',
      remedy:
        'delete them in Cortex, or give them another type; with `pruneEntities: delete` a prune deletes the entities it removes instead of archiving them',
    },
  },
  export: { toManifestFiles },
};
