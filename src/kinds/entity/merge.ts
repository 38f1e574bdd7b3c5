/**
 * Merge writes of entities (`entityWrites: merge`, docs/adr-0004-co-ownership.md), pure: which key
 * paths a manifest declares, the part of a descriptor those paths cover (what the plan compares),
 * and the body of the `PATCH /api/v1/open-api` that writes them.
 *
 * A key path is where a map stops merging: PATCH merges maps key by key and replaces anything else
 * (a list, a scalar), so a path goes down through maps to the first value that is not a non-empty
 * map (`info.x-cortex-custom-metadata.tier`, `info.x-cortex-owners`). Segments are joined by `.`;
 * a segment's own `~` and `.` are written `~0` and `~1` (JSON Pointer's escaping), so a custom
 * metadata key `a.b` is one segment. The tag is the entity's identity, not a key: never declared.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { JsonObject, JsonValue } from '../../core/model.js';
import { LEGACY_CORTEX_INFO_KEYS } from './normalize.js';
import { CUSTOM_METADATA_KEY, OWNERSHIP_METADATA_KEY } from './ownership.js';

const isMap = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const escapeSegment = (segment: string): string => segment.replaceAll('~', '~0').replaceAll('.', '~1');
const unescapeSegment = (segment: string): string => segment.replaceAll('~1', '.').replaceAll('~0', '~');

/** The key path of these segments. */
export const keyPathOf = (segments: readonly string[]): string => segments.map(escapeSegment).join('.');

/** The segments of a key path. */
export const segmentsOf = (path: string): string[] => path.split('.').map(unescapeSegment);

/** Does one path hold the other (or are they the same)? Two sources writing them would overwrite each other. */
export const pathsOverlap = (a: string, b: string): boolean =>
  a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);

/** The tag's path: identity, never a declared key in merge mode (replace mode records it with its keys). */
export const TAG_PATH = keyPathOf(['info', 'x-cortex-tag']);
const MARKER_PATH = keyPathOf(['info', CUSTOM_METADATA_KEY, OWNERSHIP_METADATA_KEY]);

/**
 * A source that writes keys into an entity it does not own names itself on the entity, in a
 * custom metadata key of its own (`cortex-sync-merge-` and 12 hex digits of the source id's
 * SHA-256, holding `{source: <source id>}`): its ownership record says which keys it declares, and
 * a list of the records can leave that record out, so the entity itself (confirmed by a read by
 * identity like every declared entity) says whose records must be read. One key per source, so
 * sources never write each other's (PATCH merges custom metadata key by key).
 */
export const CLAIM_KEY_PREFIX = 'cortex-sync-merge-';

/** The custom metadata key a source names itself in (see `CLAIM_KEY_PREFIX`). */
export const claimKeyOf = (source: string): string =>
  `${CLAIM_KEY_PREFIX}${createHash('sha256').update(source).digest('hex').slice(0, 12)}`;

/** The key path of a source's claim on an entity. */
export const claimPathOf = (source: string): string => keyPathOf(['info', CUSTOM_METADATA_KEY, claimKeyOf(source)]);

const CLAIMS_PREFIX = `${keyPathOf(['info', CUSTOM_METADATA_KEY])}.${CLAIM_KEY_PREFIX}`;

/**
 * The sources a descriptor's claims name, sorted. A claim whose key is not its source's (written by
 * hand) is ignored: it could only send this run to read a record by its tag.
 */
export const claimantsOf = (descriptor: JsonValue | null | undefined): string[] => {
  const info = isMap(descriptor) ? descriptor.info : undefined;
  const metadata = isMap(info) ? info[CUSTOM_METADATA_KEY] : undefined;
  if (!isMap(metadata)) return [];
  const out = new Set<string>();
  for (const [key, raw] of Object.entries(metadata)) {
    if (!key.startsWith(CLAIM_KEY_PREFIX)) continue;
    // Custom metadata may come back wrapped in `{value, description}`.
    const value = isMap(raw) && raw.source === undefined && isMap(raw.value) ? raw.value : raw;
    const source = isMap(value) ? value.source : undefined;
    if (typeof source === 'string' && source !== '' && claimKeyOf(source) === key) out.add(source);
  }
  return [...out].sort();
};

