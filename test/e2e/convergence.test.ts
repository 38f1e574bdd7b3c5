/**
 * Runs that must converge: a change the API accepts only in one order, or an object whose removal
 * the API refuses for a reason the plan can see. Each case applies twice and expects the second
 * plan to be empty (exit 0 with --detailed-exitcode).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  API_KEY,
  cli,
  type Emulator,
  removeDir,
  serviceYaml,
  startTestEmulator,
  tempDir,
  writeFiles,
  writesSince,
} from './harness.js';

let emulator: Emulator;
const dirs: string[] = [];

const widgetType = (schema: string): string =>
  `type: widget\nname: Widget\nschema:\n${schema
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}\n`;

const widget = (tag: string, definition = '{}'): string =>
  `openapi: 3.0.1\ninfo:\n  title: ${tag}\n  x-cortex-tag: ${tag}\n  x-cortex-type: widget\n  x-cortex-definition: ${definition}\n`;

const repo = async (files: Record<string, string>, config = 'sourceId: repo-x\n'): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, { 'cortex-sync.yaml': config, ...files });
  return dir;
};

const api = async (path: string, init: RequestInit = {}): Promise<Response> =>
  fetch(`${emulator.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${API_KEY}`, ...(init.headers ?? {}) },
  });

const typeExists = async (type: string): Promise<boolean> =>
  (await api(`/api/v1/catalog/definitions/${type}`)).status === 200;

const planIsEmpty = async (dir: string, extra: string[] = []) =>
  cli(['plan', '--dir', '.', '--detailed-exitcode', ...extra], { emulator, cwd: dir });

beforeEach(async () => {
  emulator = await startTestEmulator();
});
afterEach(async () => {
  await emulator.stop();
  await Promise.all(dirs.splice(0).map(removeDir));
});

/** Services that stay, so a prune of one or two objects stays under the mass-delete guard. */
const keepers: Record<string, string> = Object.fromEntries(
  Array.from({ length: 7 }, (_, i) => [`.cortex/catalog/keep-${i}.yaml`, serviceYaml(`keep-${i}`)]),
);

