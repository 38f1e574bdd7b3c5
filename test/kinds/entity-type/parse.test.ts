import { describe, expect, it } from 'vitest';
import type { LiveObject } from '../../../src/core/model.js';
import { entityTypeKind } from '../../../src/kinds/entity-type/index.js';
import type { LiveEntityType } from '../../../src/kinds/entity-type/schema.js';
import { parsedDoc } from './parsed-doc.js';
import { AT } from '../parse-context.js';

const FILE = '.cortex/entity-types/ai-agent.yaml';

describe('entity-type parse', () => {
  it('owns YAML and JSON files under .cortex/entity-types/ only', () => {
    expect(entityTypeKind.layout.ownsFile('.cortex/entity-types/ai-agent.yaml')).toBe(true);
    expect(entityTypeKind.layout.ownsFile('.cortex/entity-types/nested/db.yml')).toBe(true);
    expect(entityTypeKind.layout.ownsFile('.cortex/entity-types/db.json')).toBe(true);
    expect(entityTypeKind.layout.ownsFile('.cortex/entity-types/README.md')).toBe(false);
    expect(entityTypeKind.layout.ownsFile('.cortex/catalog/ai-agent.yaml')).toBe(false);
  });

  it('turns a valid document into one object identified by type', () => {
    const doc = parsedDoc(
      'type: ai-agent\nname: AI Agent\nschema:\n  type: object\n  required: [model]\n  properties:\n    model: {type: string}\n',
      FILE,
    );
    const { objects, diagnostics } = entityTypeKind.manifest.parse(doc, AT);
    expect(diagnostics).toEqual([]);
    expect(objects).toHaveLength(1);
    expect(objects[0]?.id).toBe('ai-agent');
    expect(objects[0]?.source).toEqual({ file: FILE, line: 1, column: 1 });
    expect(objects[0]?.spec.schema).toEqual({
      type: 'object',
      required: ['model'],
      properties: { model: { type: 'string' } },
    });
  });

  it('reports every problem with its location and the type it belongs to', () => {
    const doc = parsedDoc('type: ai-agent\nname: ""\nschema: [1, 2]\nicon: robot\n', FILE);
    const { objects, diagnostics } = entityTypeKind.manifest.parse(doc, AT);
    expect(objects).toEqual([]);
    const byField = Object.fromEntries(diagnostics.map((d) => [d.field ?? '', d]));
    expect(byField.name?.line).toBe(2);
    expect(byField.schema?.line).toBe(3);
    expect(diagnostics.some((d) => d.message.includes('icon'))).toBe(true);
    expect(diagnostics.every((d) => d.kind === 'entity-type' && d.id === 'ai-agent' && d.file === FILE)).toBe(true);
  });

  it('refuses a schema that is not a valid JSON Schema, at the line of each bad field', () => {
    const text = [
      'type: db', //                              1
      'name: Database', //                        2
      'schema:', //                               3
      '  type: objekt', //                        4
      '  required: engine', //                    5
      '  properties:', //                         6
      '    engine:', //                           7
      '      type: string', //                    8
      '      pattern: "^(unclosed"', //           9
      '    size: {type: integer, minimum: big}', // 10
      '',
    ].join('\n');
    const { objects, diagnostics } = entityTypeKind.manifest.parse(parsedDoc(text, FILE), AT);
    expect(objects).toEqual([]);
    expect(diagnostics.map((d) => [d.severity, d.code, d.field, d.line])).toEqual([
      ['error', 'invalid-json-schema', 'schema.type', 4],
      ['error', 'invalid-json-schema', 'schema.required', 5],
      ['error', 'invalid-json-schema', 'schema.properties.engine.pattern', 9],
      ['error', 'invalid-json-schema', 'schema.properties.size.minimum', 10],
    ]);
    expect(diagnostics[0]?.message).toMatch(/schema\.type: must be one of "array", "boolean", .*"object"/);
    expect(diagnostics[2]?.message).toMatch(/not a valid regular expression/);
    expect(diagnostics.every((d) => d.file === FILE && d.kind === 'entity-type' && d.id === 'db')).toBe(true);
  });

  it('accepts any valid JSON Schema, including an empty one', () => {
    for (const schema of ['{}', '{type: object, properties: {a: {type: [string, "null"], pattern: "^a+$"}}}'])
      expect(
        entityTypeKind.manifest.parse(parsedDoc(`type: db\nname: D\nschema: ${schema}\n`, FILE), AT).diagnostics,
      ).toEqual([]);
  });

  it('refuses a `$schema` other than draft-07 at its line, saying which drafts are checked', () => {
    for (const declared of [
      'https://json-schema.org/draft/2020-12/schema',
      'http://json-schema.org/draft-04/schema#',
      '7',
    ]) {
      const text = `type: db\nname: D\nschema:\n  $schema: ${declared}\n  type: object\n`;
      const { objects, diagnostics } = entityTypeKind.manifest.parse(parsedDoc(text, FILE), AT);
      expect(objects).toEqual([]);
      expect(diagnostics).toEqual([
        expect.objectContaining({
          severity: 'error',
          code: 'unsupported-json-schema-draft',
          field: 'schema.$schema',
          file: FILE,
          line: 4,
          column: 3,
          kind: 'entity-type',
          id: 'db',
        }),
      ]);
      expect(diagnostics[0]?.message).toContain('http://json-schema.org/draft-07/schema');
      expect(diagnostics[0]?.message).toMatch(/with or without the trailing `#`/);
      expect(diagnostics[0]?.message).toMatch(/remove/);
    }
  });

  it('accepts draft-07 named with or without the trailing #', () => {
    for (const declared of ['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema'])
      expect(
        entityTypeKind.manifest.parse(parsedDoc(`type: db\nname: D\nschema:\n  $schema: "${declared}"\n`, FILE), AT)
          .diagnostics,
      ).toEqual([]);
  });

  it('warns that an icon which is not built in will not be kept, and does not compare it', () => {
    const { objects, diagnostics } = entityTypeKind.manifest.parse(
      parsedDoc('type: db\nname: D\niconTag: kafka\nschema: {}\n', FILE),
      AT,
    );
    expect(objects).toHaveLength(1);
    expect(diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'icon-not-kept', line: 3, field: 'iconTag' }),
    ]);
    expect(entityTypeKind.manifest.canonical(objects[0]!)).not.toHaveProperty('iconTag');
  });

  it('refuses to declare the built-in types service, domain and team', () => {
    const { objects, diagnostics } = entityTypeKind.manifest.parse(
      parsedDoc('type: team\nname: Team\nschema: {}\n', FILE),
      AT,
    );
    expect(objects).toEqual([]);
    expect(diagnostics[0]?.message).toMatch(/built-in/);
  });
});