/** A copy of an `info` block without the sources' claims (an export: they are cortex-sync's, like the marker). */
export const withoutClaims = (info: JsonObject): JsonObject => {
  const metadata = info[CUSTOM_METADATA_KEY];
  if (!isMap(metadata) || !Object.keys(metadata).some((k) => k.startsWith(CLAIM_KEY_PREFIX))) return info;
  const kept = Object.fromEntries(Object.entries(metadata).filter(([k]) => !k.startsWith(CLAIM_KEY_PREFIX)));
  const { [CUSTOM_METADATA_KEY]: _metadata, ...others } = info;
  return Object.keys(kept).length > 0 ? { ...others, [CUSTOM_METADATA_KEY]: kept } : others;
};

/**
 * The leaf paths of a value. An empty map declares nothing: PATCH merges it into nothing, so
 * claiming its path would compare (and later remove) the whole map, other writers' keys too.
 */
const leafPaths = (value: JsonValue, at: string[], out: string[]): void => {
  if (isMap(value)) {
    for (const [key, item] of Object.entries(value)) leafPaths(item, [...at, key], out);
    return;
  }
  out.push(keyPathOf(at));
};

/**
 * The key paths a manifest declares, sorted: the keys its document writes (a key the schema only
 * defaults, such as `x-cortex-type`, is not declared), under their current names, with the values
 * they have in `wire` (the descriptor as sent: `null` keys are left out there, so they declare
 * nothing). `openapi` and the tag are not keys; the ownership marker is cortex-sync's.
 */
export const declaredKeyPaths = (raw: unknown, wire: JsonObject): string[] => {
  const out: string[] = [];
  const rawRoot = isMap(raw) ? raw : {};
  for (const key of Object.keys(rawRoot)) {
    if (key === 'openapi' || key === 'info') continue;
    const value = wire[key];
    if (value !== undefined) leafPaths(value, [key], out);
  }
  const rawInfo = isMap(rawRoot.info) ? rawRoot.info : {};
  const wireInfo = isMap(wire.info) ? wire.info : {};
  for (const key of Object.keys(rawInfo)) {
    const name = LEGACY_CORTEX_INFO_KEYS[key] ?? key;
    const value = wireInfo[name];
    if (value !== undefined) leafPaths(value, ['info', name], out);
  }
  return [...new Set(out)]
    .filter((p) => p !== TAG_PATH && p !== MARKER_PATH && !p.startsWith(`${MARKER_PATH}.`) && !isClaimPath(p))
    .sort();
};

/** Is this path a source's claim, or inside one? cortex-sync's, never a declared key. */
const isClaimPath = (path: string): boolean => path.startsWith(CLAIMS_PREFIX);

/** The value at `segments` of a descriptor, if there is one. */
const valueAt = (root: JsonValue, segments: readonly string[]): JsonValue | undefined => {
  let at: JsonValue | undefined = root;
  for (const segment of segments) {
    if (!isMap(at) || !Object.hasOwn(at, segment)) return undefined;
    at = at[segment];
  }
  return at;
};

/**
 * Sets `value` at `segments`, making the maps on the way (a non-map on the way is replaced). Own
 * properties only: a segment named `__proto__` (a hand-edited record, a live descriptor) is a key
 * like any other, never a prototype.
 */
const setAt = (root: JsonObject, segments: readonly string[], value: JsonValue): void => {
  const put = (into: JsonObject, key: string, item: JsonValue): void => {
    Object.defineProperty(into, key, { value: item, enumerable: true, writable: true, configurable: true });
  };
  let at = root;
  segments.slice(0, -1).forEach((segment) => {
    const next = Object.hasOwn(at, segment) ? at[segment] : undefined;
    if (isMap(next)) at = next;
    else {
      const made: JsonObject = {};
      put(at, segment, made);
      at = made;
    }
  });
  const last = segments[segments.length - 1];
  if (last !== undefined) put(at, last, value);
};

