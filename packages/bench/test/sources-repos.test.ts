/**
 * The repositories of the many-sources benchmark: each validates offline, holds exactly the
 * entities asked for, and names only tags with its own prefix, so that twenty of them can be
 * applied side by side to one workspace without two sources declaring one object.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { serviceFile, writeOneServiceRepository, writeSourceRepository } from '../src/sources-repos.js';
import { validateManifests } from '../../../src/engine/reconcile.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const validated = async (dir: string) => {
  const result = await validateManifests(dir, { signal: new AbortController().signal });
  expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return result.objects;
};

it('writes a source of exactly N entities whose every tag carries its prefix', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-sources-'));
  dirs.push(dir);
  await writeSourceRepository(dir, { entities: 500, prefix: 's07-', sourceId: 'bench-s07' });
  const objects = await validated(dir);
  const entities = objects.filter((o) => o.kind === 'entity');
  expect(entities).toHaveLength(500);
  expect(entities.filter((o) => !o.id.startsWith('s07-'))).toEqual([]);
  // Only what many sources can hold side by side: no entity type, page, Initiative or template.
  expect(new Set(objects.map((o) => o.kind))).toEqual(new Set(['entity', 'dependency']));
  expect(await readFile(join(dir, 'cortex-sync.yaml'), 'utf8')).toBe('sourceId: bench-s07\n');
  expect(await readFile(serviceFile(dir, 's07-', 3), 'utf8')).toContain('x-cortex-tag: s07-svc-00003');
});

it('writes a source of one service', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-sources-'));
  dirs.push(dir);
  await writeOneServiceRepository(dir, 'small-', 'bench-small');
  const objects = await validated(dir);
  expect(objects.map((o) => `${o.kind} ${o.id}`)).toEqual(['entity small-svc-00000']);
});
