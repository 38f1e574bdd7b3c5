/**
 * A load that trusts the changes its caller noted (the watcher's file events) reads only those
 * paths, and returns what a load that walks the root returns, whatever was edited: a property over
 * random file operations (fast-check, a fixed seed), each noted as a watcher reports it. What the
 * events did not name waits for a load that walks, and is never a removal.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KIND_HANDLERS } from '../../src/kinds/registry.js';
import { type LoadResult, loadManifests } from '../../src/source/load.js';
import { ManifestCache } from '../../src/source/manifest-cache.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cortex-noted-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const put = async (rel: string, text: string): Promise<void> => {
  await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
  await writeFile(path.join(root, rel), text);
};

const descriptor = (tag: string, title = tag): string =>
  ['openapi: 3.0.1', 'info:', `  title: ${title}`, `  x-cortex-tag: ${tag}`, ''].join('\n');

const titleOf = (result: LoadResult, id: string): unknown =>
  (result.objects.find((o) => o.id === id)?.spec as { info?: { title?: unknown } } | undefined)?.info?.title;

/** What a caller sees of a load (without the documents' `locate` functions). */
const visible = (result: LoadResult): unknown => JSON.parse(JSON.stringify(result));

const noted = (cache: ManifestCache) => loadManifests(root, KIND_HANDLERS, { cache, onlyNotedChanges: true });

