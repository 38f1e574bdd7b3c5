import { describe, expect, it } from 'vitest';
import type { LiveObject } from '../../../src/core/model.js';
import { entityTypeKind } from '../../../src/kinds/entity-type/index.js';
import type { LiveEntityType } from '../../../src/kinds/entity-type/schema.js';
import { parsedDoc } from './parsed-doc.js';
import { AT } from '../parse-context.js';

const FILE = '.cortex/entity-types/ai-agent.yaml';

describe('entity-type parse', () => {
  it('owns YAML and JSON files under .cortex/entity-types/ only', () => {
    expect(entityTypeKind.ownsFile('.cortex/entity-types/ai-agent.yaml')).toBe(true);
    expect(entityTypeKind.ownsFile('.cortex/entity-types/nested/db.yml')).toBe(true);
    expect(entityTypeKind.ownsFile('.cortex/entity-types/db.json')).toBe(true);
    expect(entityTypeKind.ownsFile('.cortex/entity-types/README.md')).toBe(false);
    expect(entityTypeKind.ownsFile('.cortex/catalog/ai-agent.yaml')).toBe(false);
  });

  it('turns a valid document into one object identified by type', () => {
    const doc = parsedDoc(
      'type: ai-agent\nname: AI Agent\nschema:\n  type: object\n  required: [model]\n  properties:\n    model: {type: string}\n',
      FILE,
    );
    const { objects, diagnostics } = entityTypeKind.parse(doc, AT);
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
    const { objects, diagnostics } = entityTypeKind.parse(doc, AT);
    expect(objects).toEqual([]);
    const byField = Object.fromEntries(diagnostics.map((d) => [d.field ?? '', d]));
    expect(byField.name?.line).toBe(2);
    expect(byField.schema?.line).toBe(3);
    expect(diagnostics.some((d) => d.message.includes('icon'))).toBe(true);
    expect(diagnostics.every((d) => d.kind === 'entity-type' && d.id === 'ai-agent' && d.file === FILE)).toBe(true);
  });

  it('refuses to declare the built-in types service, domain and team', () => {
    const { objects, diagnostics } = entityTypeKind.parse(parsedDoc('type: team\nname: Team\nschema: {}\n', FILE), AT);
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
  const [desired] = entityTypeKind.parse(
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
    expect(entityTypeKind.liveState(server, desired)).toEqual(entityTypeKind.desiredState(desired!));
    expect(JSON.stringify(entityTypeKind.liveState(server, desired))).toBe(
      JSON.stringify(entityTypeKind.desiredState(desired!)),
    );
  });

  it('sees a changed schema', () => {
    const server = live({ type: 'db', name: 'Database', schema: { type: 'object' }, source: 'CUSTOM' });
    expect(entityTypeKind.liveState(server, desired)).not.toEqual(entityTypeKind.desiredState(desired!));
  });
});
