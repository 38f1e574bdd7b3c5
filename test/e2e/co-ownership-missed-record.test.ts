/**
 * Merge mode when a list answer leaves another source's ownership record out (absence is a
 * hypothesis, docs/adr-0004-co-ownership.md "Conflicts"): a source that writes keys into an entity
 * it does not own names itself on the entity, so every other source knows whose record to read by
 * its tag when the list did not show it. A key that source declares is still a `field-conflict`;
 * a record that cannot be read is a refusal naming it (`claim-unconfirmed`), nothing written.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_NAMED_RECORD_READS } from '../../src/engine/fetch-live.js';
import { inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import { API_KEY } from '../cli/run.js';
import { coOwnershipHarness } from './co-ownership-harness.js';

const { emulator, run, infoOf, nameSources, leaveRecordsOut, repo } = coOwnershipHarness();
const writesSince = (at: number) => emulator.requests.slice(at).filter((r) => r.method !== 'GET');

describe('entityWrites: merge, another source’s record left out of the list', { timeout: 120_000 }, () => {
  const tag = 'mr-shared';
  let third: string;

  beforeAll(async () => {
    const owner = await repo('mr-owner', tag, '  title: Shared\n  description: owned here\n');
    const platform = await repo('mr-platform', tag, '  x-cortex-groups: [tier-1]\n');
    expect((await run(owner, ['apply'])).code).toBe(0);
    expect((await run(platform, ['apply'])).code).toBe(0);
    third = await repo('mr-third', tag, '  x-cortex-groups: [tier-9]\n');
  });

  it('a key declared by a source whose record the list left out is still a field-conflict; nothing is written', async () => {
    leaveRecordsOut(['mr-platform'], 50);
    try {
      const at = emulator.requests.length;
      const r = await run(third, ['apply']);
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toMatch(/field-conflict/);
      expect(r.stdout + r.stderr).toMatch(/info\.x-cortex-groups[\s\S]*mr-third[\s\S]*mr-platform/);
      expect(writesSince(at)).toEqual([]);
    } finally {
      emulator.setFaults({});
    }
    expect((await infoOf(tag))['x-cortex-groups']).toEqual(['tier-1']);
  });

  it('a record left out that cannot be read by its tag either is a refusal naming it (claim-unconfirmed)', async () => {
    leaveRecordsOut(['mr-platform'], 50, [{ source: 'mr-platform', message: 'record store down' }]);
    try {
      const at = emulator.requests.length;
      const r = await run(third, ['apply', '--force-conflicts']);
      expect(r.code).not.toBe(0);
      const out = r.stdout + r.stderr;
      expect(out).toMatch(/claim-unconfirmed/);
      expect(out).toContain(inventoryTag('mr-platform'));
      expect(out).toContain('record store down');
      // A failed read may succeed later; the message says so, and only here.
      expect(out).toContain('run again when the API answers');
      expect(writesSince(at)).toEqual([]);
    } finally {
      emulator.setFaults({});
    }
  });

  it('a record at the source’s tag that names another source is not taken for its record: claim-unconfirmed', async () => {
    const tagOfRecord = inventoryTag('mr-platform');
    const forged = [
      'openapi: 3.0.1',
      'info:',
      `  title: forged`,
      `  x-cortex-tag: ${tagOfRecord}`,
      '  x-cortex-type: cortex-sync-inventory',
      '  x-cortex-definition: {source: someone-else, objects: {}}',
      '',
    ].join('\n');
    const original = await fetch(`${emulator.url}/api/v1/catalog/${tagOfRecord}/openapi?yaml=true`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    }).then((r) => r.text());
    const post = (body: string) =>
      fetch(`${emulator.url}/api/v1/open-api`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/openapi;charset=UTF-8' },
        body,
      });
    expect((await post(forged)).status).toBe(200);
    leaveRecordsOut(['mr-platform'], 50);
    try {
      const r = await run(third, ['plan']);
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toMatch(/claim-unconfirmed/);
      expect(r.stdout + r.stderr).toContain('is not its own');
      // Retrying cannot help a forged record: the message says what to put right instead.
      expect(r.stdout + r.stderr).toContain('delete it in Cortex');
      expect(r.stdout + r.stderr).not.toContain('run again when the API answers');
    } finally {
      emulator.setFaults({});
      expect((await post(original)).status).toBe(200);
    }
  });

  it('sources named on an entity by hand cost bounded reads: beyond the bound, a refusal', async () => {
    const tagOfEntity = 'mr-flooded';
    const owner = await repo('mr-flood-owner', tagOfEntity, '  title: Flooded\n');
    expect((await run(owner, ['apply'])).code).toBe(0);
    const fakes = Array.from({ length: MAX_NAMED_RECORD_READS + 1 }, (_, i) => `mr-fake-${i}`);
    const res = await nameSources(tagOfEntity, fakes);
    expect(res.status).toBe(200);
    const other = await repo('mr-flood-other', tagOfEntity, '  x-cortex-groups: [tier-1]\n');
    const at = emulator.requests.length;
    const r = await run(other, ['plan']);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/claim-unconfirmed/);
    expect(r.stdout + r.stderr).toContain(`more than ${MAX_NAMED_RECORD_READS} sources`);
    expect(r.stdout + r.stderr).toContain('remove in Cortex the claims');
    const byTag = emulator.requests
      .slice(at)
      .filter((q) => q.path.startsWith('/api/v1/catalog/cortex-sync-inventory-'));
    expect(byTag.length).toBeLessThanOrEqual(MAX_NAMED_RECORD_READS + 1);
  });

  it('the owner’s record left out is read by its tag: a key nobody else declares plans without a conflict', async () => {
    const other = await repo('mr-fourth', tag, '  x-cortex-owners: [{type: email, email: a@example.com}]\n');
    leaveRecordsOut(['mr-owner', 'mr-platform'], 50);
    try {
      const r = await run(other, ['plan']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toMatch(/field-conflict/);
    } finally {
      emulator.setFaults({});
    }
  });
});
