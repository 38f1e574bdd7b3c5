/**
 * Co-ownership of entities (`entityWrites: merge`, docs/adr-0004-co-ownership.md), through the
 * command as users run it, against the emulator behind a recording forwarder (every request's body
 * is kept): an integration's keys survive, only declared keys are sent and compared, a key removed
 * from the manifest goes away live, a manifest value equal to the vendor CLI's `__delete__`
 * survives, and two sources declaring one key are a `field-conflict` unless forced.
 */
import { readFile, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type Forwarder, type SeenRequest, startForwarder } from '../support/forwarder.js';
import { claimKeyOf } from '../../src/kinds/entity/merge.js';
import { writeFiles } from '../cli/run.js';
import { coOwnershipHarness } from './co-ownership-harness.js';

let forwarder: Forwarder;
const seen: SeenRequest[] = [];
// The CLI talks to the forwarder, which keeps every request's body; the test reads the emulator directly.
const { emulator, run, api, repoFiles: repo } = coOwnershipHarness({ cliBaseUrl: () => forwarder.url });

beforeAll(async () => {
  forwarder = await startForwarder(emulator.url, (request) => {
    seen.push(request);
    return undefined;
  });
});
afterAll(async () => {
  await forwarder.close();
});

const rewrite = (dir: string, tag: string, text: string) => writeFiles(dir, { [`.cortex/catalog/${tag}.yaml`]: text });

const infoOf = async (tag: string): Promise<Record<string, unknown>> => {
  const r = await api('GET', `/api/v1/catalog/${tag}/openapi`);
  expect(r.status).toBe(200);
  return (r.json as { info: Record<string, unknown> }).info;
};

const writesSince = (at: number) => seen.slice(at).filter((r) => r.method !== 'GET');
const entityPatchesSince = (at: number) =>
  writesSince(at).filter((r) => r.method === 'PATCH' && r.path.startsWith('/api/v1/open-api'));
const planJson = async (dir: string, extra: string[] = []) => {
  const r = await run(dir, ['plan', '--output', 'json', ...extra]);
  return { ...r, plan: r.stdout.trim() === '' ? undefined : (JSON.parse(r.stdout) as Record<string, unknown>) };
};
const summaryOf = (plan: Record<string, unknown> | undefined) => plan?.summary as Record<string, number> | undefined;

const manifest = (tag: string, groups: string, metadata: string): string =>
  [
    'openapi: 3.0.1',
    'info:',
    `  title: ${tag}`,
    `  x-cortex-tag: ${tag}`,
    '  x-cortex-type: service',
    `  x-cortex-groups: [${groups}]`,
    '  x-cortex-custom-metadata:',
    metadata,
    '',
  ].join('\n');

