/**
 * Merge mode never removes what it cannot show as its own: the map that holds the owner's marker
 * (`x-cortex-custom-metadata`), with the UI's and integrations' keys beside it. Two ways an
 * outside review found it did: a manifest declaring an empty map (it claimed, compared and later
 * removed the whole map), and a source switched from replace to merge (its replace record's
 * top-level keys counted as dropped). Both left the entity without its owner's marker, so its owner
 * stopped managing it without any plan saying so.
 */
import { describe, expect, it } from 'vitest';
import { claimKeyOf } from '../../src/kinds/entity/merge.js';
import { writeFiles } from '../cli/run.js';
import { coOwnershipHarness } from './co-ownership-harness.js';

const { run, api, infoOf, repoFiles } = coOwnershipHarness();

const repo = (settings: string, tag: string, manifest: string) => repoFiles(settings, { [tag]: manifest });
const descriptor = (tag: string, lines: string[], title = true) =>
  ['openapi: 3.0.1', 'info:', ...(title ? [`  title: ${tag}`] : []), `  x-cortex-tag: ${tag}`, ...lines, ''].join('\n');
/** What an integration does: a PATCH of its own keys. */
const integrationWrites = async (tag: string, lines: string[]) => {
  const res = await api('PATCH', '/api/v1/open-api', descriptor(tag, lines, false));
  expect(res.status).toBeLessThan(300);
};
const customMetadata = async (tag: string): Promise<Record<string, unknown>> =>
  ((await infoOf(tag))['x-cortex-custom-metadata'] ?? {}) as Record<string, unknown>;
const changesOf = async (dir: string) => {
  const r = await run(dir, ['plan', '--output', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { changes: { action: string; kind: string; id: string }[] }).changes.filter(
    (c) => c.action !== 'noop' && c.kind !== 'inventory', // the ownership record of a new source is not the entity's
  );
};

describe('merge mode and the map holding the owner’s marker', { timeout: 180_000 }, () => {
  it('an empty map declares nothing: no change planned, and dropping it later removes nothing', async () => {
    const tag = 'shared-empty-map';
    const owner = await repo(
      'sourceId: owner\nentityWrites: merge\n',
      tag,
      descriptor(tag, ['  x-cortex-groups: [g1]']),
    );
    expect((await run(owner, ['apply', '--auto-approve'])).code).toBe(0);
    await integrationWrites(tag, ['  x-cortex-custom-metadata: {from-ui: keep}']);
    const other = await repo(
      'sourceId: other\nentityWrites: merge\n',
      tag,
      descriptor(tag, ['  x-cortex-custom-metadata: {}'], false),
    );
    expect(await changesOf(other)).toEqual([]);
    expect((await run(other, ['apply', '--auto-approve'])).code).toBe(0);
    await writeFiles(other, {
      [`.cortex/catalog/${tag}.yaml`]: descriptor(tag, ['  x-cortex-description: hi'], false),
    });
    expect((await run(other, ['apply', '--auto-approve'])).code).toBe(0);
    // `other` now declares a key of an entity it does not own: it names itself on it (ADR 0004), nothing else changes.
    expect(await customMetadata(tag)).toEqual({
      'from-ui': 'keep',
      'cortex-sync': { source: 'owner' },
      [claimKeyOf('other')]: { source: 'other' },
    });
    expect(await changesOf(owner)).toEqual([]);
  });

  it('a source switched from replace to merge removes none of its earlier keys, so the marker and others’ keys stay', async () => {
    const tag = 'switched-to-merge';
    const dir = await repo(
      'sourceId: switcher\n',
      tag,
      descriptor(tag, ['  x-cortex-groups: [g1]', '  x-cortex-custom-metadata: {tier: t1}']),
    );
    expect((await run(dir, ['apply', '--auto-approve'])).code).toBe(0);
    await integrationWrites(tag, ['  x-cortex-custom-metadata: {from-int: keep}']);
    await writeFiles(dir, {
      'cortex-sync.yaml': 'sourceId: switcher\nentityWrites: merge\n',
      [`.cortex/catalog/${tag}.yaml`]: descriptor(tag, ['  x-cortex-groups: [g1]']),
    });
    expect((await run(dir, ['apply', '--auto-approve'])).code).toBe(0);
    expect(await customMetadata(tag)).toEqual({
      tier: 't1',
      'from-int': 'keep',
      'cortex-sync': { source: 'switcher' },
    });
    expect(await changesOf(dir)).toEqual([]);
  });
});
