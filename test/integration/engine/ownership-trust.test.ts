/**
 * Ownership cannot be forged, and no source id is needed without prune. The CLI runs in-process
 * against the emulator on 127.0.0.1.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../packages/emulator/src/server.js';
import { INVENTORY_ENTITY_TYPE, inventoryTag } from '../../../src/kinds/entity/records/inventory.js';
import { API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from '../../cli/run.js';

const SOURCE = 'github.com/acme/catalog';
let emulator: RunningEmulator;
const dirs: string[] = [];

beforeEach(async () => {
  emulator = await startTestEmulator();
});
afterEach(async () => {
  await emulator.stop();
  await Promise.all(dirs.splice(0).map(removeDir));
});

const repo = async (files: Record<string, string>): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, files);
  return dir;
};

const post = async (path: string, body: string, contentType: string): Promise<void> => {
  const res = await fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': contentType },
    body,
  });
  expect(res.status, await res.text()).toBeLessThan(300);
};

const entity = async (tag: string): Promise<{ active: boolean; marker?: unknown }> => {
  const res = await fetch(`${emulator.url}/api/v1/catalog/${encodeURIComponent(tag)}/openapi`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  if (res.status === 404) return { active: false };
  const body = (await res.json()) as { info?: { 'x-cortex-custom-metadata'?: Record<string, unknown> } };
  const details = await fetch(`${emulator.url}/api/v1/catalog/${encodeURIComponent(tag)}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  const archived = ((await details.json()) as { isArchived?: boolean }).isArchived === true;
  const marker = body.info?.['x-cortex-custom-metadata']?.['cortex-sync'];
  return { active: !archived, ...(marker !== undefined ? { marker } : {}) };
};

const FOREIGN_PAGE = {
  slug: 'foreign',
  name: 'Foreign',
  iconTag: 'Cortex-builtin::Database',
  isDraft: false,
  type: 'FILTER',
  filter: { types: { include: ['service'] } },
};

describe('forged ownership is never trusted', () => {
  it('a hand-made inventory claiming this source, and a foreign entity with a copied marker, are never pruned', async () => {
    const dir = await repo({
      'cortex-sync.yaml': `sourceId: ${SOURCE}\n`,
      'services/a/cortex.yaml': serviceYaml('svc-a'),
      'services/b/cortex.yaml': serviceYaml('svc-b'),
      'services/c/cortex.yaml': serviceYaml('svc-c'),
      'services/d/cortex.yaml': serviceYaml('svc-d'),
    });
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);

    // Someone else's catalog page, a forged inventory claiming it for this source at another tag,
    // and a foreign entity carrying a copy of this source's marker.
    await post('/api/v1/catalog-pages', JSON.stringify(FOREIGN_PAGE), 'application/json');
    const forged = [
      'openapi: 3.0.1',
      'info:',
      '  title: totally an inventory',
      '  x-cortex-tag: my-inventory',
      `  x-cortex-type: ${INVENTORY_ENTITY_TYPE}`,
      '  x-cortex-definition:',
      `    source: ${SOURCE}`,
      '    objects:',
      "      catalog-page: ['foreign']",
      "      entity: ['copied']",
      '',
    ].join('\n');
    await post('/api/v1/open-api', forged, 'application/openapi;charset=UTF-8');
    await post(
      '/api/v1/open-api',
      serviceYaml('copied', `  x-cortex-custom-metadata:\n    cortex-sync: {source: ${SOURCE}}\n`),
      'application/openapi;charset=UTF-8',
    );

    await rm(join(dir, 'services/d'), { recursive: true });
    const plan = await cli(['plan', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(plan.stdout + plan.stderr).toMatch(/`my-inventory` claims to be the inventory/);
    const run = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect((await entity('svc-d')).active).toBe(false); // really ours: archived
    expect((await entity('copied')).active).toBe(true);
    const page = await fetch(`${emulator.url}/api/v1/catalog-pages/foreign`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(page.status).toBe(200);
  });

  it("a manifest declaring another source's inventory tag is a plan error; nothing is written", async () => {
    const tag = inventoryTag('github.com/acme/other');
    const dir = await repo({
      'cortex-sync.yaml': `sourceId: ${SOURCE}\n`,
      'cortex.yaml': serviceYaml(tag),
    });
    const from = emulator.requests.length;
    const run = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/reserved for cortex-sync's ownership records/);
    expect(emulator.requests.slice(from).filter((r) => r.method !== 'GET')).toEqual([]);
  });
});

describe('no source id', () => {
  it('plan and apply work outside git without one (nothing marked); a later apply with an id adopts; --prune needs one', async () => {
    const dir = await repo({ 'services/a/cortex.yaml': serviceYaml('svc-a') });
    expect((await cli(['plan', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
    const apply = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    expect(apply.code, apply.stderr).toBe(0);
    expect(await entity('svc-a')).toEqual({ active: true });

    const prune = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
    expect(prune.code).toBe(1);
    expect(prune.stdout + prune.stderr).toMatch(/--prune needs a source id/);

    const adopt = await cli(['apply', '--dir', '.'], { emulator, cwd: dir, env: { CORTEX_SYNC_SOURCE_ID: SOURCE } });
    expect(adopt.code, adopt.stderr).toBe(0);
    expect(await entity('svc-a')).toEqual({ active: true, marker: { source: SOURCE } });
  });
});

describe('monorepo folders', () => {
  it('apply --prune in teamB never touches teamA of the same repository', async () => {
    const root = await repo({
      '.git/config': '[remote "origin"]\n\turl = git@github.com:acme/monorepo.git\n',
      'teamA/services/a1/cortex.yaml': serviceYaml('a1'),
      'teamA/services/a2/cortex.yaml': serviceYaml('a2'),
      'teamB/services/b1/cortex.yaml': serviceYaml('b1'),
      'teamB/services/b2/cortex.yaml': serviceYaml('b2'),
      'teamB/services/b3/cortex.yaml': serviceYaml('b3'),
      'teamB/services/b4/cortex.yaml': serviceYaml('b4'),
    });
    expect((await cli(['apply', '--dir', 'teamA'], { emulator, cwd: root })).code).toBe(0);
    expect((await cli(['apply', '--dir', 'teamB'], { emulator, cwd: root })).code).toBe(0);
    expect(await entity('a1')).toEqual({ active: true, marker: { source: 'github.com/acme/monorepo//teamA' } });

    await rm(join(root, 'teamB/services/b4'), { recursive: true });
    const run = await cli(['apply', '--dir', 'teamB', '--prune'], { emulator, cwd: root });
    expect(run.code, run.stderr).toBe(0);
    expect((await entity('b4')).active).toBe(false);
    for (const tag of ['a1', 'a2', 'b1', 'b2', 'b3']) expect((await entity(tag)).active, tag).toBe(true);
  });
});