const live = (definition: LiveEntityType['definition']): LiveObject<LiveEntityType> => ({
  kind: 'entity-type',
  id: definition.type,
  state: { definition },
});

describe('entity-type comparable state', () => {
  const [desired] = entityTypeKind.manifest.parse(
    parsedDoc(
      'type: db\nname: Database\nschema:\n  type: object\n  properties:\n    engine: {type: string}\n    size: {type: integer}\n',
      FILE,
    ),
    AT,
  ).objects;

  it('compares schemas whatever their key order, and ignores source', () => {
    const server = live({
      type: 'db',
      name: 'Database',
      description: null,
      source: 'CUSTOM',
      iconTag: 'Cortex-builtin::Box',
      schema: { properties: { size: { type: 'integer' }, engine: { type: 'string' } }, type: 'object' },
    });
    expect(entityTypeKind.live.canonical(server, desired)).toEqual(entityTypeKind.manifest.canonical(desired!));
    expect(JSON.stringify(entityTypeKind.live.canonical(server, desired))).toBe(
      JSON.stringify(entityTypeKind.manifest.canonical(desired!)),
    );
  });

  it('sees a changed schema', () => {
    const server = live({ type: 'db', name: 'Database', schema: { type: 'object' }, source: 'CUSTOM' });
    expect(entityTypeKind.live.canonical(server, desired)).not.toEqual(entityTypeKind.manifest.canonical(desired!));
  });
});
