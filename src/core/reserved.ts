/**
 * Names cortex-sync keeps for its own records in the workspace: the entity type that holds them
 * and the tags of each source's inventory and lease. A manifest may not declare them: a repository
 * that could write another source's inventory could make that source prune (or stop pruning)
 * whatever it liked. Pure: the planner reports a declared one as an error.
 */
import type { DesiredObject, Diagnostic } from './model.js';

/** The custom entity type of ownership records (inventories and leases). */
export const RECORD_ENTITY_TYPE = 'cortex-sync-inventory';
/** Tag prefixes of the records: `cortex-sync-inventory-<slug>-<hash>`, `cortex-sync-lease-<slug>-<hash>`. */
export const RESERVED_TAG_PREFIXES: readonly string[] = [`${RECORD_ENTITY_TYPE}-`, 'cortex-sync-lease-'];

const isReservedTag = (tag: string): boolean =>
  tag === RECORD_ENTITY_TYPE || RESERVED_TAG_PREFIXES.some((prefix) => tag.toLowerCase().startsWith(prefix));

/**
 * The error for a desired object that is (or would overwrite) an ownership record: an entity type
 * of the record type's name, an entity of that type, or an entity with a record's tag.
 */
export const reservedObjectProblem = (
  obj: DesiredObject,
  entityTypeOf: ((o: DesiredObject) => string | undefined) | undefined,
): Diagnostic | undefined => {
  let what: string | undefined;
  if (obj.kind === 'entity-type' && obj.id === RECORD_ENTITY_TYPE) what = `the entity type \`${RECORD_ENTITY_TYPE}\``;
  else if (obj.kind === 'entity' && isReservedTag(obj.id)) what = `the tag \`${obj.id}\``;
  else if (obj.kind === 'entity' && entityTypeOf?.(obj) === RECORD_ENTITY_TYPE)
    what = `an entity of type \`${RECORD_ENTITY_TYPE}\``;
  if (what === undefined) return undefined;
  return {
    severity: 'error',
    code: 'reserved',
    message: `${what} is reserved for cortex-sync's ownership records and cannot be declared in a manifest`,
    file: obj.source.file,
    line: obj.source.line,
    column: obj.source.column,
    kind: obj.kind,
    id: obj.id,
  };
};
