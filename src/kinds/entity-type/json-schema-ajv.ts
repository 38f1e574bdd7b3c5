/**
 * The JSON Schema checks of entity types (the offline check of a type's schema, of entities'
 * definitions against it, and the order of a type's update): one ajv, made on first use (a
 * command that checks no entity type never builds it), whose validators are kept by the schema's
 * canonical text, a schema that does not compile too.
 *
 * ajv keeps every function it compiles for the life of its instance (the generated code stays in
 * the instance's scope; `removeSchema` does not free it). A long-lived watcher that compiled each
 * run's freshly parsed schemas grew by every compile, run after run. Here a schema compiled before
 * is never compiled again, and once `MAX_COMPILED_SCHEMAS` distinct schemas were compiled the
 * instance is dropped with everything it held and a new one starts.
 *
 * Whether a schema is a valid JSON Schema (draft-07) is checked by ajv's validator of the
 * meta-schema, compiled ahead (`draft-07-check.generated.ts`, `scripts/build-json-schema-check.mjs`)
 * rather than on every start: the same check and the same errors as `ajv.validateSchema`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { canonicalJson } from '../../core/diff.js';
import type { JsonValue } from '../../core/model.js';
import { validate as draft07 } from './draft-07-check.generated.js';

/** Distinct schemas one instance compiles before it is replaced (a repository declares a few). */
export const MAX_COMPILED_SCHEMAS = 256;

/** The ahead-compiled check's options are these too (`scripts/build-json-schema-check.mjs`). */
const OPTIONS = { strict: false, allErrors: true, validateFormats: false } as const;

interface Held {
  ajv: Ajv;
  /** By canonical text; undefined: the schema does not compile. */
  validators: Map<string, ValidateFunction | undefined>;
}
let current: Held | undefined;
// Schemas are checked against the meta-schema before they are compiled (`jsonSchemaErrors`).
const instance = (): Held =>
  (current ??= { ajv: new Ajv({ ...OPTIONS, validateSchema: false }), validators: new Map() });

/** The `$schema` values of draft-07, the one draft checked: ajv's default, with or without the trailing `#`. */
export const DRAFT_07_URIS: readonly string[] = [
  'http://json-schema.org/draft-07/schema#',
  'http://json-schema.org/draft-07/schema',
];
const draft07Check = draft07 as unknown as ValidateFunction;

/**
 * The `$schema` that `schema` declares when it is not draft-07's (`found: false`: none, or
 * draft-07's). Another draft is not checked: ajv knows draft-07 only (asked about another, it
 * throws), and checking such a schema as draft-07 would judge it by rules it does not follow.
 */
export const otherDraft = (schema: object): { found: true; declared: unknown } | { found: false } => {
  const declared = (schema as { $schema?: unknown }).$schema;
  return declared === undefined || (typeof declared === 'string' && DRAFT_07_URIS.includes(declared))
    ? { found: false }
    : { found: true, declared };
};

/**
 * ajv's errors when `schema` is not a valid JSON Schema (draft-07); none when it is. Only for a
 * schema of draft-07 (`otherDraft` finds none); another draft is refused before, by its `$schema`.
 */
export const jsonSchemaErrors = (schema: object): readonly ErrorObject[] =>
  draft07Check(schema) ? [] : [...(draft07Check.errors ?? [])];

/**
 * The validator of `schema`, compiled once per distinct schema; undefined when it is not a valid
 * draft-07 schema or does not compile (ajv's exceptions stop here: nothing is decided by it).
 */
export const schemaValidator = (schema: object): ValidateFunction | undefined => {
  const text = canonicalJson(schema as JsonValue);
  let held = instance();
  if (held.validators.has(text)) return held.validators.get(text);
  if (held.validators.size >= MAX_COMPILED_SCHEMAS) {
    current = undefined;
    held = instance();
  }
  let validate: ValidateFunction | undefined;
  try {
    // A schema of the same `$id` compiled before (an edited entity type) gives way to this one.
    const id = (schema as { $id?: unknown }).$id;
    if (typeof id === 'string') held.ajv.removeSchema(id);
    const checked = !otherDraft(schema).found && jsonSchemaErrors(schema).length === 0;
    validate = checked ? held.ajv.compile(schema) : undefined;
  } catch {
    validate = undefined;
  }
  held.validators.set(text, validate);
  return validate;
};

/** How many schemas the current instance holds. */
export const compiledSchemaCount = (): number => current?.validators.size ?? 0;