describe('a load that trusts the noted changes', () => {
  it('reads the noted file and no other, without walking the root', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    await put('.cortex/catalog/b.yaml', descriptor('b'));
    const cache = new ManifestCache({ settleMs: 0 });
    await loadManifests(root, KIND_HANDLERS, { cache });
    expect(cache.lastLoadWalked).toBe(true);

    await put('.cortex/catalog/a.yaml', descriptor('a', 'A, renamed'));
    cache.noteChanges(['.cortex/catalog/a.yaml']);
    const result = await noted(cache);
    expect(cache.lastLoadWalked).toBe(false);
    expect(cache.lastLoad).toEqual({ reused: 1, loaded: 1, dropped: 0 });
    expect(titleOf(result, 'a')).toBe('A, renamed');
    expect(visible(result)).toEqual(visible(await loadManifests(root, KIND_HANDLERS)));
  });

  it('a change no event named waits for a load that walks, and a file removed unnoticed is never a removal', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    await put('.cortex/catalog/b.yaml', descriptor('b'));
    const cache = new ManifestCache({ settleMs: 0 });
    await loadManifests(root, KIND_HANDLERS, { cache });

    await put('.cortex/catalog/a.yaml', descriptor('a', 'A, renamed'));
    await unlink(path.join(root, '.cortex/catalog/b.yaml'));
    const trusting = await noted(cache);
    expect(titleOf(trusting, 'a')).toBe('a');
    expect(trusting.objects.map((o) => o.id)).toEqual(['a', 'b']);

    const walking = await loadManifests(root, KIND_HANDLERS, { cache });
    expect(cache.lastLoadWalked).toBe(true);
    expect(titleOf(walking, 'a')).toBe('A, renamed');
    expect(walking.objects.map((o) => o.id)).toEqual(['a']);
  });

  it('walks when `.` is noted, when a folder is noted, and when nothing was listed yet', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    const cache = new ManifestCache({ settleMs: 0 });
    await noted(cache);
    expect(cache.lastLoadWalked).toBe(true);

    await put('services/new/cortex.yaml', descriptor('new'));
    cache.noteChanges(['services']);
    expect((await noted(cache)).objects.map((o) => o.id)).toEqual(['a', 'new']);
    expect(cache.lastLoadWalked).toBe(true);

    await noted(cache);
    expect(cache.lastLoadWalked).toBe(false);
    cache.noteChanges(['.']);
    await noted(cache);
    expect(cache.lastLoadWalked).toBe(true);
  });

  it('walks again after a change noted while a load ran (it may not have been read)', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    const cache = new ManifestCache({ settleMs: 0 });
    await loadManifests(root, KIND_HANDLERS, { cache });
    const running = noted(cache);
    cache.noteChanges(['.cortex/catalog/a.yaml']);
    await running;
    await put('.cortex/catalog/a.yaml', descriptor('a', 'A, renamed'));
    expect(titleOf(await noted(cache), 'a')).toBe('A, renamed');
    expect(cache.lastLoadWalked).toBe(true);
  });

  it('keeps no listing when a file was found through a symlink: its target may change with no event for its path', async () => {
    await put('shared/real.yaml', descriptor('linked'));
    await mkdir(path.join(root, 'svc'), { recursive: true });
    await symlink(path.join(root, 'shared/real.yaml'), path.join(root, 'svc/cortex.yaml'));
    const cache = new ManifestCache({ settleMs: 0 });
    await loadManifests(root, KIND_HANDLERS, { cache });

    await put('shared/real.yaml', descriptor('linked', 'Changed through the link'));
    cache.noteChanges(['shared/real.yaml']);
    const result = await noted(cache);
    expect(cache.lastLoadWalked).toBe(true);
    expect(titleOf(result, 'linked')).toBe('Changed through the link');
  });

  it('walks when a noted path is a symlink, or leads through one', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    await put('outside-but-inside/b.yaml', descriptor('b'));
    const cache = new ManifestCache({ settleMs: 0 });
    await loadManifests(root, KIND_HANDLERS, { cache });

    await symlink(path.join(root, 'outside-but-inside/b.yaml'), path.join(root, '.cortex/catalog/b.yaml'));
    cache.noteChanges(['.cortex/catalog/b.yaml']);
    expect(visible(await noted(cache))).toEqual(visible(await loadManifests(root, KIND_HANDLERS)));
    expect(cache.lastLoadWalked).toBe(true);
  });

  it('refuses noted paths that are not plain relative paths (walks instead)', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    const cache = new ManifestCache({ settleMs: 0 });
    await loadManifests(root, KIND_HANDLERS, { cache });
    for (const odd of ['../x/cortex.yaml', '/etc/cortex.yaml', '.cortex//catalog/a.yaml', './cortex.yaml']) {
      cache.noteChanges([odd]);
      await noted(cache);
      expect(cache.lastLoadWalked, odd).toBe(true);
      await noted(cache);
      expect(cache.lastLoadWalked, odd).toBe(false);
    }
  });

  it('walks for a manifest turned into a FIFO, a folder of listed files removed, a path with a trailing slash', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    await put('services/x/cortex.yaml', descriptor('x'));
    const cache = new ManifestCache({ settleMs: 0 });
    await loadManifests(root, KIND_HANDLERS, { cache });

    await unlink(path.join(root, '.cortex/catalog/a.yaml'));
    execFileSync('mkfifo', [path.join(root, '.cortex/catalog/a.yaml')]);
    cache.noteChanges(['.cortex/catalog/a.yaml']);
    const fifo = await noted(cache);
    expect(cache.lastLoadWalked).toBe(true);
    expect(fifo.diagnostics.map((d) => d.code)).toContain('unreadable-manifest');
    await unlink(path.join(root, '.cortex/catalog/a.yaml'));
    cache.noteChanges(['.cortex/catalog/a.yaml']);
    await loadManifests(root, KIND_HANDLERS, { cache });

    await rm(path.join(root, 'services'), { recursive: true });
    cache.noteChanges(['services']);
    expect((await noted(cache)).objects).toEqual([]);
    expect(cache.lastLoadWalked).toBe(true);

    await put('.cortex/catalog/b.yaml', descriptor('b'));
    cache.noteChanges(['.cortex/catalog/']);
    expect((await noted(cache)).objects.map((o) => o.id)).toEqual(['b']);
    expect(cache.lastLoadWalked).toBe(true);
  });

  it('walks when a folder of listed files is replaced by a file of the same name', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    await put('services/x/cortex.yaml', descriptor('x'));
    const cache = new ManifestCache({ settleMs: 0 });
    await loadManifests(root, KIND_HANDLERS, { cache });

    await rm(path.join(root, 'services/x'), { recursive: true });
    await put('services/x', 'a file now');
    cache.noteChanges(['services/x']);
    const result = await noted(cache);
    expect(result.objects.map((o) => o.id)).toEqual(['a']);
    expect(visible(result)).toEqual(visible(await loadManifests(root, KIND_HANDLERS)));
    expect(cache.lastLoadWalked).toBe(true);
  });

  it('a manifest replaced by a symlink to a secret outside the root: walks, never reads it, never a removal', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'cortex-secret-'));
    try {
      await writeFile(path.join(outside, 'secret.txt'), 'TOP-SECRET-VALUE: 1\n');
      await put('.cortex/catalog/a.yaml', descriptor('a'));
      await put('.cortex/catalog/b.yaml', descriptor('b'));
      const cache = new ManifestCache({ settleMs: 0 });
      await loadManifests(root, KIND_HANDLERS, { cache });

      await unlink(path.join(root, '.cortex/catalog/b.yaml'));
      await symlink(path.join(outside, 'secret.txt'), path.join(root, '.cortex/catalog/b.yaml'));
      cache.noteChanges(['.cortex/catalog/b.yaml']);
      const result = await noted(cache);
      expect(cache.lastLoadWalked).toBe(true);
      expect(JSON.stringify(result)).not.toContain('TOP-SECRET');
      expect(result.diagnostics.find((d) => d.file === '.cortex/catalog/b.yaml')).toMatchObject({
        severity: 'error',
        code: 'unreadable-manifest',
      });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("says a new stray YAML file out loud, and forgets it when it goes (its warning is the walk's)", async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    const cache = new ManifestCache({ settleMs: 0 });
    await loadManifests(root, KIND_HANDLERS, { cache });
    await put('.cortex/scaffolder/x.yaml', descriptor('x'));
    cache.noteChanges(['.cortex/scaffolder/x.yaml']);
    const withStray = await noted(cache);
    expect(withStray.diagnostics.map((d) => d.file)).toContain('.cortex/scaffolder/x.yaml');
    await unlink(path.join(root, '.cortex/scaffolder/x.yaml'));
    cache.noteChanges(['.cortex/scaffolder/x.yaml']);
    expect((await noted(cache)).diagnostics).toEqual([]);
  });
});

