/**
 * Live entity types → manifests under `.cortex/entity-types/` (`export`). Pure.
 *
 * Only the workspace's own types: the types Cortex ships (`source: CORTEX`) are not the
 * workspace's to declare. Left out: `source`, an empty description, and the icon when it is the
 * one Cortex shows by default (a manifest without `iconTag` gets it too).
 */
import { manifestPath } from '../../export/file-name.js';
import type { JsonObject, JsonValue, LiveObject } from '../../core/model.js';
import type { ManifestFile } from '../types.js';
import type { LiveEntityType } from './schema.js';

const FOLDER = '.cortex/entity-types';

/**
 * The icon Cortex shows when none was set (the same list as `SERVER_DEFAULT_ICON_TAGS` in
 * `index.ts`, which imports this module: importing it back would be a cycle).
 */
const SERVER_DEFAULT_ICON_TAGS: readonly string[] = ['Cortex-builtin::Box'];

/** The manifest document of one live entity type: `type`, `name`, `description`, `iconTag`, `schema`. */
export const entityTypeManifestDocument = (obj: LiveObject<LiveEntityType>): JsonObject => {
  const { definition } = obj.state;
  const document: JsonObject = { type: definition.type, name: definition.name || definition.type };
  if (definition.description) document.description = definition.description;
  if (definition.iconTag && !SERVER_DEFAULT_ICON_TAGS.includes(definition.iconTag)) {
    document.iconTag = definition.iconTag;
  }
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