describe('an entity type removed together with its entities', () => {
  const files = {
    '.cortex/entity-types/widget.yaml': widgetType('type: object'),
    '.cortex/catalog/wa.yaml': widget('wa'),
    ...keepers,
  };

  it('archives the entities, keeps the type they still hold and says why; the next run has nothing to do', async () => {
    const dir = await repo(files);
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await rm(join(dir, '.cortex/entity-types/widget.yaml'));
    await rm(join(dir, '.cortex/catalog/wa.yaml'));

    const first = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(first.stderr + first.stdout).not.toMatch(/is used by entity/);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(
      /entity type `widget` has no manifest, but it is kept: .*1 entity has it \(archived by this plan: `wa`\)/,
    );
    expect(await typeExists('widget')).toBe(true);

    const before = emulator.requests.length;
    const second = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(second.stderr + second.stdout).not.toMatch(/is used by entity/);
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(
      /entity type `widget` has no manifest, but it is kept: .*1 entity has it \(archived: `wa`\)/,
    );
    expect(writesSince(emulator, before)).toEqual([]);
    expect((await planIsEmpty(dir, ['--prune'])).code).toBe(0);
    // Without --prune the kept type is no leftover that `--prune` would remove.
    const plain = await planIsEmpty(dir);
    expect(plain.code).toBe(0);
    expect(plain.stderr).not.toMatch(/managed-without-manifest|prune-kept/);
  });

  it('deletes the type after its entities when prune deletes entities', async () => {
    const dir = await repo(files, 'sourceId: repo-x\npruneEntities: delete\n');
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await rm(join(dir, '.cortex/entity-types/widget.yaml'));
    await rm(join(dir, '.cortex/catalog/wa.yaml'));
    const run = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(run.stderr).not.toMatch(/failed \(|error/);
    expect(run.code).toBe(0);
    expect(await typeExists('widget')).toBe(false);
    expect((await planIsEmpty(dir, ['--prune'])).code).toBe(0);
  });
});

describe('an API dependency edge moved into the caller descriptor', () => {
  it('is handed over to the descriptor: no delete is sent, and the plan says so', async () => {
    const dir = await repo({
      '.cortex/catalog/payments.yaml': serviceYaml('payments'),
      '.cortex/catalog/ledger.yaml': serviceYaml('ledger'),
      ...keepers,
      '.cortex/dependencies/payments.yaml': 'callerTag: payments\ndependencies:\n  - tag: ledger\n',
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await rm(join(dir, '.cortex/dependencies/payments.yaml'));
    await writeFiles(dir, {
      '.cortex/catalog/payments.yaml': serviceYaml('payments', '  x-cortex-dependency:\n    - tag: ledger\n'),
    });

    const plan = await cli(['plan', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(plan.code).toBe(0);
    expect(plan.stdout + plan.stderr).toMatch(/payments→ledger.*x-cortex-dependency/s);
    expect(plan.stdout).not.toMatch(/delete.*payments→ledger/);

    const before = emulator.requests.length;
    const first = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(first.stderr).not.toMatch(/Cannot modify dependency/);
    expect(first.code).toBe(0);
    expect(writesSince(emulator, before).filter((r) => r.path.includes('dependencies'))).toEqual([]);

    const second = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(second.stderr).not.toMatch(/Cannot modify dependency/);
    expect(second.code).toBe(0);
    expect((await planIsEmpty(dir, ['--prune'])).code).toBe(0);
  });
});

describe('an entity type that gains a required field together with its entities', () => {
  it('writes the entities first, then the stricter type, and the apply succeeds', async () => {
    const dir = await repo({
      '.cortex/entity-types/widget.yaml': widgetType('type: object'),
      '.cortex/catalog/wa.yaml': widget('wa'),
      '.cortex/catalog/wb.yaml': widget('wb'),
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await writeFiles(dir, {
      '.cortex/entity-types/widget.yaml': widgetType(
        'type: object\nrequired: [size]\nproperties:\n  size: { type: string }',
      ),
      '.cortex/catalog/wa.yaml': widget('wa', '{ size: small }'),
      '.cortex/catalog/wb.yaml': widget('wb', '{ size: large }'),
    });
    const run = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    expect(run.stderr).not.toMatch(/would invalidate/);
    expect(run.code).toBe(0);
    expect((await planIsEmpty(dir)).code).toBe(0);
  });

  it('still writes a widening type first (entities use the new value)', async () => {
    const dir = await repo({
      '.cortex/entity-types/widget.yaml': widgetType('type: object\nproperties:\n  size: { enum: [small] }'),
      '.cortex/catalog/wa.yaml': widget('wa', '{ size: small }'),
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await writeFiles(dir, {
      '.cortex/entity-types/widget.yaml': widgetType('type: object\nproperties:\n  size: { enum: [small, large] }'),
      '.cortex/catalog/wa.yaml': widget('wa', '{ size: large }'),
    });
    const run = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    expect(run.stderr).not.toMatch(/failed \(|error/);
    expect(run.code).toBe(0);
    expect((await planIsEmpty(dir)).code).toBe(0);
  });
});

describe('prune of an entity type: what still holds it', () => {
  it('an entity of the type made in the UI keeps the type, and is named', async () => {
    const dir = await repo({
      '.cortex/entity-types/widget.yaml': widgetType('type: object'),
      '.cortex/catalog/wa.yaml': widget('wa'),
      ...keepers,
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    const made = await api('/api/v1/open-api', {
      method: 'POST',
      headers: { 'content-type': 'application/openapi;charset=UTF-8' },
      body: widget('made-in-ui'),
    });
    expect(made.status).toBe(200);
    await rm(join(dir, '.cortex/entity-types/widget.yaml'));
    await rm(join(dir, '.cortex/catalog/wa.yaml'));
    await writeFiles(dir, { 'cortex-sync.yaml': 'sourceId: repo-x\npruneEntities: delete\n' });
    const run = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /entity type `widget` has no manifest, but it is kept: .*1 entity has it \(not archived: `made-in-ui`\)/,
    );
    expect(await typeExists('widget')).toBe(true);
    expect((await api('/api/v1/catalog/wa')).status).toBe(404);
    expect((await planIsEmpty(dir, ['--prune'])).code).toBe(0);
  });

  it('an entity rewritten to another type in the same commit no longer holds it: the type is deleted after it', async () => {
    const dir = await repo({
      '.cortex/entity-types/widget.yaml': widgetType('type: object'),
      '.cortex/catalog/wa.yaml': widget('wa'),
      ...keepers,
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await rm(join(dir, '.cortex/entity-types/widget.yaml'));
    await writeFiles(dir, { '.cortex/catalog/wa.yaml': serviceYaml('wa') });
    const run = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(run.stderr).not.toMatch(/kept|failed \(/);
    expect(run.code).toBe(0);
    expect(await typeExists('widget')).toBe(false);
    expect((await planIsEmpty(dir, ['--prune'])).code).toBe(0);
  });
});

describe('dependency edges between the API and descriptors', () => {
  const base = {
    '.cortex/catalog/payments.yaml': serviceYaml('payments'),
    '.cortex/catalog/ledger.yaml': serviceYaml('ledger'),
    ...keepers,
  };

  it('an edge declared in both places is refused offline, naming both', async () => {
    const dir = await repo({
      ...base,
      '.cortex/catalog/payments.yaml': serviceYaml('payments', '  x-cortex-dependency:\n    - tag: ledger\n'),
      '.cortex/dependencies/payments.yaml': 'callerTag: payments\ndependencies:\n  - tag: ledger\n',
    });
    const run = await cli(['validate', '--dir', '.'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /\.cortex\/dependencies\/payments\.yaml:3:\d+: error: dependency `payments→ledger` is also declared in info\.x-cortex-dependency\[0\] of entity `payments` \(\.cortex\/catalog\/payments\.yaml:\d+\)/,
    );
  });

  it('a hand-over without --prune: no delete, the record drops it, and no leftover is announced', async () => {
    const dir = await repo({
      ...base,
      '.cortex/dependencies/payments.yaml': 'callerTag: payments\ndependencies:\n  - tag: ledger\n',
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await rm(join(dir, '.cortex/dependencies/payments.yaml'));
    await writeFiles(dir, {
      '.cortex/catalog/payments.yaml': serviceYaml('payments', '  x-cortex-dependency:\n    - tag: ledger\n'),
    });
    const run = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/handed over/);
    expect(run.stderr).not.toMatch(/managed-without-manifest/);
    const again = await cli(['plan', '--dir', '.', '--detailed-exitcode'], { emulator, cwd: dir });
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
  });

  it('the opposite move, from the descriptor into .cortex/dependencies/, is adopted after the descriptor drops it', async () => {
    const dir = await repo({
      ...base,
      '.cortex/catalog/payments.yaml': serviceYaml('payments', '  x-cortex-dependency:\n    - tag: ledger\n'),
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await writeFiles(dir, {
      '.cortex/catalog/payments.yaml': serviceYaml('payments'),
      '.cortex/dependencies/payments.yaml': 'callerTag: payments\ndependencies:\n  - tag: ledger\n',
    });
    const run = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(run.stderr).not.toMatch(/Cannot modify|failed \(/);
    expect(run.code).toBe(0);
    expect((await planIsEmpty(dir, ['--prune'])).code).toBe(0);
  });
});

describe('entity type updates that both tighten and widen', () => {
  it('one entity needs the new schema and breaks the old: the plan warns before anything is written', async () => {
    const dir = await repo({
      '.cortex/entity-types/widget.yaml': widgetType('type: object\nproperties:\n  size: { enum: [small] }'),
      '.cortex/catalog/wa.yaml': widget('wa', '{ size: small }'),
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await writeFiles(dir, {
      '.cortex/entity-types/widget.yaml': widgetType('type: object\nproperties:\n  size: { enum: [large] }'),
      '.cortex/catalog/wa.yaml': widget('wa', '{ size: large }'),
    });
    const plan = await cli(['plan', '--dir', '.'], { emulator, cwd: dir });
    expect(plan.stderr).toMatch(
      /warning: the new schema of entity type `widget` rejects entity `wa`.*--force-entity-type-schema/,
    );
    const forced = await cli(['apply', '--dir', '.', '--force-entity-type-schema'], { emulator, cwd: dir });
    expect(forced.code).toBe(0);
    expect((await planIsEmpty(dir)).code).toBe(0);
  });

  it('one entity tightens, another only widens: the type goes between them', async () => {
    const dir = await repo({
      '.cortex/entity-types/widget.yaml': widgetType('type: object\nproperties:\n  size: { enum: [small, large] }'),
      '.cortex/catalog/wa.yaml': widget('wa', '{ size: small }'),
      '.cortex/catalog/wb.yaml': widget('wb', '{}'),
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    // `size` becomes required and may also be `huge`: wb needs the field (after the type), wa the new value (before it).
    await writeFiles(dir, {
      '.cortex/entity-types/widget.yaml': widgetType(
        'type: object\nrequired: [size]\nproperties:\n  size: { enum: [small, large, huge] }',
      ),
      '.cortex/catalog/wa.yaml': widget('wa', '{ size: huge }'),
      '.cortex/catalog/wb.yaml': widget('wb', '{ size: large }'),
    });
    const run = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    expect(run.stderr).not.toMatch(/failed \(|would invalidate|does not match/);
    expect(run.code).toBe(0);
    expect((await planIsEmpty(dir)).code).toBe(0);
  });
});
