/** Entity types every workspace has; they are never declared, created or pruned, and the definitions API never lists them. */
export const BUILT_IN_ENTITY_TYPES: readonly string[] = ['service', 'domain', 'team'];
