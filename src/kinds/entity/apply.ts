/**
 * Entity writes (docs/adr-0001-entity-writes.md): create and update send the whole descriptor with
 * `POST /api/v1/open-api` (a full replace, so a key removed from the manifest disappears live),
 * with the ownership marker added; archive, unarchive and delete use the catalog endpoints.
 */
import { stringify } from 'yaml';
import { type ApiResponse, encodePathSegment, type HttpMethod } from '../../api/types.js';
import { ApiError, CortexSyncError } from '../../core/errors.js';
import { countOf } from '../../core/plural.js';
import type { Change, DesiredObject, JsonObject } from '../../core/model.js';
import type { ApplyContext, KindChange } from '../types.js';
import type { EntityLive } from './live-state.js';
import { renameLegacyInfoKeys, toJsonValue } from './normalize.js';
import { type OwnershipMarker, withOwnershipMarker } from './ownership.js';
import type { EntityDescriptor } from './schema.js';
import { readViolations, violationDiagnostics } from './violations.js';

type EntityChange = KindChange<EntityDescriptor, EntityLive>;

/** The content type the descriptor endpoints take. */
export const OPENAPI_CONTENT_TYPE = 'application/openapi;charset=UTF-8';

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The descriptor to send for a manifest: plain JSON, legacy keys under their current names,
 * `null` (unset) `info` keys left out, `x-cortex-type` without surrounding whitespace, and the
 * ownership marker in `x-cortex-custom-metadata`.
 */
export const wireDescriptor = (spec: unknown, marker: OwnershipMarker | undefined): JsonObject => {
  const json = toJsonValue(spec);
  if (!isObject(json)) throw new CortexSyncError('INTERNAL', 'an entity manifest is not an object');
  const info: JsonObject = {};
  for (const [key, value] of Object.entries(renameLegacyInfoKeys(isObject(json.info) ? json.info : {}))) {
    if (value !== null) info[key] = key === 'x-cortex-type' && typeof value === 'string' ? value.trim() : value;
  }
  return marker ? withOwnershipMarker({ ...json, info }, marker) : { ...json, info };
};

/**
 * The YAML text of a descriptor. Written for a YAML 1.1 reader (the vendor's): strings that 1.1
 * would retype (`yes`, `on`, `0777`, timestamps) are quoted, so they come back as strings. No line
 * folding.
 */
export const descriptorYaml = (descriptor: JsonObject): string =>
  stringify(descriptor, { version: '1.1', lineWidth: 0, minContentWidth: 0 });

/**
 * The marker for a write of `change` by this source; a live `protected: true` is kept. A run
 * without a source id writes none (the entity stays unmanaged until an apply with an id adopts it).
 */
const markerFor = (change: Change, sourceId: string | undefined): OwnershipMarker | undefined =>
  sourceId === undefined
    ? undefined
    : change.live?.protected
      ? { source: sourceId, protected: true }
      : { source: sourceId };

/** The YAML `apply` sends for a create/update `change` (also used to place line-only violations). */
export const descriptorTextFor = (change: Change, sourceId: string | undefined): string | undefined =>
  change.desired ? descriptorYaml(wireDescriptor(change.desired.spec, markerFor(change, sourceId))) : undefined;

const catalogPath = (tag: string, suffix = ''): string => `/api/v1/catalog/${encodePathSegment(tag)}${suffix}`;

export const unarchiveEntity = async (change: EntityChange, ctx: ApplyContext): Promise<void> => {
  await ctx.client.request({
    operation: `unarchive entity ${change.id}`,
    method: 'PUT',
    path: catalogPath(change.id, '/unarchive'),
  });
};

const upsert = async (
  change: Extract<EntityChange, { desired: DesiredObject<EntityDescriptor> }>,
  ctx: ApplyContext,
): Promise<void> => {
  const text = descriptorYaml(wireDescriptor(change.desired.spec, markerFor(change, ctx.options.sourceId)));
  const operation = `upsert entity ${change.id}`;
  const path = '/api/v1/open-api';
  const res = await ctx.client.request<unknown>({
    operation,
    method: 'POST',
    path,
    body: text,
    contentType: OPENAPI_CONTENT_TYPE,
    // An upsert of the whole descriptor: sending it twice gives the same entity.
    idempotent: true,
  });
  judgeDescriptorAnswer(res, { operation, method: 'POST', path }, change, text, ctx);
};

/**
 * The API's answer to a descriptor write (upsert or merge): a 2xx that still says "not ok" is a
 * failure, explained like a 400; violations of a write that succeeded are warnings.
 */
export const judgeDescriptorAnswer = (
  res: ApiResponse,
  sent: { operation: string; method: HttpMethod; path: string },
  change: Change,
  text: string,
  ctx: ApplyContext,
): void => {
  const read = readViolations(res.body);
  if (read?.ok === false) {
    throw new ApiError('API', {
      ...sent,
      status: res.status,
      apiMessage: `descriptor rejected (${countOf(read.violations.length, 'violation')})`,
      body: res.body,
      attempts: res.attempts,
      durationMs: res.durationMs,
    });
  }
  if (read && read.violations.length > 0) ctx.warn?.(violationDiagnostics(change, res.body, text));
};

/** Applies one entity change (see the module comment). */
export const applyEntityChange = async (change: EntityChange, ctx: ApplyContext): Promise<void> => {
  switch (change.action) {
    case 'create':
    case 'update':
      if (change.unarchive) await unarchiveEntity(change, ctx);
      await upsert(change, ctx);
      return;
    case 'archive':
      await ctx.client.request({
        operation: `archive entity ${change.id}`,
        method: 'PUT',
        path: catalogPath(change.id, '/archive'),
      });
      return;
    case 'delete':
      // Already gone is what a delete wants.
      await ctx.client.request({
        operation: `delete entity ${change.id}`,
        method: 'DELETE',
        path: catalogPath(change.id),
        acceptStatus: [404],
      });
      return;
    case 'noop':
      if (change.unarchive) await unarchiveEntity(change, ctx);
      return;
  }
};
