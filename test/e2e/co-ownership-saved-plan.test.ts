/**
 * Claims of merge mode (docs/adr-0004-co-ownership.md) against a list of the records that keeps
 * leaving a co-owner's record out: a saved plan made while it did is applied as planned (the
 * record read by its tag counts at apply time as it did at plan time), and what it writes is the
 * plan's.
 */
import { describe, expect, it } from 'vitest';
import { writeFiles } from '../cli/run.js';
import { coOwnershipHarness } from './co-ownership-harness.js';

const { emulator, run, infoOf, repo, leaveRecordsOut } = coOwnershipHarness();

describe(
  'entityWrites: merge, a saved plan while a co-owner’s record is left out of every list',
  { timeout: 120_000 },
  () => {
    it('apply FILE applies the plan: the record read by its tag at plan time is read so again, not taken for a change', async () => {
      const tag = 'ca-saved';
      const owner = await repo('ca-owner', tag, '  title: Shared\n  description: owned here\n');
      const platform = await repo('ca-platform', tag, '  x-cortex-groups: [tier-1]\n');
      expect((await run(owner, ['apply'])).code).toBe(0);
      expect((await run(platform, ['apply'])).code).toBe(0);
      leaveRecordsOut(['ca-platform']);
      try {
        await writeFiles(owner, {
          [`.cortex/catalog/${tag}.yaml`]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  title: Shared\n  description: changed here\n`,
        });
        const file = `${owner}/p.json`;
        const planned = await run(owner, ['plan', '--out', file]);
        expect(planned.code, planned.stdout + planned.stderr).toBe(0);
        const applied = await run(owner, ['apply', file]);
        expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      } finally {
        emulator.setFaults({});
      }
      expect(await infoOf(tag)).toMatchObject({ description: 'changed here', 'x-cortex-groups': ['tier-1'] });
    });
  },
);
