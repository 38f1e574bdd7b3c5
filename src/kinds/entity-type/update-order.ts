/**
 * Which goes first: an entity type's update, or the write of an entity of that type? Cortex checks
 * both ways: a schema change is refused while an entity of the type does not satisfy the new
 * schema, and an entity write is refused when its definition does not satisfy the type's schema
 * in force. So:
 * - a type update that only widens (every entity as it is now satisfies the new schema) goes
 *   first, so the entities may use what it allows;
 * - one that tightens goes after the writes of the entities that satisfy it only once rewritten
 *   (a required field added to the type and to its entities in one commit), when their new
 *   definitions satisfy the schema in force until then;
 * - when neither order is accepted (an entity needs the new schema and breaks the old one), the
 *   type goes first and the plan warns: `--force-entity-type-schema`, or two steps.
 * A type create always goes first (it has no entities yet). Decided offline from the manifests
 * and the live definitions (ajv, as the offline check of definitions does); nothing guessed.
 */
import type { UpdateOrder } from '../../core/kind-contract.js';
import type { DesiredObject, LiveObject } from '../../core/model.js';
import type { EntityLive } from '../entity/live-state.js';
import { DEFAULT_ENTITY_TYPE } from '../entity/normalize.js';
import type { EntityDescriptor } from '../entity/schema.js';
import { schemaValidator } from './json-schema-ajv.js';
import type { EntityTypeManifest, LiveEntityType } from './schema.js';

/** Does `definition` satisfy `schema`? `undefined` when the schema does not compile (then nothing is decided). */
const satisfies = (schema: unknown, definition: unknown): boolean | undefined => {
  const validate = schemaValidator((schema ?? {}) as object);
  return validate === undefined ? undefined : validate(definition ?? {});
};

const FIRST: UpdateOrder = { order: 'first' };
const AFTER: UpdateOrder = { order: 'after' };
const EITHER: UpdateOrder = { order: 'either' };

interface InfoOfEntity {
  'x-cortex-type'?: unknown;
  'x-cortex-definition'?: unknown;
}

/** The entity's type and definition as they are live (undefined when only a summary was read). */
const liveEntity = (live: LiveObject | undefined): { type: string; definition: unknown } | undefined => {
  if (live === undefined || live.kind !== 'entity' || live.archived) return undefined;
  const descriptor = (live.state as EntityLive).descriptor;
  if (!descriptor) return undefined;
  const info = (descriptor as { info?: InfoOfEntity }).info ?? {};
  const type = typeof info['x-cortex-type'] === 'string' ? info['x-cortex-type'].trim() : DEFAULT_ENTITY_TYPE;
  return { type, definition: info['x-cortex-definition'] ?? {} };
};

/** See the module comment. */
export const entityTypeUpdateOrder = (
  update: { desired: DesiredObject<EntityTypeManifest>; live: LiveObject<LiveEntityType> },
  referrer: { desired: DesiredObject; live?: LiveObject },
): UpdateOrder => {
  if (referrer.desired.kind !== 'entity') return FIRST;
  const type = update.desired.id;
  const newSchema = update.desired.spec.schema;
  const oldSchema = update.live.state.definition.schema ?? {};
  const info = (referrer.desired.spec as EntityDescriptor).info;
  const staysOfType = info['x-cortex-type'].trim() === type;
  const fitsOld = staysOfType ? satisfies(oldSchema, info['x-cortex-definition'] ?? {}) === true : true;
  const now = liveEntity(referrer.live);
  // Only an entity of this type now is checked when the type changes.
  const blocksNew = now !== undefined && now.type === type && satisfies(newSchema, now.definition) === false;
  if (!blocksNew) return fitsOld ? EITHER : FIRST;
  if (fitsOld) return AFTER;
  return {
    order: 'first',
    conflict:
      `the new schema of entity type \`${type}\` rejects entity \`${referrer.desired.id}\` as it is now, ` +
      `and its new x-cortex-definition does not satisfy the schema in force: Cortex refuses this change in either order. ` +
      `Pass --force-entity-type-schema (the type is written first), or change it in two commits (first a schema that accepts both)`,
  };
};
