/**
 * Absence in a list is a hypothesis, not a fact: the emulator leaves one object out of list
 * answers (`dropFromLists`) for one read and for five reads in a row, and the CLI's `apply` must
 * never create a duplicate of a managed Initiative, never bind a source to another origin, never
 * adopt a managed object as "not yet managed", and never drop an entry of the ownership record.
 * The emulator's request log shows what was sent.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import { API_KEY, cli, removeDir, startTestEmulator, tempDir, writeFiles } from '../cli/run.js';

let emulator: RunningEmulator;
const dirs: string[] = [];

beforeEach(async () => {
  emulator = await startTestEmulator();
});
afterEach(async () => {
  await emulator.stop();
  await Promise.all(dirs.splice(0).map(removeDir));
});

const SOURCE = 'absence-test';
const INITIATIVE = 'Kill2 test 3';

const scorecard = (description = 'The bar') => `tag: readiness
name: Readiness
description: ${description}
ladder:
  levels:
    - name: Gold
      rank: 1
      color: "#FFD700"
rules:
  - title: Has git
    expression: git != null
    level: Gold
`;
const initiative = (name: string, description = 'Reach Gold') => `name: ${name}
description: ${description}
scorecardTag: readiness
targetDate: "2030-12-31"
isDraft: false
emphasizedLevels:
  - rank: 1
`;

/** A checkout of `remote` holding `files`. */
const checkout = async (remote: string, files: Record<string, string>): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, { '.git/config': `[remote "origin"]\n\turl = ${remote}\n`, ...files });
  return dir;
};

const repository = (files: Record<string, string> = {}) =>
  checkout('https://github.com/acme/catalog', {
    'cortex-sync.yaml': `sourceId: ${SOURCE}\n`,
    '.cortex/scorecards/readiness.yaml': scorecard(),
    '.cortex/initiatives/kill2.yaml': initiative(INITIATIVE),
    ...files,
  });

const api = async (path: string): Promise<unknown> => {
  const res = await fetch(`${emulator.url}${path}`, { headers: { authorization: `Bearer ${API_KEY}` } });
  return res.json();
};

const initiativesNamed = async (name: string): Promise<unknown[]> => {
  const body = (await api('/api/v1/initiatives?includeDrafts=true&includeExpired=true&pageSize=1000')) as {
    initiatives: { name: string }[];
  };
  return body.initiatives.filter((i) => i.name === name);
};

const recordOf = async (sourceId: string): Promise<Record<string, unknown>> => {
  const body = (await api(`/api/v1/catalog/${encodeURIComponent(inventoryTag(sourceId))}/openapi`)) as {
    info: { 'x-cortex-definition': Record<string, unknown> };
  };
  return body.info['x-cortex-definition'];
};

const since = (from: number) => emulator.requests.slice(from);
const posts = (from: number, path: string) => since(from).filter((r) => r.method === 'POST' && r.path === path);

/** Leaves `match` out of the next `reads` list answers (of `path`, when given). */
const dropFromLists = (match: string, reads: number, path?: string) =>
  emulator.setFaults({ dropFromLists: [{ match, reads, ...(path !== undefined ? { path } : {}) }] });

describe('a list that leaves out a managed Initiative never creates a duplicate', () => {
  for (const reads of [1, 5]) {
    it(`left out of ${reads} list answer${reads > 1 ? 's' : ''} in a row: no POST, the plan shows it as existing, one Initiative`, async () => {
      const dir = await repository();
      const first = await cli(['apply'], { emulator, cwd: dir });
      expect(first.code, first.stderr).toBe(0);
      const [created] = (await initiativesNamed(INITIATIVE)) as { cid: string }[];
      // The record keeps the cid the create's answer gave, in the same apply.
      expect(await recordOf(SOURCE)).toMatchObject({ serverIds: { initiative: { [INITIATIVE]: created?.cid } } });

      // An edit, so that the run has work and goes through the lease and its re-check.
      await writeFiles(dir, { '.cortex/initiatives/kill2.yaml': initiative(INITIATIVE, 'Reach Gold by winter') });
      dropFromLists(INITIATIVE, reads, '/api/v1/initiatives');
      const from = emulator.requests.length;
      const run = await cli(['apply'], { emulator, cwd: dir });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(since(from).some((r) => r.fault === 'list-dropped')).toBe(true);
      expect(posts(from, '/api/v1/initiatives')).toEqual([]);
      // Confirmed by a read by its cid.
      expect(since(from).some((r) => r.method === 'GET' && r.path === `/api/v1/initiatives/${created?.cid}`)).toBe(
        true,
      );
      expect(run.stdout).not.toMatch(/\+ create initiative/i);
      expect(run.stdout).toMatch(/update initiative/i);
      emulator.setFaults({});
      const live = await initiativesNamed(INITIATIVE);
      expect(live).toHaveLength(1);
      expect(live[0]).toMatchObject({ description: 'Reach Gold by winter' });
    });
  }
});

describe("a list that leaves out the source's own record never lets another origin take the source", () => {
  for (const reads of [1, 5]) {
    it(`left out of ${reads} list answer${reads > 1 ? 's' : ''}: source-claimed, no write, the record and the scorecard as they were`, async () => {
      const rightful = await repository();
      expect((await cli(['apply'], { emulator, cwd: rightful })).code).toBe(0);
      const before = await recordOf(SOURCE);
      expect(before).toMatchObject({ origin: 'github.com/acme/catalog' });

      const other = await checkout('https://github.com/mallory/fork', {
        'cortex-sync.yaml': `sourceId: ${SOURCE}\nprune: true\n`,
        '.cortex/scorecards/readiness.yaml': scorecard('Taken over'),
      });
      dropFromLists(inventoryTag(SOURCE), reads, '/api/v1/catalog/descriptors');
      const from = emulator.requests.length;
      const run = await cli(['apply'], { emulator, cwd: other });
      expect(run.code).toBe(1);
      expect(run.stdout + run.stderr).toMatch(/source-claimed/);
      expect(run.stdout + run.stderr).not.toMatch(/not yet managed by any repository/);
      expect(since(from).filter((r) => r.method !== 'GET')).toEqual([]);
      expect(await recordOf(SOURCE)).toEqual(before);
      const card = (await api('/api/v1/scorecards/readiness')) as { scorecard?: { description?: string } };
      expect(JSON.stringify(card)).not.toContain('Taken over');

      // The rightful repository is unaffected.
      emulator.setFaults({});
      const again = await cli(['apply'], { emulator, cwd: rightful });
      expect(again.code, again.stdout + again.stderr).toBe(0);
    });
  }
});
