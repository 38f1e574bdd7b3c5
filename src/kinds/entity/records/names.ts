/**
 * Names cortex-sync keeps for its own records in the workspace: the custom entity type that
 * holds them and the tag prefixes of each source's ownership record and apply lease. A manifest
 * may not declare them (the entity and entity-type kinds' `manifest.reservedFor`): a repository that could
 * write another source's record could make that source prune (or stop pruning) whatever it liked.
 */

/** The custom entity type of ownership records (inventories and leases). */
export const RECORD_ENTITY_TYPE = 'cortex-sync-inventory';
/** Tag prefixes of the records: `cortex-sync-inventory-<slug>-<hash>`, `cortex-sync-lease-<slug>-<hash>`. */
const RESERVED_TAG_PREFIXES: readonly string[] = [`${RECORD_ENTITY_TYPE}-`, 'cortex-sync-lease-'];

/** Is `tag` the record type's name or a record's tag (in any case)? */
const isReservedTag = (tag: string): boolean =>
  tag === RECORD_ENTITY_TYPE || RESERVED_TAG_PREFIXES.some((prefix) => tag.toLowerCase().startsWith(prefix));

/** What an entity of this tag and type would overwrite of the records, if anything (for `manifest.reservedFor`). */
export const reservedEntity = (tag: string, type: string | undefined): string | undefined => {
  if (isReservedTag(tag)) return `the tag \`${tag}\``;
  if (type === RECORD_ENTITY_TYPE) return `an entity of type \`${RECORD_ENTITY_TYPE}\``;
  return undefined;
};

/** What an entity type of this name would overwrite of the records, if anything (for `manifest.reservedFor`). */
export const reservedEntityType = (type: string): string | undefined =>
  type === RECORD_ENTITY_TYPE ? `the entity type \`${RECORD_ENTITY_TYPE}\`` : undefined;
