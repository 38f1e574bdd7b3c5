/**
 * The merge applies the reviewed plan in one engine run: the workspace is read once (the plan it
 * judges against the reviewed plan is the plan it applies), and under the lease only what the
 * plan writes is read again, by identity. Measured on the emulator's request log against the pull
 * request's plan job, which reads the workspace exactly once.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Emulator } from '../e2e/harness.js';
import { type FakeGitHub } from './fake-github.js';
import { runEvent, useActionWorld } from './world.js';

let emulator: Emulator;
let github: FakeGitHub;
let workspace: string;
useActionWorld((world) => ({ emulator, github, workspace } = world));

/**
 * The requests that read a whole kind (a list): what one read of the workspace is made of. The
 * entities' descriptors (`/api/v1/catalog/descriptors`) are also how the records are read, which
 * the lease re-reads: counted apart.
 */
const LISTS = [
  '/api/v1/catalog/definitions',
  '/api/v1/catalog-pages',
  '/api/v1/scaffolders',
  '/api/v1/scorecards',
  '/api/v1/initiatives',
];
const listReads = (from: number, to = emulator.requests.length) =>
  Object.fromEntries(
    LISTS.map((path) => [
      path,
      emulator.requests.slice(from, to).filter((r) => r.method === 'GET' && r.path === path).length,
    ]),
  );

describe("the merge's apply reads the workspace once", { timeout: 180_000 }, () => {
  it('as often as the plan job: every list once, what it writes read again by identity', async () => {
    const world = { emulator, github, workspace };
    // The catalog as it was before the pull request.
    expect((await runEvent(world, 'push', { 'on-plan-drift': 'apply', comment: 'false' })).code).toBe(0);
    const file = join(workspace, 'catalog/.cortex/catalog/search-api.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/description: .*/, 'description: Searched.'));

    const planFrom = emulator.requests.length;
    expect((await runEvent(world, 'pull_request')).code).toBe(0);
    const mergeFrom = emulator.requests.length;
    const merge = await runEvent(world, 'push');
    expect(merge.code, merge.runtime.summaries.join('\n')).toBe(0);
    expect(merge.runtime.log.join('\n')).toContain('The plan matches the plan reviewed on #7');

    const plan = listReads(planFrom, mergeFrom);
    expect(Object.values(plan).every((n) => n >= 1)).toBe(true);
    // Before: the merge planned, then the engine's apply read everything again (twice as many).
    expect(listReads(mergeFrom)).toEqual(plan);
    const descriptors = (from: number, to = emulator.requests.length) =>
      emulator.requests.slice(from, to).filter((r) => r.method === 'GET' && r.path === '/api/v1/catalog/descriptors')
        .length;
    // Once more than the plan job: the records, read again under the lease.
    expect(descriptors(mergeFrom)).toBe(descriptors(planFrom, mergeFrom) + 1);
    const gets = (from: number, to = emulator.requests.length) =>
      emulator.requests.slice(from, to).filter((r) => r.method === 'GET').length;
    console.log(`GET requests: plan job ${gets(planFrom, mergeFrom)}, merge ${gets(mergeFrom)}`);
    // Under the lease the entity it updates was read again by its tag.
    expect(
      emulator.requests
        .slice(mergeFrom)
        .some((r) => r.method === 'GET' && r.path.startsWith('/api/v1/catalog/search-api')),
    ).toBe(true);
  });
});
