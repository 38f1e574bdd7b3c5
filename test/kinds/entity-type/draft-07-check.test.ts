/**
 * An entity type's schema is checked against the JSON Schema meta-schema by ajv's validator of it
 * compiled ahead (`draft-07-check.generated.ts`): the committed file is what the installed ajv
 * generates, and it gives ajv's own errors, so a repository sees the same messages as before.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { jsonSchemaErrors, otherDraft, schemaValidator } from '../../../src/kinds/entity-type/json-schema-ajv.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

const BAD_SCHEMAS: object[] = [
  { type: 'objekt' },
  { type: 'object', required: 'engine' },
  { type: 'object', properties: 5 },
  { type: 'object', properties: { size: { type: 'integer', minimum: 'ten' } } },
  { type: 'object', properties: { engine: { enum: [] } } },
  { type: 'array', items: 3, minItems: -1 },
  { type: 'object', additionalProperties: 'no', patternProperties: { '^x': { type: ['string', 'nope'] } } },
  { definitions: { a: { $ref: 5 } }, allOf: [] },
  { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', dependencies: { a: 1 } },
];

describe('the ahead-compiled draft-07 check', () => {
  it('is what the installed ajv generates (npm run build:json-schema-check)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(ROOT, 'scripts', 'build-json-schema-check.mjs'),
      '--check',
    ]);
    expect(stdout).toContain('is up to date');
  });

  it.each(BAD_SCHEMAS.map((schema) => [JSON.stringify(schema), schema]))(
    'gives ajv.validateSchema’s errors for %s',
    (_, schema) => {
      const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
      expect(ajv.validateSchema(schema)).toBe(false);
      expect(jsonSchemaErrors(schema)).toEqual(ajv.errors);
    },
  );

  it('accepts a valid schema, and one it rejects is never compiled', () => {
    expect(
      jsonSchemaErrors({ type: 'object', required: ['engine'], properties: { engine: { type: 'string' } } }),
    ).toEqual([]);
    expect(schemaValidator({ type: 'object', required: 'engine' })).toBeUndefined();
  });

  it('finds a schema that names another draft, and never compiles it nor lets ajv throw', () => {
    for (const declared of ['https://json-schema.org/draft/2020-12/schema', 7]) {
      const schema = { $schema: declared, type: 'object' };
      expect(otherDraft(schema)).toEqual({ found: true, declared });
      expect(schemaValidator(schema)).toBeUndefined();
    }
    for (const declared of ['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema'])
      expect(otherDraft({ $schema: declared })).toEqual({ found: false });
    expect(otherDraft({})).toEqual({ found: false });
  });
});
