/**
 * Merge mode in a run without a source id (no `sourceId`, no git remote, no GITHUB_REPOSITORY):
 * such a run could name itself nowhere (no record, no claim), so the keys it wrote would be
 * invisible to every other source. It is refused (`merge-needs-source-id`), and even a co-owner
 * whose record the list leaves out keeps its key.
 */
import { describe, expect, it } from 'vitest';
import { coOwnershipHarness } from './co-ownership-harness.js';

const { emulator, run, infoOf, repo, leaveRecordsOut } = coOwnershipHarness();

describe('entityWrites: merge without a source id', { timeout: 120_000 }, () => {
  it('is refused before anything is written, so a co-owner keeps its key even when the list leaves its record out', async () => {
    const tag = 'nosrc-shared';
    const owner = await repo('nosrc-owner', tag, '  title: Shared\n');
    const platform = await repo('nosrc-platform', tag, '  x-cortex-groups: [tier-1]\n');
    expect((await run(owner, ['apply'])).code).toBe(0);
    expect((await run(platform, ['apply'])).code).toBe(0);
    const anonymous = await repo(undefined, tag, '  x-cortex-groups: [tier-9]\n');
    leaveRecordsOut(['nosrc-platform']);
    try {
      const r = await run(anonymous, ['apply']);
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toMatch(/merge-needs-source-id/);
      expect(r.stdout + r.stderr).toMatch(/needs a source id so that other sources see the keys/);
    } finally {
      emulator.setFaults({});
    }
    expect((await infoOf(tag))['x-cortex-groups']).toEqual(['tier-1']);
  });

  it('a plan without a source id in merge mode says what to set, and the same repository with one plans', async () => {
    const tag = 'nosrc-alone';
    const anonymous = await repo(undefined, tag, '  title: Alone\n');
    const refused = await run(anonymous, ['plan']);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/merge-needs-source-id/);
    expect((await run(anonymous, ['plan', '--source-id', 'nosrc-alone'])).code).toBe(0);
  });
});
