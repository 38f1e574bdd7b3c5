/**
 * The vendor's OpenAPI schemas, compiled with ajv, for the emulator contract suite. The schemas
 * come from `fixtures/vendor-openapi-subset.json`: the paths the emulator implements and every
 * component they reference, copied unchanged from the vendor file (see its `info.x-source`).
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  $ref?: string;
  content?: Record<string, MediaType>;
}
interface Operation {
  responses?: Record<string, ResponseObject>;
}
type SchemaObject = { [key: string]: unknown };
interface VendorSpec {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, ResponseObject>; schemas: Record<string, SchemaObject> };
}

/**
 * Two artifacts of the vendor's schema generator (springdoc) that no JSON payload can satisfy,
 * repaired the way an OpenAPI tool reads them:
 * - polymorphism: a base with `discriminator` + `oneOf: [A, B]` whose members are `allOf: [base, …]`
 *   recurses forever; the members are pointed at a copy of the base without its `oneOf`;
 * - `HttpMethod` (Spring's enum class) is typed `object`, but it is sent as a string ("POST").
 */
const repairSpringdocArtifacts = (spec: VendorSpec): VendorSpec => {
  const schemas = spec.components.schemas;
  for (const [name, schema] of Object.entries(schemas)) {
    if (schema.discriminator === undefined || !Array.isArray(schema.oneOf)) continue;
    const { oneOf: _oneOf, discriminator: _discriminator, ...base } = schema;
    schemas[`${name}Base`] = base;
    const ref = `#/components/schemas/${name}`;
    for (const member of Object.values(schemas)) {
      if (!Array.isArray(member.allOf)) continue;
      member.allOf = member.allOf.map((part: SchemaObject) => (part.$ref === ref ? { $ref: `${ref}Base` } : part));
    }
  }
  if (schemas.HttpMethod !== undefined) schemas.HttpMethod = { type: 'string' };
  return spec;
};

export const VENDOR_SPEC = repairSpringdocArtifacts(
  JSON.parse(readFileSync(new URL('./fixtures/vendor-openapi-subset.json', import.meta.url), 'utf8')) as VendorSpec,
);

const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
// ajv-formats is CommonJS; its default export arrives either as the function or as `{ default }`.
const addFormats = ((addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ??
  addFormatsPlugin) as unknown as (a: Ajv) => void;
addFormats(ajv);
// OpenAPI's numeric formats are annotations for JSON: any number of the right `type` passes.
for (const format of ['int32', 'int64', 'float', 'double']) ajv.addFormat(format, true);
ajv.addSchema(VENDOR_SPEC, 'vendor');

const escapePointerSegment = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const pointer = (...segments: string[]): string => `vendor#/${segments.map(escapePointerSegment).join('/')}`;

const compiled = new Map<string, ValidateFunction>();
/** A validator for a schema in the vendor document, by `$ref`, or for an inline schema that may `$ref` into it. */
export const validatorFor = (schema: string | object): ValidateFunction => {
  const key = typeof schema === 'string' ? schema : JSON.stringify(schema);
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = ajv.compile(typeof schema === 'string' ? { $ref: schema } : schema);
    compiled.set(key, validate);
  }
  return validate;
};

/** `vendor#/components/schemas/<name>`. */
export const componentSchema = (name: string): string => pointer('components', 'schemas', name);

/**
 * The `$ref` of the vendor's response schema for an operation and status (following a
 * `#/components/responses/…` reference), or `undefined` when the vendor documents no body for it.
 */
export const responseSchemaRef = (method: string, pathTemplate: string, status: number): string | undefined => {
  const operation = VENDOR_SPEC.paths[pathTemplate]?.[method.toLowerCase()];
  if (operation === undefined) throw new Error(`The vendor file has no operation ${method} ${pathTemplate}`);
  let response = operation.responses?.[String(status)];
  let base = ['paths', pathTemplate, method.toLowerCase(), 'responses', String(status)];
  const ref = response?.$ref;
  if (ref !== undefined) {
    const name = ref.split('/').pop() ?? '';
    response = VENDOR_SPEC.components.responses[name];
    base = ['components', 'responses', name];
  }
  const mediaType = Object.keys(response?.content ?? {})[0];
  if (mediaType === undefined || response?.content?.[mediaType]?.schema === undefined) return undefined;
  return pointer(...base, 'content', mediaType, 'schema');
};

/** The statuses the vendor documents for an operation. */
export const documentedStatuses = (method: string, pathTemplate: string): string[] =>
  Object.keys(VENDOR_SPEC.paths[pathTemplate]?.[method.toLowerCase()]?.responses ?? {});

/** ajv's errors as readable lines (empty when valid). */
export const schemaErrors = (validate: ValidateFunction, value: unknown): string[] =>
  validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);

/**
 * A copy without `null` object properties. The vendor serializes absent optional fields as `null`
 * (Jackson's default) while its OpenAPI 3.0 file never says `nullable`; so an optional property
 * may be `null`, and a required one still may not (it is then reported missing).
 */
export const withoutNulls = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
};
