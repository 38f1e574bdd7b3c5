/**
 * Live entities → descriptor manifests (`export`). Pure.
 *
 * Teams go under `.cortex/teams/`, domains under `.cortex/domains/`, every other entity under
 * `.cortex/catalog/`, one file per entity named by its tag. The descriptor is the one the API
 * stores, minus what is not the user's: the ownership marker, `x-cortex-*` keys the API drops,
 * `null` and empty `x-cortex-*` values; legacy keys are written under their current names. Keys
 * come in a fixed readable order: `openapi`, `info` (`title`, `x-cortex-tag`, `x-cortex-type`,
 * `description`, then the `x-cortex-*` blocks), then anything else alphabetically.
 */
import { manifestPath } from '../shared/file-name.js';
import type { JsonObject, JsonValue, LiveObject } from '../../core/model.js';
import type { ManifestFile } from '../types.js';
import type { EntityLive } from './live.js';
import { DEFAULT_ENTITY_TYPE, KNOWN_CORTEX_INFO_KEYS, renameLegacyInfoKeys, toJsonValue } from './normalize.js';
import { withoutClaims } from './merge.js';
import { withoutOwnershipMarker } from './ownership.js';

/** `openapi` written when the live descriptor has none (the value is not compared). */
const EXPORT_OPENAPI_VERSION = '3.0.1';

/** Where an entity of each type goes; others go to `.cortex/catalog`. */
const FOLDER_BY_TYPE: Readonly<Record<string, string>> = { team: '.cortex/teams', domain: '.cortex/domains' };

/** The order of `info` keys: identity first, then the blocks a reader looks for. */
const INFO_KEY_ORDER: readonly string[] = [
  'title',
  'x-cortex-tag',
  'x-cortex-type',
  'description',
  'x-cortex-owners',
  'x-cortex-groups',
  'x-cortex-parents',
  'x-cortex-children',
  'x-cortex-team',
  'x-cortex-definition',
  'x-cortex-custom-metadata',
  'x-cortex-link',
  'x-cortex-git',
  'x-cortex-oncall',
  'x-cortex-slack',
  'x-cortex-dependency',
  'x-cortex-relationships',
];

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isEmpty = (value: JsonValue): boolean =>
  value === null || (Array.isArray(value) ? value.length === 0 : isObject(value) && Object.keys(value).length === 0);

/** `object`'s keys: those in `order` first (in that order), then the rest alphabetically. */
const ordered = (object: JsonObject, order: readonly string[]): JsonObject => {
  const out: JsonObject = {};
  for (const key of order) if (Object.hasOwn(object, key)) out[key] = object[key] as JsonValue;
  for (const key of Object.keys(object).sort()) if (!Object.hasOwn(out, key)) out[key] = object[key] as JsonValue;
  return out;
};

/** The `info` block a manifest should hold for a live `info`. */
const exportedInfo = (rawInfo: JsonObject): JsonObject => {
  const info: JsonObject = {};
  for (const [key, value] of Object.entries(renameLegacyInfoKeys(withoutClaims(withoutOwnershipMarker(rawInfo))))) {
    const cortexKey = key.startsWith('x-cortex-');
    if (cortexKey && !KNOWN_CORTEX_INFO_KEYS.has(key)) continue;
    if (value === null || (cortexKey && isEmpty(value))) continue;
    info[key] = key === 'x-cortex-type' && typeof value === 'string' ? value.trim() : value;
  }
  return ordered(info, INFO_KEY_ORDER);
};

/** A descriptor from what the catalog summary says (an archived entity read without its descriptor). */
const descriptorFromSummary = (obj: LiveObject<EntityLive>): JsonObject => {
  const summary = obj.state.summary;
  return {
    info: {
      title: summary?.name ?? obj.id,
      'x-cortex-tag': obj.id,
      'x-cortex-type': summary?.type ?? DEFAULT_ENTITY_TYPE,
      ...(summary?.description ? { description: summary.description } : {}),
    },
  };
};

/** The descriptor document to write for one live entity. */
const entityManifestDocument = (obj: LiveObject<EntityLive>): JsonObject => {
  const json = toJsonValue(obj.state.descriptor ?? descriptorFromSummary(obj));
  const descriptor = isObject(json) ? json : {};
  const info = exportedInfo(isObject(descriptor.info) ? descriptor.info : {});
  if (info['x-cortex-tag'] === undefined) info['x-cortex-tag'] = obj.id;
  if (info.title === undefined) info.title = obj.id;
  if (info['x-cortex-type'] === undefined || info['x-cortex-type'] === '') info['x-cortex-type'] = DEFAULT_ENTITY_TYPE;
  const rest: JsonObject = {};
  for (const [key, value] of Object.entries(descriptor)) if (key !== 'openapi' && key !== 'info') rest[key] = value;
  const openapi = typeof descriptor.openapi === 'string' ? descriptor.openapi : EXPORT_OPENAPI_VERSION;
  return { openapi, info: ordered(info, INFO_KEY_ORDER), ...ordered(rest, []) };
};

/** The folder an entity's file goes to, by its type. */
const entityFolder = (type: string): string => FOLDER_BY_TYPE[type] ?? '.cortex/catalog';

/** One manifest file per live entity (see the module comment). */
export const toManifestFiles = (live: readonly LiveObject<EntityLive>[]): ManifestFile[] =>
  live.map((obj) => {
    const document = entityManifestDocument(obj);
    const info = document.info as JsonObject;
    const type = typeof info['x-cortex-type'] === 'string' ? info['x-cortex-type'] : DEFAULT_ENTITY_TYPE;
    return { path: manifestPath(entityFolder(type), obj.id), document, ids: [obj.id] };
  });
