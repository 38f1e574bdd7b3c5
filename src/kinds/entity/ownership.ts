/**
 * The ownership marker cortex-sync writes into every entity it manages: a reserved key of the
 * descriptor's `x-cortex-custom-metadata`,
 *
 *   x-cortex-custom-metadata:
 *     cortex-sync: { source: <sourceId> }        # `protected: true` may be added live by users
 *
 * It says which repository manages the entity (prune only touches its own) and lets users protect
 * an entity from prune without touching git. It is not the user's data: it is added on every write
 * and removed from both sides before they are compared.
 */
import type { JsonObject, JsonValue } from '../../core/model.js';

/** The reserved `x-cortex-custom-metadata` key; a manifest that sets it is invalid. */
export const OWNERSHIP_METADATA_KEY = 'cortex-sync';

/** The descriptor key that holds custom metadata (and the marker). */
export const CUSTOM_METADATA_KEY = 'x-cortex-custom-metadata';

export interface OwnershipMarker {
  /** The source id of the repository that manages the entity. */
  source: string;
  /** Set by users on the live entity: prune must never archive or delete it. */
  protected?: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The `info` block of a descriptor, if it has one. */
const infoOf = (descriptor: unknown): Record<string, unknown> | undefined =>
  isObject(descriptor) && isObject(descriptor.info) ? descriptor.info : undefined;

/**
 * Reads the marker from a live descriptor. Tolerates the `{value, description}` wrapper custom
 * metadata may come back in, and `protected` written as the string "true".
 */
export const readOwnershipMarker = (descriptor: unknown): OwnershipMarker | undefined => {
  const metadata = infoOf(descriptor)?.[CUSTOM_METADATA_KEY];
  if (!isObject(metadata)) return undefined;
  let marker = metadata[OWNERSHIP_METADATA_KEY];
  if (isObject(marker) && marker.source === undefined && isObject(marker.value)) marker = marker.value;
  if (!isObject(marker) || typeof marker.source !== 'string' || marker.source === '') return undefined;
  const isProtected = marker.protected === true || marker.protected === 'true';
  return isProtected ? { source: marker.source, protected: true } : { source: marker.source };
};

/** Does the manifest itself set the reserved key? (It is an error: the key belongs to cortex-sync.) */
export const setsReservedOwnershipKey = (descriptor: unknown): boolean => {
  const metadata = infoOf(descriptor)?.[CUSTOM_METADATA_KEY];
  return isObject(metadata) && Object.hasOwn(metadata, OWNERSHIP_METADATA_KEY);
};

/**
 * A copy of `descriptor` with the marker set (other custom metadata kept, in order, marker last).
 * Does not modify its argument.
 */
export const withOwnershipMarker = (descriptor: JsonObject, marker: OwnershipMarker): JsonObject => {
  const info = isObject(descriptor.info) ? descriptor.info : {};
  const metadata = isObject(info[CUSTOM_METADATA_KEY]) ? info[CUSTOM_METADATA_KEY] : {};
  const markerValue: JsonObject = marker.protected
    ? { source: marker.source, protected: true }
    : { source: marker.source };
  const { [OWNERSHIP_METADATA_KEY]: _previous, ...rest } = metadata;
  return {
    ...descriptor,
    info: { ...info, [CUSTOM_METADATA_KEY]: { ...rest, [OWNERSHIP_METADATA_KEY]: markerValue } },
  };
};

/**
 * A copy of an `info` block without the marker; `x-cortex-custom-metadata` disappears when the
 * marker was its only key (the user never wrote it).
 */
export const withoutOwnershipMarker = (info: JsonObject): JsonObject => {
  const metadata = info[CUSTOM_METADATA_KEY];
  if (!isObject(metadata) || !Object.hasOwn(metadata, OWNERSHIP_METADATA_KEY)) return info;
  const { [OWNERSHIP_METADATA_KEY]: _marker, ...rest } = metadata as Record<string, JsonValue>;
  const { [CUSTOM_METADATA_KEY]: _metadata, ...others } = info;
  return Object.keys(rest).length > 0 ? { ...others, [CUSTOM_METADATA_KEY]: rest } : others;
};