/** One file operation and the paths a watcher reports for it. */
type Operation =
  | { op: 'edit'; file: number; title: string }
  | { op: 'add'; file: number }
  | { op: 'remove'; file: number }
  | { op: 'break'; file: number }
  | { op: 'folder'; file: number }
  | { op: 'stray'; file: number }
  | { op: 'duplicate'; file: number; of: number }
  | { op: 'readme'; text: string };

const FILES = 6;
const fileOf = (i: number): string => `.cortex/catalog/s${i}.yaml`;

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constant('edit' as const), file: fc.nat(FILES - 1), title: fc.string({ maxLength: 12 }) }),
  fc.record({ op: fc.constant('add' as const), file: fc.nat(FILES - 1) }),
  fc.record({ op: fc.constant('remove' as const), file: fc.nat(FILES - 1) }),
  fc.record({ op: fc.constant('break' as const), file: fc.nat(FILES - 1) }),
  fc.record({ op: fc.constant('folder' as const), file: fc.nat(FILES - 1) }),
  fc.record({ op: fc.constant('stray' as const), file: fc.nat(FILES - 1) }),
  fc.record({ op: fc.constant('duplicate' as const), file: fc.nat(FILES - 1), of: fc.nat(FILES - 1) }),
  fc.record({ op: fc.constant('readme' as const), text: fc.string({ maxLength: 8 }) }),
);

/** Performs `o` under `root`; returns the paths a file watcher reports for it. */
const perform = async (o: Operation): Promise<string[]> => {
  const remove = (rel: string) => rm(path.join(root, rel), { recursive: true, force: true });
  switch (o.op) {
    case 'edit':
      await put(fileOf(o.file), descriptor(`s${o.file}`, JSON.stringify(o.title)));
      return [fileOf(o.file)];
    case 'add':
      await put(fileOf(o.file), descriptor(`s${o.file}`));
      return [fileOf(o.file)];
    case 'remove':
      await remove(fileOf(o.file));
      return [fileOf(o.file)];
    case 'break':
      await put(fileOf(o.file), 'openapi: 3.0.1\ninfo: [not, a, mapping\n');
      return [fileOf(o.file)];
    case 'folder':
      await put(`services/f${o.file}/cortex.yaml`, descriptor(`f${o.file}`));
      return [`services/f${o.file}`, `services/f${o.file}/cortex.yaml`];
    case 'stray':
      await put(`.cortex/catalogue/x${o.file}.yaml`, descriptor(`x${o.file}`));
      return [`.cortex/catalogue/x${o.file}.yaml`];
    case 'duplicate':
      await put(fileOf(o.file), descriptor(`s${o.of}`, 'a second declaration'));
      return [fileOf(o.file)];
    case 'readme':
      await put('README.md', o.text);
      return ['README.md'];
  }
};

describe('noted-changes load, property', () => {
  it('equals a walking load after every random sequence of noted file operations', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 8 }), async (operations) => {
        await rm(root, { recursive: true, force: true });
        await mkdir(root, { recursive: true });
        for (let i = 0; i < FILES; i += 2) await put(fileOf(i), descriptor(`s${i}`));
        const cache = new ManifestCache({ settleMs: 0 });
        await loadManifests(root, KIND_HANDLERS, { cache });
        for (const o of operations) {
          cache.noteChanges(await perform(o));
          const trusting = await noted(cache);
          expect(visible(trusting), JSON.stringify(o)).toEqual(visible(await loadManifests(root, KIND_HANDLERS)));
        }
      }),
      { numRuns: 60, seed: 20_261_125, endOnFailure: true },
    );
  });
});
