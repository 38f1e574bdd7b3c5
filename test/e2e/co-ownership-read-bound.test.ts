/**
 * The bound on the records merge mode reads by tag (docs/adr-0004-co-ownership.md, "Conflicts"):
 * anyone who can edit an entity can name sources on it, so one entity flooded with claims is
 * refused (`claim-unconfirmed`) — but it takes its turns, not the reads another entity's real
 * co-owner needs: that co-owner's record, left out of the list, is still read, and its key judged.
 */
import { describe, expect, it } from 'vitest';
import { MAX_NAMED_RECORD_READS } from '../../src/engine/fetch-live.js';
import { coOwnershipHarness } from './co-ownership-harness.js';

const { emulator, run, nameSources, repoOf: repo, leaveRecordsOut } = coOwnershipHarness();

describe('entityWrites: merge, one entity flooded with claims', { timeout: 120_000 }, () => {
  it('is refused alone: another entity’s co-owner, left out of the list, is still read and its key is a field-conflict', async () => {
    const flooded = 'rb-flooded';
    const shared = 'rb-shared';
    const owner = await repo('rb-owner', { [flooded]: '  title: Flooded\n', [shared]: '  title: Shared\n' });
    expect((await run(owner, ['apply'])).code).toBe(0);
    // The real co-owner's id sorts after every forged one.
    const platform = await repo('zz-rb-platform', { [shared]: '  x-cortex-groups: [tier-1]\n' });
    expect((await run(platform, ['apply'])).code).toBe(0);
    const fakes = Array.from({ length: MAX_NAMED_RECORD_READS + 1 }, (_, i) => `aa-rb-fake-${i}`);
    const res = await nameSources(flooded, fakes);
    expect(res.status).toBe(200);

    const third = await repo('rb-third', {
      [flooded]: '  x-cortex-groups: [tier-2]\n',
      [shared]: '  x-cortex-groups: [tier-9]\n',
    });
    leaveRecordsOut(['zz-rb-platform']);
    try {
      const r = await run(third, ['plan']);
      const out = r.stdout + r.stderr;
      expect(r.code).not.toBe(0);
      expect(out).toMatch(
        new RegExp(`entity \`${flooded}\` names source \`aa-rb-fake-[0-9]+\`[^\\n]*claim-unconfirmed`),
      );
      expect(out).not.toMatch(new RegExp(`entity \`${shared}\` names source`));
      expect(out).toMatch(new RegExp(`entity \`${shared}\`[^\\n]*zz-rb-platform[^\\n]*field-conflict`));
    } finally {
      emulator.setFaults({});
    }
  });
});
