import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KIND_HANDLERS } from '../../src/kinds/registry.js';
import { manifestJsonSchemas, schemaFileName } from '../../src/schemas/json-schemas.js';

const committed = (file: string) => readFile(join(import.meta.dirname, '..', '..', 'schemas', file), 'utf8');

describe('JSON Schemas for editors', () => {
  it('exist for every kind and match the zod schemas (run `npm run schemas` after changing a schema)', async () => {
    const generated = manifestJsonSchemas();
    expect([...generated.keys()].sort()).toEqual(KIND_HANDLERS.map((h) => h.kind).sort());
    for (const [kind, text] of generated) {
      expect(await committed(schemaFileName(kind)), `schemas/${schemaFileName(kind)} is stale`).toBe(text);
    }
  });

  it('describe the required fields users must write', () => {
    const entity = JSON.parse(manifestJsonSchemas().get('entity') ?? '{}') as {
      properties?: { info?: { required?: string[] } };
    };
    expect(entity.properties?.info?.required).toEqual(expect.arrayContaining(['title', 'x-cortex-tag']));
    const template = JSON.parse(manifestJsonSchemas().get('scaffolder-template') ?? '{}') as { required?: string[] };
    expect(template.required).toEqual(expect.arrayContaining(['tag', 'name']));
  });
});
