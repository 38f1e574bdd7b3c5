/**
 * Issue 4's promises: every kind in dependency order, reference checks before any write, and
 * partial failure that skips only what depends on the failure.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  API_KEY,
  cli,
  copyExamples,
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

beforeEach(async () => {
  emulator = await startTestEmulator();
});
afterEach(async () => {
  await emulator.stop();
  await Promise.all(dirs.splice(0).map(removeDir));
});

interface JsonPlan {
  changes: { kind: string; id: string; action: string; waitsFor?: string[] }[];
}

describe('every kind', () => {
  it('apply from empty creates every kind, types before entities before what names them', async () => {
    const dir = await copyExamples();
    dirs.push(dir);
    const plan = await cli(['plan', '--dir', '.', '--output', 'json'], { emulator, cwd: dir });
    expect(plan.code).toBe(0);
    const parsed = JSON.parse(plan.stdout) as JsonPlan;
    const kinds = new Set(parsed.changes.filter((c) => c.action === 'create').map((c) => c.kind));
    // Every kind, and the ownership record (its own step, `inventory`), which is created first.
    expect([...kinds].sort()).toEqual(
      [
        'catalog-page',
        'dependency',
        'entity',
        'entity-type',
        'initiative',
        'inventory',
        'scaffolder-template',
        'scorecard',
      ].sort(),
    );
    expect(parsed.changes[0]).toMatchObject({ kind: 'inventory', action: 'create', phase: 'before' });
    const orders = parsed.changes.find((c) => c.kind === 'entity' && c.id === 'orders-db');
    expect(orders?.waitsFor).toContain('entity-type/database');

    expect((await cli(['apply', '--dir', '.', '--plan-log', 'log.jsonl'], { emulator, cwd: dir })).code).toBe(0);
    const log = (await readFile(join(dir, 'log.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; id: string; method: string; path: string; ts: string });
    const firstWrite = (kind: string, id?: string) =>
      log.findIndex((e) => e.kind === kind && (id === undefined || e.id === id) && e.method !== 'GET');
    expect(firstWrite('entity-type', 'database')).toBeLessThan(firstWrite('entity', 'orders-db'));
    expect(firstWrite('entity', 'payments-team')).toBeLessThan(firstWrite('entity', 'payments-api'));
    expect(firstWrite('entity', 'payments-domain')).toBeLessThan(firstWrite('entity', 'payments-api'));
    expect(firstWrite('scorecard', 'payments-readiness')).toBeGreaterThanOrEqual(0);
    expect(firstWrite('scorecard', 'payments-readiness')).toBeLessThan(
      firstWrite('initiative', 'Payments production readiness'),
    );

    // dependencies went through the bulk endpoint, one request for all edges
    const depWrites = log.filter((e) => e.kind === 'dependency' && e.method !== 'GET');
    expect(depWrites.map((e) => `${e.method} ${e.path}`)).toEqual(['PUT /api/v1/catalog/dependencies']);

    const again = await cli(['plan', '--dir', '.', '--detailed-exitcode'], { emulator, cwd: dir });
    expect(again.code).toBe(0);
  });

  it('prunes a catalog page removed from git but never one created in the UI', async () => {
    const dir = await copyExamples();
    dirs.push(dir);
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    const res = await fetch(`${emulator.url}/api/v1/catalog-pages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        slug: 'made-in-ui',
        name: 'UI page',
        iconTag: 'cortex',
        isDraft: false,
        filter: { types: { include: ['service'] } },
      }),
    });
    expect(res.status).toBeLessThan(300);
    await removeDir(join(dir, '.cortex/catalog-pages'));
    const run = await cli(['apply', '--dir', '.', '--prune', '--allow-mass-delete'], { emulator, cwd: dir });
    expect(run.code).toBe(0);
    const pages = (await (
      await fetch(`${emulator.url}/api/v1/catalog-pages`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      })
    ).json()) as Record<string, { slug: string }[] | number>;
    const list = Object.values(pages).find(Array.isArray) as { slug: string }[];
    expect(list.map((p) => p.slug)).toContain('made-in-ui');
    expect(list.map((p) => p.slug)).not.toContain('databases');
  });
});

describe('reference checks', () => {
  it('a dependency on a missing entity, an owner team that does not exist and a parent cycle: validate warns about the two, plan refuses all three, zero writes', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    await writeFiles(dir, {
      'cortex-sync.yaml': 'sourceId: refs\n',
      '.cortex/catalog/api.yaml': serviceYaml(
        'api',
        '  x-cortex-owners:\n    - type: group\n      name: ghost-team\n      provider: CORTEX\n',
      ),
      '.cortex/dependencies/api.yaml': 'callerTag: api\ndependencies:\n  - tag: nowhere-svc\n',
      '.cortex/domains/a.yaml': serviceYaml('dom-a', '  x-cortex-parents:\n    - tag: dom-b\n').replace(
        'service',
        'domain',
      ),
      '.cortex/domains/b.yaml': serviceYaml('dom-b', '  x-cortex-parents:\n    - tag: dom-a\n').replace(
        'service',
        'domain',
      ),
    });
    const validate = await cli(['validate', '--dir', '.'], { cwd: dir });
    expect(validate.code).toBe(1);
    const errors = validate.stderr.split('\n').filter((l) => /: error: /.test(l));
    expect(errors).toHaveLength(1);
    expect(validate.stderr).toMatch(/dom-a.*dom-b.*dom-a|dom-b.*dom-a.*dom-b/);
    // Offline, targets outside the repository may exist in the workspace: warnings, checked by plan.
    expect(validate.stderr).toMatch(/\.cortex\/dependencies\/api\.yaml:3:\d+: warning: .*nowhere-svc.*plan/);
    expect(validate.stderr).toMatch(/\.cortex\/catalog\/api\.yaml:\d+:\d+: warning: .*ghost-team.*plan/);

    const before = emulator.requests.length;
    const apply = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(/\.cortex\/dependencies\/api\.yaml:3:\d+: error: .*nowhere-svc/);
    expect(apply.stderr).toMatch(/\.cortex\/catalog\/api\.yaml:\d+:\d+: error: .*ghost-team/);
    expect(writesSince(emulator, before)).toEqual([]);
  });
});

describe('partial failure', () => {
  it('when an entity type is refused, its entities are skipped, unrelated kinds still apply, exit 1, and a rerun converges', async () => {
    const dir = await copyExamples();
    dirs.push(dir);
    emulator.setFaults({
      reject: [
        {
          method: 'POST',
          path: '/api/v1/catalog/definitions',
          bodyIncludes: '"database"',
          status: 400,
          message: 'Failed to create entity type',
        },
      ],
    });
    const run = await cli(['apply', '--dir', '.', '--plan-log', 'log.jsonl'], { emulator, cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/Failed to create entity type/);
    const log = (await readFile(join(dir, 'log.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; id: string; outcome: string });
    const outcome = (kind: string, id: string) => log.find((e) => e.kind === kind && e.id.startsWith(id))?.outcome;
    expect(outcome('entity-type', 'database')).toBe('failed');
    expect(outcome('entity', 'orders-db')).toBe('skipped');
    expect(outcome('entity', 'ledger-db')).toBe('skipped');
    expect(outcome('entity', 'payments-api')).toBe('ok');
    expect(outcome('scaffolder-template', 'go-service')).toBe('ok');

    emulator.setFaults({});
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    expect((await cli(['plan', '--dir', '.', '--detailed-exitcode'], { emulator, cwd: dir })).code).toBe(0);
  });

  it('when the ownership record cannot be written first, no change starts, and the report, the counts and the plan log say so', async () => {
    const dir = await copyExamples();
    dirs.push(dir);
    emulator.setFaults({
      reject: [
        {
          method: 'POST',
          path: '/api/v1/open-api',
          bodyIncludes: 'x-cortex-tag: cortex-sync-inventory-',
          status: 403,
          message: 'Your key cannot write this entity',
        },
      ],
    });
    const run = await cli(['apply', '--dir', '.', '--plan-log', 'log.jsonl'], { emulator, cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Your key cannot write this entity');
    expect(run.stdout).toContain('Apply finished with problems: 0 created');
    expect(run.stdout).toMatch(/22 not done/);
    expect(run.stdout).toMatch(/Plan log: .*log\.jsonl/);
    const log = (await readFile(join(dir, 'log.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; outcome: string; error?: string });
    expect(log.filter((e) => e.kind !== 'inventory').every((e) => e.outcome === 'skipped')).toBe(true);
    expect(log.find((e) => e.kind === 'entity')?.error).toContain(
      'the ownership record must be written before any change',
    );
    expect(
      emulator.requests.filter(
        (r) => r.method !== 'GET' && r.path !== '/api/v1/open-api' && !r.path.startsWith('/api/v1/catalog/definitions'),
      ),
    ).toEqual([]);

    emulator.setFaults({});
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    expect((await cli(['plan', '--dir', '.', '--detailed-exitcode'], { emulator, cwd: dir })).code).toBe(0);
  });
});