describe('entityWrites: merge', { timeout: 120_000 }, () => {
  it('keeps an integration’s keys, writes only declared keys, removes a dropped key, and keeps a value equal to __delete__', async () => {
    const tag = 'co-payments';
    const full = '    cost-center: cc-1\n    note: __delete__';
    const dir = await repo('sourceId: platform\nentityWrites: merge\n', { [tag]: manifest(tag, 'tier-1', full) });
    expect((await run(dir, ['apply'])).code).toBe(0);
    expect((await infoOf(tag))['x-cortex-custom-metadata']).toMatchObject({
      note: '__delete__',
      'cost-center': 'cc-1',
    });

    // "An integration" writes on-call, a link and a custom-metadata key straight into the workspace.
    const integration = [
      'openapi: 3.0.1',
      'info:',
      `  x-cortex-tag: ${tag}`,
      '  x-cortex-oncall: {pagerduty: {id: P123, type: SCHEDULE}}',
      '  x-cortex-link: [{name: runbook, type: runbook, url: "https://example.com/rb"}]',
      '  x-cortex-custom-metadata: {from-integration: pd}',
      '',
    ].join('\n');
    expect((await api('PATCH', '/api/v1/open-api?failIfEntityDoesNotExist=true', integration)).status).toBe(200);

    const quiet = await planJson(dir);
    expect(quiet.code).toBe(0);
    expect(summaryOf(quiet.plan)).toMatchObject({ create: 0, update: 0, delete: 0, archive: 0 });
    let at = seen.length;
    expect((await run(dir, ['apply'])).code).toBe(0);
    expect(writesSince(at)).toEqual([]);

    // A declared key changes: one PATCH, holding only what the manifest declares.
    await rewrite(dir, tag, manifest(tag, 'tier-2', full));
    at = seen.length;
    expect((await run(dir, ['apply'])).code).toBe(0);
    const patches = entityPatchesSince(at);
    expect(patches).toHaveLength(1);
    expect(patches[0]?.path).toContain('failIfEntityDoesNotExist=true');
    expect(patches[0]?.path).not.toContain('appendArrays=true');
    const sent = parseYaml(patches[0]?.body ?? '') as { info: Record<string, unknown> };
    expect(Object.keys(sent.info).sort()).toEqual(
      ['title', 'x-cortex-custom-metadata', 'x-cortex-groups', 'x-cortex-tag', 'x-cortex-type'].sort(),
    );
    expect(sent.info['x-cortex-custom-metadata']).toEqual({ 'cost-center': 'cc-1', note: '__delete__' });
    let info = await infoOf(tag);
    expect(info['x-cortex-groups']).toEqual(['tier-2']);
    expect(info['x-cortex-oncall']).toBeDefined();
    expect(info['x-cortex-link']).toHaveLength(1);

    // A declared key removed from the manifest goes away live; the integration's keys stay.
    await rewrite(dir, tag, manifest(tag, 'tier-2', '    note: __delete__'));
    const removal = await planJson(dir);
    expect(summaryOf(removal.plan)).toMatchObject({ update: 1 });
    at = seen.length;
    expect((await run(dir, ['apply'])).code).toBe(0);
    const removing = entityPatchesSince(at);
    expect(removing).toHaveLength(1);
    const marker = new URL(`http://x${removing[0]?.path ?? ''}`).searchParams.get('deleteMarkerValue');
    expect(marker).toMatch(/^cortex-sync-delete-[0-9a-f]{32}$/);
    info = await infoOf(tag);
    const metadata = info['x-cortex-custom-metadata'] as Record<string, unknown>;
    expect(metadata['cost-center']).toBeUndefined();
    expect(metadata['from-integration']).toBe('pd');
    expect(metadata.note).toBe('__delete__');
    expect(metadata['cortex-sync']).toEqual({ source: 'platform' });
    expect(info['x-cortex-oncall']).toBeDefined();
    expect(info['x-cortex-link']).toHaveLength(1);
    expect(summaryOf((await planJson(dir)).plan)).toMatchObject({ update: 0, create: 0 });
  });

  it('two sources manage different keys of one entity; a key both declare is a field-conflict naming both, unless forced', async () => {
    const tag = 'co-shared';
    const owner = await repo('sourceId: service-repo\nentityWrites: merge\n', {
      [tag]: `openapi: 3.0.1\ninfo:\n  title: Shared\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n  description: owned here\n`,
    });
    const platform = await repo('sourceId: platform-repo\nentityWrites: merge\n', {
      [tag]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  x-cortex-groups: [tier-1]\n`,
    });
    expect((await run(owner, ['apply'])).code).toBe(0);
    expect((await run(platform, ['apply'])).code).toBe(0);
    for (const dir of [owner, platform]) {
      const p = await planJson(dir);
      expect(p.code).toBe(0);
      expect(summaryOf(p.plan)).toMatchObject({ create: 0, update: 0 });
    }
    const info = await infoOf(tag);
    expect(info).toMatchObject({ description: 'owned here', 'x-cortex-groups': ['tier-1'] });
    // The owner's marker, and the platform's claim: it writes keys into an entity it does not own (ADR 0004).
    expect(info['x-cortex-custom-metadata']).toEqual({
      'cortex-sync': { source: 'service-repo' },
      [claimKeyOf('platform-repo')]: { source: 'platform-repo' },
    });

    // The platform repository now declares the description too.
    await rewrite(
      platform,
      tag,
      `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  x-cortex-groups: [tier-1]\n  description: from platform\n`,
    );
    const conflict = await run(platform, ['plan']);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr + conflict.stdout).toMatch(/field-conflict/);
    expect(conflict.stderr + conflict.stdout).toMatch(/info\.description[\s\S]*platform-repo[\s\S]*service-repo/);
    // A repository file cannot force it.
    await writeFiles(platform, {
      'cortex-sync.yaml': 'sourceId: platform-repo\nentityWrites: merge\nforceConflicts: true\n',
    });
    expect((await run(platform, ['plan'])).code).not.toBe(0);
    await writeFiles(platform, { 'cortex-sync.yaml': 'sourceId: platform-repo\nentityWrites: merge\n' });

    const forced = await planJson(platform, ['--force-conflicts']);
    expect(forced.code).toBe(0);
    expect(JSON.stringify(forced.plan)).toMatch(/take over `info\.description` from source `service-repo`/);
    expect((await run(platform, ['apply', '--force-conflicts'])).code).toBe(0);
    expect((await infoOf(tag)).description).toBe('from platform');
    // The owner sees the conflict now, and existence is still the owner's: nothing archived by the platform.
    expect((await run(owner, ['plan'])).code).not.toBe(0);
  });

  it('a saved plan carries entityWrites and --force-conflicts: a changed mode is stale, a forced plan needs the flag again', async () => {
    const tag = 'co-saved';
    const owner = await repo('sourceId: saved-owner\nentityWrites: merge\n', {
      [tag]: `openapi: 3.0.1\ninfo:\n  title: Saved\n  x-cortex-tag: ${tag}\n  description: one\n`,
    });
    expect((await run(owner, ['apply'])).code).toBe(0);
    const other = await repo('sourceId: saved-other\nentityWrites: merge\n', {
      [tag]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  description: two\n`,
    });
    const file = `${other}/p.json`;
    expect((await run(other, ['plan', '--force-conflicts', '--out', file])).code).toBe(0);
    const saved = JSON.parse(await readFile(file, 'utf8')) as { settings: Record<string, unknown> };
    expect(saved.settings).toMatchObject({ entityWrites: 'merge', forceConflicts: true });
    const without = await run(other, ['apply', file]);
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/--force-conflicts/);
    // The repository switches to replace after the plan was made: the saved plan is stale, nothing written.
    await writeFiles(other, { 'cortex-sync.yaml': 'sourceId: saved-other\nentityWrites: replace\n' });
    const at = seen.length;
    const stale = await run(other, ['apply', file, '--force-conflicts']);
    expect(stale.code).toBe(1);
    expect(writesSince(at).filter((r) => r.path.startsWith('/api/v1/open-api'))).toEqual([]);
    await writeFiles(other, { 'cortex-sync.yaml': 'sourceId: saved-other\nentityWrites: merge\n' });
    expect((await run(other, ['apply', file, '--force-conflicts'])).code).toBe(0);
    expect((await infoOf(tag)).description).toBe('two');
  });

  it('a merge source that does not own an entity never archives it; dropping its manifest releases its keys', async () => {
    const tag = 'co-existence';
    const owner = await repo('sourceId: exist-owner\nentityWrites: merge\n', {
      [tag]: `openapi: 3.0.1\ninfo:\n  title: Exists\n  x-cortex-tag: ${tag}\n`,
      'co-existence-anchor': `openapi: 3.0.1\ninfo:\n  title: Anchor\n  x-cortex-tag: co-existence-anchor\n`,
    });
    const platform = await repo('sourceId: exist-platform\nentityWrites: merge\n', {
      [tag]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  x-cortex-groups: [tier-3]\n`,
      'co-existence-anchor': `openapi: 3.0.1\ninfo:\n  x-cortex-tag: co-existence-anchor\n  x-cortex-groups: [tier-3]\n`,
    });
    expect((await run(owner, ['apply'])).code).toBe(0);
    expect((await run(platform, ['apply'])).code).toBe(0);
    await rm(`${platform}/.cortex/catalog/${tag}.yaml`);
    const at = seen.length;
    expect((await run(platform, ['apply', '--prune'])).code).toBe(0);
    expect(writesSince(at).filter((r) => r.path.includes('/archive') || r.method === 'DELETE')).toEqual([]);
    const entity = await api('GET', `/api/v1/catalog/${tag}`);
    expect((entity.json as { isArchived?: boolean }).isArchived ?? false).toBe(false);
    // Its keys are no longer claimed: the owner may declare them without a conflict.
    await rewrite(
      owner,
      tag,
      `openapi: 3.0.1\ninfo:\n  title: Exists\n  x-cortex-tag: ${tag}\n  x-cortex-groups: [tier-1]\n`,
    );
    const p = await planJson(owner);
    expect(p.code).toBe(0);
    expect(summaryOf(p.plan)).toMatchObject({ update: 1 });
  });

  it('two sources managing different keys of the same 100 entities converge in either order; a key both declare is a field-conflict in both plans', async () => {
    for (const order of ['groups-first', 'owners-first'] as const) {
      const tags = Array.from({ length: 100 }, (_, i) => `co-many-${order}-${i}`);
      for (const tag of tags)
        expect(
          (await api('POST', '/api/v1/open-api', `openapi: 3.0.1\ninfo:\n  title: ${tag}\n  x-cortex-tag: ${tag}\n`))
            .status,
        ).toBe(200);
      const groups = await repo(
        `sourceId: many-groups-${order}\nentityWrites: merge\n`,
        Object.fromEntries(
          tags.map((t) => [t, `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${t}\n  x-cortex-groups: [tier-1]\n`]),
        ),
      );
      const owners = await repo(
        `sourceId: many-owners-${order}\nentityWrites: merge\n`,
        Object.fromEntries(
          tags.map((t) => [
            t,
            `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${t}\n  x-cortex-custom-metadata: {team: payments}\n`,
          ]),
        ),
      );
      const sequence = order === 'groups-first' ? [groups, owners] : [owners, groups];
      for (const dir of sequence) expect((await run(dir, ['apply'])).code).toBe(0);
      for (const dir of sequence) {
        const p = await planJson(dir);
        expect(p.code).toBe(0);
        expect(summaryOf(p.plan)).toMatchObject({ create: 0, update: 0, noop: 100 });
      }
      const info = await infoOf(tags[7] ?? '');
      expect(info).toMatchObject({ 'x-cortex-groups': ['tier-1'], 'x-cortex-custom-metadata': { team: 'payments' } });
      if (order === 'owners-first') continue;
      const both = tags[3] ?? '';
      await rewrite(
        groups,
        both,
        `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${both}\n  x-cortex-groups: [tier-1]\n  x-cortex-custom-metadata: {team: other}\n`,
      );
      expect((await run(groups, ['apply', '--force-conflicts'])).code).toBe(0);
      for (const dir of [groups, owners]) {
        const r = await run(dir, ['plan']);
        expect(r.code).not.toBe(0);
        expect(r.stdout + r.stderr).toMatch(/field-conflict/);
        expect(r.stdout + r.stderr).toContain('x-cortex-custom-metadata.team');
      }
    }
  }, 120_000);

  it('validate reads manifests as the run writes them: a merge manifest may leave out its title, a replace one may not', async () => {
    const text = 'openapi: 3.0.1\ninfo:\n  x-cortex-tag: co-untitled\n  x-cortex-groups: [tier-1]\n';
    const merging = await repo('sourceId: v-merge\nentityWrites: merge\n', { 'co-untitled': text });
    expect((await run(merging, ['validate'])).code).toBe(0);
    const replacing = await repo('sourceId: v-replace\n', { 'co-untitled': text });
    const refused = await run(replacing, ['validate']);
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toMatch(/info\.title: is required/);
  });
});
