/**
 * Absence in a list is a hypothesis, not a fact: the emulator leaves one object out of list
 * answers (`dropFromLists`) for one read and for five reads in a row, and the CLI's `apply` must
 * never create a duplicate of a managed Initiative, never bind a source to another origin, never
 * adopt a managed object as "not yet managed", and never drop an entry of the ownership record.
 * The emulator's request log shows what was sent.
 */
import { describe, expect, it } from 'vitest';
import { inventoryTag } from '../../src/kinds/entity/records/inventory.js';

import { cli, writeFiles } from '../cli/run.js';
import { absenceWorld, INITIATIVE, initiative, scorecard, SOURCE } from './absence-world.js';

const { emulator, checkout, repository, api, initiativesNamed, recordOf, since, posts, dropFromLists } = absenceWorld();

describe('a list that leaves out a managed Initiative never creates a duplicate', () => {
  for (const reads of [1, 5]) {
    it(`left out of ${reads} list answer${reads > 1 ? 's' : ''} in a row: no POST, the plan shows it as existing, one Initiative`, async () => {
      const dir = await repository();
      const first = await cli(['apply'], { emulator: emulator(), cwd: dir });
      expect(first.code, first.stderr).toBe(0);
      const [created] = (await initiativesNamed(INITIATIVE)) as { cid: string }[];
      // The record keeps the cid the create's answer gave, in the same apply.
      expect(await recordOf(SOURCE)).toMatchObject({ serverIds: { initiative: { [INITIATIVE]: created?.cid } } });

      // An edit, so that the run has work and goes through the lease and its re-check.
      await writeFiles(dir, { '.cortex/initiatives/kill2.yaml': initiative(INITIATIVE, 'Reach Gold by winter') });
      dropFromLists(INITIATIVE, reads, '/api/v1/initiatives');
      const from = emulator().requests.length;
      const run = await cli(['apply'], { emulator: emulator(), cwd: dir });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(since(from).some((r) => r.fault === 'list-dropped')).toBe(true);
      expect(posts(from, '/api/v1/initiatives')).toEqual([]);
      // Confirmed by a read by its cid.
      expect(since(from).some((r) => r.method === 'GET' && r.path === `/api/v1/initiatives/${created?.cid}`)).toBe(
        true,
      );
      expect(run.stdout).not.toMatch(/\+ create initiative/i);
      expect(run.stdout).toMatch(/update initiative/i);
      emulator().setFaults({});
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
      expect((await cli(['apply'], { emulator: emulator(), cwd: rightful })).code).toBe(0);
      const before = await recordOf(SOURCE);
      expect(before).toMatchObject({ origin: 'github.com/acme/catalog' });

      const other = await checkout('https://github.com/mallory/fork', {
        'cortex-sync.yaml': `sourceId: ${SOURCE}\nprune: true\n`,
        '.cortex/scorecards/readiness.yaml': scorecard('Taken over'),
      });
      dropFromLists(inventoryTag(SOURCE), reads, '/api/v1/catalog/descriptors');
      const from = emulator().requests.length;
      const run = await cli(['apply'], { emulator: emulator(), cwd: other });
      expect(run.code).toBe(1);
      expect(run.stdout + run.stderr).toMatch(/source-claimed/);
      expect(run.stdout + run.stderr).not.toMatch(/not yet managed by any repository/);
      expect(since(from).filter((r) => r.method !== 'GET')).toEqual([]);
      expect(await recordOf(SOURCE)).toEqual(before);
      const card = (await api('/api/v1/scorecards/readiness')) as { scorecard?: { description?: string } };
      expect(JSON.stringify(card)).not.toContain('Taken over');

      // The rightful repository is unaffected.
      emulator().setFaults({});
      const again = await cli(['apply'], { emulator: emulator(), cwd: rightful });
      expect(again.code, again.stdout + again.stderr).toBe(0);
    });
  }
});