/** The paths of `paths` present in a descriptor. */
export const presentPaths = (descriptor: JsonValue, paths: readonly string[]): string[] =>
  paths.filter((p) => valueAt(descriptor, segmentsOf(p)) !== undefined);

/**
 * The part of a descriptor these paths cover, with its tag: what merge mode compares (a key no
 * path covers is neither compared nor written).
 */
export const projectDescriptor = (descriptor: JsonValue, tag: string, paths: readonly string[]): JsonObject => {
  const out: JsonObject = { info: { 'x-cortex-tag': tag } };
  for (const path of paths) {
    const segments = segmentsOf(path);
    const value = valueAt(descriptor, segments);
    if (value !== undefined) setAt(out, segments, value);
  }
  return out;
};

/**
 * The paths this source declared at its last apply (`before`) that it declares no more, neither
 * itself nor through a path inside or around it: they are removed (a path recorded by an older
 * version at a coarser level is removed only when nothing under it is declared now). Never the
 * ownership marker nor a map holding it (`info.x-cortex-custom-metadata`): removing that map would
 * remove the owner's marker and every other writer's metadata, which the plan cannot show as this
 * source's; such a path is left live (nothing dropped is the safe direction).
 */
export const droppedPaths = (before: readonly string[], now: readonly string[]): string[] =>
  before.filter(
    (p) => p !== TAG_PATH && !pathsOverlap(p, MARKER_PATH) && !isClaimPath(p) && !now.some((n) => pathsOverlap(n, p)),
  );

/** Every string in a value (keys too), for choosing a delete marker none of them equals. */
const stringsOf = (value: JsonValue, out: Set<string>): void => {
  if (typeof value === 'string') out.add(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (isMap(value))
    for (const [key, item] of Object.entries(value)) {
      out.add(key);
      stringsOf(item, out);
    }
};

/**
 * A delete marker for one request: random, and checked against every string of the values given
 * (the body sent and the descriptor as read; the API removes every key, stored or sent, whose
 * merged value equals it), so no value of anyone's can equal it. `random` is for tests.
 */
export const chooseDeleteMarker = (
  values: readonly JsonValue[],
  random: () => string = () => randomBytes(16).toString('hex'),
): string => {
  const taken = new Set<string>();
  for (const value of values) stringsOf(value, taken);
  for (;;) {
    const marker = `cortex-sync-delete-${random()}`;
    if (!taken.has(marker)) return marker;
  }
};

/** What one merge write sends. */
export interface MergePatch {
  body: JsonObject;
  /** Undefined when nothing is removed (the request then names no marker). */
  deleteMarker?: string;
}

/**
 * The PATCH of a merge write: the declared paths' values from `wire` (lists and scalars whole,
 * maps key by key), the tag, `openapi` when the manifest has it, `ownership` set at the marker's
 * path when this source writes its marker, and each dropped path the live descriptor still has set
 * to a delete marker chosen for this request; `claimant` names its source on the entity.
 */
export const mergePatch = (input: {
  tag: string;
  wire: JsonObject;
  declared: readonly string[];
  dropped: readonly string[];
  live: JsonValue;
  ownership?: JsonObject;
  /** The source that names itself on the entity (it writes keys into an entity it does not own). */
  claimant?: string;
  random?: () => string;
}): MergePatch => {
  const body = projectDescriptor(input.wire, input.tag, input.declared);
  if (input.wire.openapi !== undefined) body.openapi = input.wire.openapi;
  if (input.ownership !== undefined) setAt(body, segmentsOf(MARKER_PATH), input.ownership);
  if (input.claimant !== undefined) setAt(body, segmentsOf(claimPathOf(input.claimant)), { source: input.claimant });
  const removed = presentPaths(input.live, input.dropped);
  if (removed.length === 0) return { body };
  const deleteMarker = chooseDeleteMarker([body, input.live], input.random);
  for (const path of removed) setAt(body, segmentsOf(path), deleteMarker);
  return { body, deleteMarker };
};
