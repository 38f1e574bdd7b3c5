/**
 * Entities against the entity types the repository declares: an entity's `x-cortex-definition`
 * must satisfy its type's `schema`, or the API refuses the entity at apply time. Checked offline
 * (validate) and before any write (plan), so a schema change that breaks the repository's own
 * manifests of that type is caught in review, not halfway through an apply.
 */
import type { ValidateFunction } from 'ajv';
import type { DesiredObject, Diagnostic } from '../../core/model.js';
import { formatFieldPath } from '../../source/zod-diagnostics.js';
import type { EntityDescriptor } from '../entity/schema.js';
import { schemaValidator } from './json-schema-ajv.js';
import { pointerToPath } from './json-schema-check.js';
import type { EntityTypeManifest } from './schema.js';

/** Each declared type's validator (compiled once per process and schema); a schema that does not compile is reported elsewhere (json-schema-check). */
const validatorsOf = (types: readonly DesiredObject<EntityTypeManifest>[]) => {
  const validators = new Map<string, { validate: ValidateFunction; type: DesiredObject<EntityTypeManifest> }>();
  for (const type of types) {
    const validate = schemaValidator(type.spec.schema as object);
    // Undefined: not a valid JSON Schema, which the entity type's own check names.
    if (validate) validators.set(type.id, { validate, type });
  }
  return validators;
};

export const checkDefinitionsAgainstTypes = (desired: readonly DesiredObject[]): Diagnostic[] => {
  const types = desired.filter((o): o is DesiredObject<EntityTypeManifest> => o.kind === 'entity-type');
  if (types.length === 0) return [];
  const validators = validatorsOf(types);
  const diagnostics: Diagnostic[] = [];
  for (const entity of desired) {
    if (entity.kind !== 'entity') continue;
    const info = (entity.spec as EntityDescriptor).info;
    const typeName = info['x-cortex-type'].trim();
    const check = validators.get(typeName);
    if (!check) continue;
    const definition = info['x-cortex-definition'] ?? {};
    if (check.validate(definition)) continue;
    for (const error of check.validate.errors ?? []) {
      const path = ['info', 'x-cortex-definition', ...pointerToPath(error.instancePath)];
      const at = entity.doc.locate(path);
      diagnostics.push({
        severity: 'error',
        code: 'definition-schema',
        kind: 'entity',
        id: entity.id,
        file: entity.source.file,
        line: at.line,
        column: at.column,
        field: formatFieldPath(path),
        message: `${formatFieldPath(path)} ${error.message ?? 'is not valid'}: it does not satisfy the schema of entity type \`${typeName}\` (${check.type.source.file}:${check.type.source.line}), so the API would refuse this entity`,
      });
    }
  }
  return diagnostics;
};
