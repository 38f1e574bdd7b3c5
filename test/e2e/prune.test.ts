/**
 * Issue 5's promises: ownership lives in the workspace; prune removes only what this repository
 * manages, and refuses when in doubt.
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

const repo = async (sourceId: string, tags: string[]): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  const files: Record<string, string> = { 'cortex-sync.yaml': `sourceId: ${sourceId}\n` };
  for (const tag of tags) files[`.cortex/catalog/${tag}.yaml`] = serviceYaml(tag);
  await writeFiles(dir, files);
  return dir;
};

const createDirectly = async (tag: string): Promise<void> => {
  const res = await fetch(`${emulator.url}/api/v1/open-api`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/openapi;charset=UTF-8' },
    body: serviceYaml(tag),
  });
  expect(res.status).toBe(200);
};

const entityState = async (tag: string): Promise<'absent' | 'archived' | 'active'> => {
  const res = await fetch(`${emulator.url}/api/v1/catalog/${encodeURIComponent(tag)}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  if (res.status === 404) return 'absent';
  const body = (await res.json()) as { isArchived?: boolean };
  return body.isArchived ? 'archived' : 'active';
};

const tags = (n: number) => Array.from({ length: n }, (_, i) => `svc-${i}`);

beforeEach(async () => {
  emulator = await startTestEmulator();
});
afterEach(async () => {
  await emulator.stop();
  await Promise.all(dirs.splice(0).map(removeDir));
});

describe('prune', () => {
  it('archives exactly the entity whose file was removed, never a foreign one, and nothing without --prune', async () => {
    const dir = await repo('team-a', tags(10));
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    await createDirectly('made-in-the-ui');

    await rm(join(dir, '.cortex/catalog/svc-3.yaml'));
    const without = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    expect(without.code).toBe(0);
    expect(await entityState('svc-3')).toBe('active');

    const pruned = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toMatch(/svc-3/);
    expect(await entityState('svc-3')).toBe('archived');
    expect(await entityState('made-in-the-ui')).toBe('active');
    for (const tag of tags(10).filter((t) => t !== 'svc-3')) expect(await entityState(tag)).toBe('active');
  });

  it('unarchives a pruned entity whose manifest comes back', async () => {
    const dir = await repo('team-a', tags(8));
    await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    await rm(join(dir, '.cortex/catalog/svc-1.yaml'));
    await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(await entityState('svc-1')).toBe('archived');
    await writeFiles(dir, { '.cortex/catalog/svc-1.yaml': serviceYaml('svc-1') });
    expect((await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir })).code).toBe(0);
    expect(await entityState('svc-1')).toBe('active');
    const again = await cli(['plan', '--dir', '.', '--prune', '--detailed-exitcode'], { emulator, cwd: dir });
    expect(again.code).toBe(0);
  });

  it('removes nothing with an empty manifest directory, and explains why', async () => {
    const dir = await repo('team-a', tags(4));
    await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    for (const tag of tags(4)) await rm(join(dir, `.cortex/catalog/${tag}.yaml`));
    const before = emulator.requests.length;
    const run = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/empty|no manifests/i);
    expect(writesSince(emulator, before)).toEqual([]);
  });

  it('removes nothing when one manifest is broken, and explains why', async () => {
    const dir = await repo('team-a', tags(4));
    await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    await rm(join(dir, '.cortex/catalog/svc-0.yaml'));
    await writeFiles(dir, { '.cortex/catalog/svc-1.yaml': 'openapi: 3.0.1\ninfo: [broken\n' });
    const before = emulator.requests.length;
    const run = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/svc-1\.yaml:\d+/);
    expect(writesSince(emulator, before)).toEqual([]);
    expect(await entityState('svc-0')).toBe('active');
  });

  it('refuses to remove 40 % of the managed objects unless --allow-mass-delete', async () => {
    const dir = await repo('team-a', tags(10));
    await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    for (const tag of tags(4)) await rm(join(dir, `.cortex/catalog/${tag}.yaml`));
    const before = emulator.requests.length;
    const refused = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/allow-mass-delete/);
    expect(writesSince(emulator, before)).toEqual([]);

    const allowed = await cli(['apply', '--dir', '.', '--prune', '--allow-mass-delete'], { emulator, cwd: dir });
    expect(allowed.code).toBe(0);
    for (const tag of tags(4)) expect(await entityState(tag)).toBe('archived');
    for (const tag of tags(10).slice(4)) expect(await entityState(tag)).toBe('active');
  });

  it('never prunes an entity matched by a protect pattern', async () => {
    const dir = await repo('team-a', tags(10));
    await writeFiles(dir, { 'cortex-sync.yaml': 'sourceId: team-a\nprotect: [entity/svc-2]\n' });
    await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    await rm(join(dir, '.cortex/catalog/svc-2.yaml'));
    expect((await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir })).code).toBe(0);
    expect(await entityState('svc-2')).toBe('active');
  });
});

describe('ownership', () => {
  it('two repositories declaring the same tag: the second plan fails naming the owner', async () => {
    const a = await repo('team-a', ['shared-svc', 'a-only']);
    const b = await repo('team-b', ['shared-svc', 'b-only']);
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: a })).code).toBe(0);
    const before = emulator.requests.length;
    const plan = await cli(['plan', '--dir', '.'], { emulator, cwd: b });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toMatch(/shared-svc/);
    expect(plan.stderr).toMatch(/team-a/);
    const apply = await cli(['apply', '--dir', '.'], { emulator, cwd: b });
    expect(apply.code).toBe(1);
    expect(writesSince(emulator, before)).toEqual([]);
  });

  it('adopts an entity that exists live but is unmanaged, then plans it as unchanged', async () => {
    await createDirectly('legacy-svc');
    const dir = await repo('team-a', ['legacy-svc']);
    const plan = await cli(['plan', '--dir', '.', '--output', 'json'], { emulator, cwd: dir });
    const parsed = JSON.parse(plan.stdout) as { changes: { id: string; action: string; adopt?: boolean }[] };
    expect(parsed.changes.find((c) => c.id === 'legacy-svc')).toMatchObject({ action: 'update', adopt: true });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    expect((await cli(['plan', '--dir', '.', '--detailed-exitcode'], { emulator, cwd: dir })).code).toBe(0);
  });

  it('a fresh checkout in another directory prunes correctly: ownership lives in the workspace', async () => {
    // A checkout of the repository: its git remote is the origin the source id is bound to.
    const gitConfig = { '.git/config': '[remote "origin"]\n\turl = git@github.com:acme/catalog.git\n' };
    const first = await repo('github.com/acme/catalog', tags(10));
    await writeFiles(first, gitConfig);
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: first })).code).toBe(0);
    await createDirectly('foreign-svc');
    const second = await repo(
      'github.com/acme/catalog',
      tags(10).filter((t) => t !== 'svc-9'),
    );
    await writeFiles(second, gitConfig);
    const run = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: second });
    expect(run.code).toBe(0);
    expect(await entityState('svc-9')).toBe('archived');
    expect(await entityState('foreign-svc')).toBe('active');
    expect(await entityState('svc-0')).toBe('active');
  });
});
