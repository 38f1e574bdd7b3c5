/**
 * Entity type schemas: the strict manifest (the API's `CreateCatalogDefinitionRequest`)
 * and the tolerant live shape (`CatalogDefinitionResponse`, only compared fields typed).
 */
import { z } from 'zod';
import { BUILT_IN_ENTITY_TYPES } from '../shared/built-in-entity-types.js';

/** Entity types every workspace has and that the definitions API never lists; they cannot be declared. */
export { BUILT_IN_ENTITY_TYPES };

/** A JSON object (the entity type's JSON Schema). */
const jsonObject = z.record(z.string(), z.json());

/** The `type` of an entity type: what descriptors write in `x-cortex-type`. */
const entityTypeNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]*$/, {
    error: 'type must be a lower-case key: start with a letter or digit, then letters, digits, `.`, `_` or `-`',
  })
  .refine((t) => !BUILT_IN_ENTITY_TYPES.includes(t), {
    error: 'service, domain and team are built-in entity types and cannot be declared',
  });

/** One entity type manifest under `.cortex/entity-types/`; identity is `type`. */
export const entityTypeManifestSchema = z.strictObject({
  type: entityTypeNameSchema,
  name: z.string().trim().min(1, { error: 'name must not be empty' }),
  description: z.string().optional(),
  /** The JSON Schema of `x-cortex-definition` for entities of this type (`{}` accepts anything). */
  schema: jsonObject,
  /** An icon such as `Cortex-builtin::Robot`; the server replaces any other with a default icon. */
  iconTag: z.string().min(1).optional(),
});

export type EntityTypeManifest = z.output<typeof entityTypeManifestSchema>;

/** An entity type as the API returns it; unknown fields are kept. */
export const liveDefinitionSchema = z
  .object({
    type: z.string().min(1),
    name: z.string().nullish(),
    description: z.string().nullish(),
    iconTag: z.string().nullish(),
    schema: z.unknown(),
    /** `CORTEX` for built-ins shipped by Cortex (`rds`, `s3`, …), `CUSTOM` for the workspace's own. */
    source: z.string().nullish(),
  })
  .loose();

type LiveDefinition = z.output<typeof liveDefinitionSchema>;

/** What cortex-sync keeps of a live entity type. */
export interface LiveEntityType {
  definition: LiveDefinition;
}
