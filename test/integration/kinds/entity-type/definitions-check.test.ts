/**
 * An entity type's schema change that breaks the repository's own entities of that type is caught
 * before anything is written: validate (offline) and plan both name the entity's file and line.
 */
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunningEmulator } from '../../../../packages/emulator/src/server.js';
import {
  compiledSchemaCount,
  MAX_COMPILED_SCHEMAS,
  schemaValidator,
} from '../../../../src/kinds/entity-type/json-schema-ajv.js';
import { cli, removeDir, startTestEmulator, tempDir, writeFiles } from '../../../cli/run.js';

const typeYaml = (engines: string[], schemaId?: string) =>
  [
    'type: database',
    'name: Database',
    'schema:',
    ...(schemaId ? [`  $id: ${schemaId}`] : []),
    '  type: object',
    '  required: [engine]',
    '  properties:',
    `    engine: {type: string, enum: [${engines.join(', ')}]}`,
    '',
  ].join('\n');

const entityYaml = (tag: string, engine: string) =>
  [
    'openapi: 3.0.1',
    'info:',
    `  title: ${tag}`,
    `  x-cortex-tag: ${tag}`,
    '  x-cortex-type: database',
    '  x-cortex-definition:',
    `    engine: ${engine}`,
    '',
  ].join('\n');

let dir: string;
let emulator: RunningEmulator;
beforeEach(async () => {
  dir = await tempDir();
  emulator = await startTestEmulator();
  await writeFiles(dir, {
    'cortex-sync.yaml': 'sourceId: definitions-test\n',
    '.cortex/entity-types/database.yaml': typeYaml(['postgres', 'mysql']),
    '.cortex/catalog/orders-db.yaml': entityYaml('orders-db', 'postgres'),
    '.cortex/catalog/users-db.yaml': entityYaml('users-db', 'mysql'),
  });
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(dir);
});

describe('entities against the entity types the repository declares', () => {
  it('a schema change that breaks an entity of the type: validate and plan name the entity, apply writes nothing', async () => {
    expect((await cli(['apply', '--auto-approve'], { cwd: dir, emulator })).code).toBe(0);
    // The type drops mysql: users-db would be refused by the API.
    await writeFiles(dir, { '.cortex/entity-types/database.yaml': typeYaml(['postgres']) });

    const validate = await cli(['validate'], { cwd: dir });
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(
      /\.cortex\/catalog\/users-db\.yaml:7:\d+: error: info\.x-cortex-definition\.engine/,
    );
    expect(validate.stderr).toContain('entity type `database`');
    expect(validate.stderr).not.toContain('orders-db.yaml');

    const plan = await cli(['plan'], { cwd: dir, emulator });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain('users-db.yaml:7');

    const writesBefore = emulator.requests.filter((r) => r.method !== 'GET').length;
    expect((await cli(['apply', '--auto-approve'], { cwd: dir, emulator })).code).toBe(1);
    expect(emulator.requests.filter((r) => r.method !== 'GET').length).toBe(writesBefore);
  });

  it('entities that satisfy the schema pass', async () => {
    expect((await cli(['validate'], { cwd: dir })).code).toBe(0);
  });
});

describe('in a long-lived process (the watcher), run after run', () => {
  it('compiles a schema parsed afresh each run once, not once per run', async () => {
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    try {
      for (let run = 0; run < 20; run++) expect((await cli(['validate'], { cwd: dir })).code).toBe(0);
      const ofTheType = compile.mock.calls.filter(([schema]) => JSON.stringify(schema).includes('"engine"'));
      expect(ofTheType.length).toBeLessThanOrEqual(1);
    } finally {
      compile.mockRestore();
    }
  });

  it('checks an edited entity type whose schema has an $id against its new schema', async () => {
    await writeFiles(dir, {
      '.cortex/entity-types/database.yaml': typeYaml(['postgres', 'mysql'], 'https://example.com/database'),
    });
    expect((await cli(['validate'], { cwd: dir })).code).toBe(0);
    await writeFiles(dir, {
      '.cortex/entity-types/database.yaml': typeYaml(['postgres'], 'https://example.com/database'),
    });
    const edited = await cli(['validate'], { cwd: dir });
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain('users-db.yaml:7');
  });

  it('keeps at most a bounded number of compiled schemas, and still checks after starting afresh', () => {
    for (let i = 0; i < MAX_COMPILED_SCHEMAS + 10; i++) {
      schemaValidator({ type: 'object', properties: { [`field${i}`]: { type: 'string' } } });
      expect(compiledSchemaCount()).toBeLessThanOrEqual(MAX_COMPILED_SCHEMAS);
    }
    const validate = schemaValidator({ type: 'object', required: ['engine'] });
    expect(validate?.({ engine: 'postgres' })).toBe(true);
    expect(validate?.({})).toBe(false);
    expect(schemaValidator({ type: 'objekt' })).toBeUndefined();
  });
});
