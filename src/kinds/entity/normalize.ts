/**
 * Canonical comparable forms of entity descriptors (pure). A manifest and the descriptor the API
 * gives back are turned into the same JSON when they mean the same thing, so a synced entity plans
 * as `noop`; anything a user could notice in Cortex stays visible as a difference.
 *
 * What is made equal, and why:
 * - key order (objects are rebuilt with sorted keys; the API stores descriptors as JSON);
 * - `openapi` (the version line) is ignored;
 * - `x-cortex-type` defaults to `service` (and is compared without surrounding whitespace);
 * - legacy names: `x-cortex-domain-parents` → `x-cortex-parents`, `x-cortex-service-groups` →
 *   `x-cortex-groups` (a scalar becomes a one-item list);
 * - `x-cortex-*` keys the API does not know are dropped (the API drops them; the loader warns);
 * - `null`, `[]` and `{}` directly under `info` mean "not set";
 * - set-like lists are sorted: groups, owners (owner `type` is case-insensitive), parents, children,
 *   dependencies, relationships (and their destinations/sources), team members and groups, Slack
 *   channels. `x-cortex-link` keeps its order (the UI shows links in the order written);
 * - the ownership marker is not the user's data and is removed.
 * Scalars keep their JSON type (`12435` and `"12435"` differ): the write path quotes every string a
 * YAML 1.1 reader would retype, so the API gives back the types the manifest had.
 */
import { sortKeys } from '../../core/diff.js';
import type { JsonObject, JsonValue } from '../../core/model.js';
import { withoutOwnershipMarker } from './ownership.js';
import { KNOWN_CORTEX_KEYS } from './schema.js';

/** The entity type of a descriptor without `x-cortex-type`. */
export const DEFAULT_ENTITY_TYPE = 'service';

/**
 * `x-cortex-*` keys of `info` the API keeps; every other `x-cortex-*` key is silently dropped by
 * the API. One list, shared with the schema (which warns about the others).
 */
export const KNOWN_CORTEX_INFO_KEYS: ReadonlySet<string> = new Set(KNOWN_CORTEX_KEYS);

/** Deprecated `info` keys the API still reads, and the key each one is today. */
export const LEGACY_CORTEX_INFO_KEYS: Readonly<Record<string, string>> = {
  'x-cortex-domain-parents': 'x-cortex-parents',
  'x-cortex-service-groups': 'x-cortex-groups',
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Plain JSON from parsed YAML or zod output: `undefined` members are left out, Dates become ISO
 * strings, non-finite numbers and other non-JSON values become `null`.
 */
export const toJsonValue = (value: unknown): JsonValue => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : toJsonValue(item)));
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = toJsonValue(item);
    return out;
  }
  return null;
};

const stableKey = (value: JsonValue): string => JSON.stringify(value);

/** Sorts a list of already canonical values by their JSON text. */
const sortedSet = (items: JsonValue[]): JsonValue[] =>
  items
    .map((item) => ({ item, key: stableKey(item) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ item }) => item);

const asList = (value: JsonValue): JsonValue[] => (Array.isArray(value) ? value : [value]);

/** Sorted copy of the list under `key` of an object (when it is a list). */
const withSortedList = (value: JsonValue, key: string): JsonValue => {
  if (!isObject(value)) return value;
  const list = value[key];
  return Array.isArray(list) ? { ...value, [key]: sortedSet(list) } : value;
};

const canonicalOwner = (owner: JsonValue): JsonValue =>
  isObject(owner) && typeof owner.type === 'string' ? { ...owner, type: owner.type.toUpperCase() } : owner;

/** Canonical form of one `info` value, by key (its keys are already sorted). */
const canonicalInfoValue = (key: string, value: JsonValue): JsonValue => {
  switch (key) {
    case 'x-cortex-groups':
      // Groups are strings; a YAML number or boolean item is the same group.
      return [...new Set(asList(value).map((g) => (typeof g === 'string' ? g : stableKey(g))))].sort();
    case 'x-cortex-owners':
      return sortedSet(asList(value).map(canonicalOwner));
    case 'x-cortex-parents':
    case 'x-cortex-children':
    case 'x-cortex-dependency':
      return sortedSet(asList(value));
    case 'x-cortex-relationships':
      return sortedSet(asList(value).map((r) => withSortedList(withSortedList(r, 'destinations'), 'sources')));
    case 'x-cortex-team':
      return withSortedList(withSortedList(value, 'members'), 'groups');
    case 'x-cortex-slack':
      return withSortedList(value, 'channels');
    default:
      return value;
  }
};

const isEmpty = (value: JsonValue): boolean =>
  value === null || (Array.isArray(value) ? value.length === 0 : isObject(value) && Object.keys(value).length === 0);

/** `info` with legacy keys renamed (merged into the current key when both are set). */
export const renameLegacyInfoKeys = (info: JsonObject): JsonObject => {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(info)) {
    const target = LEGACY_CORTEX_INFO_KEYS[key] ?? key;
    const previous = out[target];
    if (previous === undefined || previous === null) {
      out[target] = target !== key && value !== null ? asList(value) : value;
    } else if (value !== null) {
      out[target] = [...asList(previous), ...asList(value)];
    }
  }
  return out;
};

/** Canonical `info`: see the module comment. */
const canonicalInfo = (rawInfo: JsonObject): JsonObject => {
  const info = renameLegacyInfoKeys(withoutOwnershipMarker(rawInfo));
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(info)) {
    const cortexKey = key.startsWith('x-cortex-');
    if (cortexKey && !KNOWN_CORTEX_INFO_KEYS.has(key)) continue;
    if (value === null || (cortexKey && isEmpty(value))) continue;
    out[key] = canonicalInfoValue(key, sortKeys(value));
  }
  const type = out['x-cortex-type'];
  if (typeof type === 'string') out['x-cortex-type'] = type.trim() || DEFAULT_ENTITY_TYPE;
  else if (type === undefined) out['x-cortex-type'] = DEFAULT_ENTITY_TYPE;
  return withSortedTopKeys(out);
};

/** `object` with its own keys sorted; its values are already canonical (sorted deeply once). */
const withSortedTopKeys = (object: JsonObject): JsonObject => {
  const out: JsonObject = {};
  for (const key of Object.keys(object).sort()) out[key] = object[key] as JsonValue;
  return out;
};

/**
 * The canonical comparable form of a descriptor (a manifest's or the API's). Equal forms ⇔ the
 * entity is in sync. Not a descriptor to send: see `wireDescriptor` in `apply.ts`.
 */
export const canonicalDescriptor = (descriptor: unknown): JsonValue => {
  const json = toJsonValue(descriptor);
  if (!isObject(json)) return json;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(json)) {
    if (key === 'openapi') continue;
    out[key] = key === 'info' && isObject(value) ? canonicalInfo(value) : sortKeys(value);
  }
  return withSortedTopKeys(out);
};

/** `x-cortex-type` of a descriptor, `service` when it has none. */
export const entityTypeOfDescriptor = (descriptor: unknown): string => {
  const info = isObject(descriptor) ? descriptor.info : undefined;
  const type = isObject(info) ? info['x-cortex-type'] : undefined;
  return typeof type === 'string' && type !== '' ? type : DEFAULT_ENTITY_TYPE;
};

/** `x-cortex-tag` of a descriptor, if it is a non-empty string. */
export const tagOfDescriptor = (descriptor: unknown): string | undefined => {
  const info = isObject(descriptor) ? descriptor.info : undefined;
  const tag = isObject(info) ? info['x-cortex-tag'] : undefined;
  return typeof tag === 'string' && tag !== '' ? tag : undefined;
};
