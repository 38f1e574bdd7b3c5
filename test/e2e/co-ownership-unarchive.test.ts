/**
 * Merge mode and an archived entity its owner declares again (docs/adr-0004-co-ownership.md,
 * "Existence"): the archived entity's descriptor is read by its tag before planning, so the plan
 * shows exactly the keys the unarchive and the PATCH change (a key dropped from the manifest
 * among them), and nothing else; an archived descriptor that cannot be read is a refusal.
 */
import { describe, expect, it } from 'vitest';
import { writeFiles } from '../cli/run.js';
import { coOwnershipHarness, mergeSettings } from './co-ownership-harness.js';

const { emulator, run, api, infoOf, repo, repoFiles } = coOwnershipHarness();
const isArchived = async (tag: string): Promise<boolean> =>
  ((await api('GET', `/api/v1/catalog/${tag}`)).json as { isArchived?: boolean }).isArchived === true;

interface PlannedChange {
  kind: string;
  id: string;
  action: string;
  unarchive?: boolean;
  diff: { path: string; before?: unknown; after?: unknown }[];
}
const changeOf = async (dir: string, tag: string) => {
  const r = await run(dir, ['plan', '--output', 'json']);
  const plan = r.stdout.trim() === '' ? undefined : (JSON.parse(r.stdout) as { changes: PlannedChange[] });
  return { ...r, change: plan?.changes.find((c) => c.kind === 'entity' && c.id === tag) };
};

const manifest = (tag: string, extra: string): string =>
  `openapi: 3.0.1\ninfo:\n  title: Archived one\n  x-cortex-tag: ${tag}\n  description: kept\n${extra}`;

describe('entityWrites: merge, an archived entity declared again', { timeout: 120_000 }, () => {
  it('reads the archived descriptor: the plan shows the unarchive and exactly the keys that go away, and the apply does that', async () => {
    const tag = 'unarch-merge';
    const dir = await repoFiles(mergeSettings('unarch-owner'), {
      [tag]: manifest(tag, '  x-cortex-groups: [tier-1]\n'),
    });
    expect((await run(dir, ['apply'])).code).toBe(0);
    // An integration's key, then the entity archived in the UI.
    const integration = `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  x-cortex-custom-metadata: {from-integration: pd}\n`;
    expect((await api('PATCH', '/api/v1/open-api?failIfEntityDoesNotExist=true', integration)).status).toBe(200);
    expect((await api('PUT', `/api/v1/catalog/${tag}/archive`)).status).toBe(200);

    // Another merge source declaring the entity never brings it back: existence stays with its creator.
    const other = await repo('unarch-other', tag, '  x-cortex-owners: [{type: email, email: a@example.com}]\n');
    const before = emulator.requests.length;
    const elsewhere = await run(other, ['apply']);
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.stdout + elsewhere.stderr).toMatch(/archived-elsewhere|only its owner brings it back/);
    const wrote = emulator.requests.slice(before).filter((q) => q.method !== 'GET');
    expect(wrote.filter((q) => q.method === 'PATCH' || q.path.startsWith(`/api/v1/catalog/${tag}/`))).toEqual([]);
    expect(await isArchived(tag)).toBe(true);

    // The manifest no longer declares the groups.
    await writeFiles(dir, { [`.cortex/catalog/${tag}.yaml`]: manifest(tag, '') });
    const planned = await changeOf(dir, tag);
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    expect(planned.change).toMatchObject({ action: 'update', unarchive: true });
    // Exactly one field changes: the groups go away (the title and description are as live).
    expect(planned.change?.diff).toEqual([{ path: 'info.x-cortex-groups', before: ['tier-1'] }]);

    expect((await run(dir, ['apply'])).code).toBe(0);
    expect(await isArchived(tag)).toBe(false);
    const info = await infoOf(tag);
    expect(info['x-cortex-groups']).toBeUndefined();
    expect(info.description).toBe('kept');
    expect(info['x-cortex-custom-metadata']).toMatchObject({ 'from-integration': 'pd' });
    const after = await changeOf(dir, tag);
    expect(after.change?.action).toBe('noop');
  });

  it('an archived descriptor that cannot be read is a refusal naming the entity; nothing is written', async () => {
    const tag = 'unarch-unreadable';
    const dir = await repoFiles(mergeSettings('unarch-owner-2'), {
      [tag]: manifest(tag, '  x-cortex-groups: [tier-1]\n'),
    });
    expect((await run(dir, ['apply'])).code).toBe(0);
    expect((await api('PUT', `/api/v1/catalog/${tag}/archive`)).status).toBe(200);
    await writeFiles(dir, { [`.cortex/catalog/${tag}.yaml`]: manifest(tag, '') });
    emulator.setFaults({
      reject: [
        { method: 'GET', path: `/api/v1/catalog/${tag}/openapi`, status: 500, message: 'descriptor store down' },
      ],
    });
    try {
      const at = emulator.requests.length;
      const r = await run(dir, ['apply']);
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toMatch(/merge-archived-unreadable/);
      expect(r.stdout + r.stderr).toContain(tag);
      expect(r.stdout + r.stderr).toContain('descriptor store down');
      expect(emulator.requests.slice(at).filter((q) => q.method !== 'GET')).toEqual([]);
    } finally {
      emulator.setFaults({});
    }
    expect(await isArchived(tag)).toBe(true);
  });
});
