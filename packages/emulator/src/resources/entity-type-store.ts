/**
 * Entity types (`/api/v1/catalog/definitions`) as stored by the emulator, the built-in types, and
 * the small JSON-Schema subset used to validate `x-cortex-definition` blocks.
 */
import { isObject, type JsonObject } from '../util.js';

/** A custom (or built-in) entity type, as the vendor returns it (`CatalogDefinitionResponse`). */
export interface StoredDefinition {
  type: string;
  name: string;
  description: string | null;
  iconTag: string;
  schema: JsonObject;
  source: 'CORTEX' | 'CUSTOM';
}

export interface EntityTypesState {
  /** Custom types by their `type` key. Built-ins are constants, never stored. */
  byType: Record<string, StoredDefinition>;
}

export const initialEntityTypesState = (): EntityTypesState => ({ byType: {} });

/** Types every workspace has, that are never listed under definitions. */
export const CORE_TYPES: readonly string[] = ['service', 'domain', 'team'];

/** The icon the vendor substitutes for an unknown or invalid `iconTag` (inferred name). */
export const DEFAULT_ICON_TAG = 'Cortex-builtin::Box';

/** Built-in resource types (`source: CORTEX`), listed only with `includeBuiltIn=true`. The list is inferred. */
export const BUILT_IN_DEFINITIONS: readonly StoredDefinition[] = [
  ['rds', 'RDS'],
  ['s3', 'S3 Bucket'],
  ['sqs', 'SQS Queue'],
  ['sns', 'SNS Topic'],
  ['dynamodb', 'DynamoDB Table'],
  ['lambda', 'Lambda Function'],
  ['ecs', 'ECS Service'],
].map(([type, name]) => ({
  type: type ?? '',
  name: name ?? '',
  description: null,
  iconTag: DEFAULT_ICON_TAG,
  schema: {},
  source: 'CORTEX' as const,
}));

/** The custom definition of a type key, or undefined (own keys only: `constructor` is a type like any other). */
export const customDefinition = (state: EntityTypesState, type: string): StoredDefinition | undefined =>
  Object.hasOwn(state.byType, type) ? state.byType[type] : undefined;

/** A custom or built-in definition by type key, or undefined. */
export const findDefinition = (state: EntityTypesState, type: string): StoredDefinition | undefined =>
  customDefinition(state, type) ?? BUILT_IN_DEFINITIONS.find((d) => d.type === type);

/** `Cortex-builtin::Name` icons are kept; anything else becomes the default icon (as the vendor does). */
export const normalizeIconTag = (iconTag: unknown): string =>
  typeof iconTag === 'string' && /^Cortex-builtin::[A-Za-z][A-Za-z0-9-]*$/.test(iconTag) ? iconTag : DEFAULT_ICON_TAG;

const typeOfJson = (value: unknown): string => {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
};

const matchesType = (expected: unknown, value: unknown): boolean => {
  const actual = typeOfJson(value);
  const accepts = (t: unknown): boolean => t === actual || (t === 'number' && actual === 'integer');
  return Array.isArray(expected) ? expected.some(accepts) : accepts(expected);
};

/**
 * Validates `value` against the subset of JSON Schema the emulator understands: `type`, `required`,
 * `properties`, `items`, `enum`. Returns one message per problem, with a JSON pointer.
 */
export const validateAgainstSchema = (schema: unknown, value: unknown, pointer = ''): string[] => {
  if (!isObject(schema)) return [];
  const problems: string[] = [];
  const at = pointer === '' ? '/' : pointer;
  if (schema.type !== undefined && !matchesType(schema.type, value)) {
    problems.push(`${at}: expected ${JSON.stringify(schema.type)}, got ${typeOfJson(value)}`);
    return problems;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    problems.push(`${at}: value is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (isObject(value)) {
    if (Array.isArray(schema.required)) {
      for (const key of schema.required) {
        if (typeof key === 'string' && !(key in value)) problems.push(`${at}: required property '${key}' is missing`);
      }
    }
    if (isObject(schema.properties)) {
      for (const [key, sub] of Object.entries(schema.properties)) {
        if (key in value) problems.push(...validateAgainstSchema(sub, value[key], `${pointer}/${key}`));
      }
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => {
      problems.push(...validateAgainstSchema(schema.items, item, `${pointer}/${i}`));
    });
  }
  return problems;
};
