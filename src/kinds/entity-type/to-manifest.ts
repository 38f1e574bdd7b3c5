/**
 * Live entity types → manifests under `.cortex/entity-types/` (`export`). Pure.
 *
 * Only the workspace's own types: the types Cortex ships (`source: CORTEX`) are not the
 * workspace's to declare. Left out: `source` and an empty description. The icon is written as the
 * server answers it, whichever it is: which icon Cortex gives a type without one is not known, so
 * no icon is taken for that default and dropped (a user may have chosen it). A built-in icon is
 * compared as written, so the manifest equals the live type whatever the server's default is.
 */
import { manifestPath } from '../shared/file-name.js';
import type { JsonObject, JsonValue, LiveObject } from '../../core/model.js';
import type { ManifestFile } from '../types.js';
import type { LiveEntityType } from './schema.js';

const FOLDER = '.cortex/entity-types';

/** The manifest document of one live entity type: `type`, `name`, `description`, `iconTag`, `schema`. */
const entityTypeManifestDocument = (obj: LiveObject<LiveEntityType>): JsonObject => {
  const { definition } = obj.state;
  const document: JsonObject = { type: definition.type, name: definition.name || definition.type };
  if (definition.description) document.description = definition.description;
  if (definition.iconTag) document.iconTag = definition.iconTag;
  // Plain JSON in the server's key order (the schema's author wrote it so: `type`, `required`, `properties`).
  const schema = JSON.parse(JSON.stringify(definition.schema ?? {})) as JsonValue;
  document.schema = schema !== null && typeof schema === 'object' && !Array.isArray(schema) ? schema : {};
  return document;
};

/** One file per custom entity type, named by its `type`. */
export const toManifestFiles = (live: readonly LiveObject<LiveEntityType>[]): ManifestFile[] =>
  live
    .filter((obj) => obj.state.definition.source !== 'CORTEX')
    .map((obj) => ({
      path: manifestPath(FOLDER, obj.id),
      document: entityTypeManifestDocument(obj),
      ids: [obj.id],
    }));
