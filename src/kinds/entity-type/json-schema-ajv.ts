/**
 * The one ajv the entity types' JSON Schema checks share (the offline check of a type's schema,
 * of entities' definitions against it, and the order of a type's update), made on first use: a
 * command that checks no entity type never builds it. Its validators are kept by the schema's
 * canonical text, a schema that does not compile too.
 *
 * ajv keeps every function it compiles for the life of its instance (the generated code stays in
 * the instance's scope; `removeSchema` does not free it). A long-lived watcher that compiled each
 * run's freshly parsed schemas grew by every compile, run after run. Here a schema compiled before
 * is never compiled again, and once `MAX_COMPILED_SCHEMAS` distinct schemas were compiled the
 * instance is dropped with everything it held and a new one starts.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { canonicalJson } from '../../core/diff.js';
import type { JsonValue } from '../../core/model.js';

/** Distinct schemas one instance compiles before it is replaced (a repository declares a few). */
export const MAX_COMPILED_SCHEMAS = 256;

const OPTIONS = { strict: false, allErrors: true, validateFormats: false } as const;

interface Held {
  ajv: Ajv;
  /** By canonical text; undefined: the schema does not compile. */
  validators: Map<string, ValidateFunction | undefined>;
}
let current: Held | undefined;
const instance = (): Held => (current ??= { ajv: new Ajv(OPTIONS), validators: new Map() });

/** The validator of `schema`, compiled once per distinct schema; undefined when it does not compile. */
export const schemaValidator = (schema: object): ValidateFunction | undefined => {
  const text = canonicalJson(schema as JsonValue);
  let held = instance();
  if (held.validators.has(text)) return held.validators.get(text);
  if (held.validators.size >= MAX_COMPILED_SCHEMAS) {
    current = undefined;
    held = instance();
  }
  // A schema of the same `$id` compiled before (an edited entity type) gives way to this one.
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id === 'string') held.ajv.removeSchema(id);
  let validate: ValidateFunction | undefined;
  try {
    validate = held.ajv.compile(schema);
  } catch {
    validate = undefined;
  }
  held.validators.set(text, validate);
  return validate;
};

/** ajv's errors when `schema` is not a valid JSON Schema (draft-07); none when it is. */
export const jsonSchemaErrors = (schema: object): readonly ErrorObject[] => {
  const { ajv } = instance();
  return ajv.validateSchema(schema) ? [] : [...(ajv.errors ?? [])];
};

/** How many schemas the current instance holds. */
export const compiledSchemaCount = (): number => current?.validators.size ?? 0;
