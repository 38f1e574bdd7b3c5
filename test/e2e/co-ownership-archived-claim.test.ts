/**
 * An archived entity that names a co-owner (docs/adr-0004-co-ownership.md): the list of entities
 * gives an archived one no descriptor, so its claims are seen only once its descriptor is read by
 * its tag. The owner bringing it back with a key the co-owner declares is a `field-conflict` even
 * when the list of records leaves the co-owner's record out; nothing is unarchived or written.
 */
import { describe, expect, it } from 'vitest';
import { writeFiles } from '../cli/run.js';
import { coOwnershipHarness } from './co-ownership-harness.js';

const { emulator, run, api, repo, leaveRecordsOut } = coOwnershipHarness();

describe('entityWrites: merge, an archived entity naming a co-owner', { timeout: 120_000 }, () => {
  it('the owner declaring the co-owner’s key again is a field-conflict though the list left its record out', async () => {
    const tag = 'arch-claimed';
    const owner = await repo('arch-owner', tag, '  title: Shared\n');
    const platform = await repo('arch-platform', tag, '  x-cortex-groups: [tier-1]\n');
    expect((await run(owner, ['apply'])).code).toBe(0);
    expect((await run(platform, ['apply'])).code).toBe(0);
    expect((await api('PUT', `/api/v1/catalog/${tag}/archive`)).status).toBe(200);
    await writeFiles(owner, {
      [`.cortex/catalog/${tag}.yaml`]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  title: Shared\n  x-cortex-groups: [tier-9]\n`,
    });
    leaveRecordsOut(['arch-platform']);
    try {
      const at = emulator.requests.length;
      const r = await run(owner, ['apply']);
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toMatch(/field-conflict/);
      expect(r.stdout + r.stderr).toMatch(/info\.x-cortex-groups[\s\S]*arch-platform/);
      expect(emulator.requests.slice(at).filter((q) => q.method !== 'GET')).toEqual([]);
    } finally {
      emulator.setFaults({});
    }
    const details = (await api('GET', `/api/v1/catalog/${tag}`)).json as { isArchived?: boolean };
    expect(details.isArchived).toBe(true);
  });
});
