/**
 * An entity type's schema change that breaks the repository's own entities of that type is caught
 * before anything is written: validate (offline) and plan both name the entity's file and line.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../src/emulator/server.js';
import { cli, removeDir, startTestEmulator, tempDir, writeFiles } from '../../cli/run.js';

const typeYaml = (engines: string[]) =>
  [
    'type: database',
    'name: Database',
    'schema:',
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
