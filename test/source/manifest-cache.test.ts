import { chmod, cp, mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KIND_HANDLERS } from '../../src/kinds/registry.js';
import { type LoadResult, loadManifests } from '../../src/source/load.js';
import { ManifestCache } from '../../src/source/manifest-cache.js';

const EXAMPLES = path.join(import.meta.dirname, '..', '..', 'examples');

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cortex-cache-'));
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

const titleOf = (result: LoadResult, id: string): unknown => {
  const spec = result.objects.find((o) => o.id === id)?.spec as { info?: { title?: unknown } } | undefined;
  return spec?.info?.title;
};

/** What a caller sees of a load, without the documents' `locate` functions (new ones every parse). */
const visible = (result: LoadResult): unknown => JSON.parse(JSON.stringify(result));

/** A cache that trusts a file at once (these tests write and load within milliseconds). */
const immediateCache = (): ManifestCache => new ManifestCache({ settleMs: 0 });

describe('loadManifests with a ManifestCache', () => {
  it('reuses the result of an unchanged file without reading it again', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    await put('.cortex/catalog/b.yaml', descriptor('b'));
    const cache = immediateCache();

    const first = await loadManifests(root, KIND_HANDLERS, { cache });
    expect(first.diagnostics).toEqual([]);
    expect(cache.lastLoad).toEqual({ reused: 0, loaded: 2, dropped: 0 });

    const second = await loadManifests(root, KIND_HANDLERS, { cache });
    expect(cache.lastLoad).toEqual({ reused: 2, loaded: 0, dropped: 0 });
    expect(second.objects).toHaveLength(2);
    second.objects.forEach((object, i) => expect(object).toBe(first.objects[i]));
  });

  it('reflects a changed, a removed and an added file', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    await put('.cortex/catalog/b.yaml', descriptor('b'));
    const cache = immediateCache();
    await loadManifests(root, KIND_HANDLERS, { cache });

    await put('.cortex/catalog/a.yaml', descriptor('a', 'Service A, renamed'));
    await unlink(path.join(root, '.cortex/catalog/b.yaml'));
    await put('.cortex/catalog/c.yaml', descriptor('c'));
    const next = await loadManifests(root, KIND_HANDLERS, { cache });

    expect(next.diagnostics).toEqual([]);
    expect(next.objects.map((o) => o.id)).toEqual(['a', 'c']);
    expect(titleOf(next, 'a')).toBe('Service A, renamed');
    expect(cache.lastLoad).toEqual({ reused: 0, loaded: 2, dropped: 1 });
    expect(cache.size).toBe(2);
  });

  it('reads again a file rewritten with the same size right after it was read (not yet settled)', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a', 'Title one'));
    const cache = new ManifestCache();
    await loadManifests(root, KIND_HANDLERS, { cache });
    expect(cache.size).toBe(0);

    // Same size, possibly the same timestamp tick: only the settle guard tells it apart.
    await put('.cortex/catalog/a.yaml', descriptor('a', 'Title two'));
    const next = await loadManifests(root, KIND_HANDLERS, { cache });
    expect(titleOf(next, 'a')).toBe('Title two');
  });

  it('keeps a file once it has been still for the settle time', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    let wall = Date.now();
    const cache = new ManifestCache({ settleMs: 2000, now: () => wall });
    await loadManifests(root, KIND_HANDLERS, { cache });
    expect(cache.size).toBe(0);
    wall += 2500;
    await loadManifests(root, KIND_HANDLERS, { cache });
    expect(cache.size).toBe(1);
    await loadManifests(root, KIND_HANDLERS, { cache });
    expect(cache.lastLoad).toEqual({ reused: 1, loaded: 0, dropped: 0 });
  });

  it.skipIf(process.getuid?.() === 0)('reports a file that became unreadable, exactly as without a cache', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    await put('.cortex/catalog/b.yaml', descriptor('b'));
    const cache = immediateCache();
    await loadManifests(root, KIND_HANDLERS, { cache });

    const file = path.join(root, '.cortex/catalog/a.yaml');
    await chmod(file, 0o000);
    try {
      const cached = await loadManifests(root, KIND_HANDLERS, { cache });
      const uncached = await loadManifests(root, KIND_HANDLERS);
      expect(cached.diagnostics).toEqual(uncached.diagnostics);
      expect(cached.diagnostics).toEqual([
        expect.objectContaining({ severity: 'error', code: 'read-failed', file: '.cortex/catalog/a.yaml' }),
      ]);
      expect(cached.objects.map((o) => o.id)).toEqual(['b']);
    } finally {
      await chmod(file, 0o644);
    }
  });

  it('reports a kept file replaced by something that cannot be read (a directory), as without a cache', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    await put('.cortex/catalog/b.yaml', descriptor('b'));
    const cache = immediateCache();
    await loadManifests(root, KIND_HANDLERS, { cache });

    await unlink(path.join(root, '.cortex/catalog/a.yaml'));
    await mkdir(path.join(root, '.cortex/catalog/a.yaml'));
    const cached = await loadManifests(root, KIND_HANDLERS, { cache });
    const uncached = await loadManifests(root, KIND_HANDLERS);
    expect(cached.diagnostics).toEqual(uncached.diagnostics);
    expect(cached.diagnostics).toContainEqual(
      expect.objectContaining({ severity: 'error', file: '.cortex/catalog/a.yaml' }),
    );
    expect(cached.objects.map((o) => o.id)).toEqual(['b']);
  });

  it('keeps an invalid file invalid, with the same diagnostics', async () => {
    await put('.cortex/catalog/a.yaml', 'openapi: 3.0.1\ninfo:\n  title: [unclosed\n');
    const cache = immediateCache();
    const first = await loadManifests(root, KIND_HANDLERS, { cache });
    const second = await loadManifests(root, KIND_HANDLERS, { cache });
    expect(first.diagnostics.length).toBeGreaterThan(0);
    expect(second.diagnostics).toEqual(first.diagnostics);
    expect(cache.lastLoad.reused).toBe(1);
  });

  it('re-judges a result that depends on the date on every load (an Initiative past its target date)', async () => {
    await cp(path.join(EXAMPLES, '.cortex', 'initiatives'), path.join(root, '.cortex', 'initiatives'), {
      recursive: true,
    });
    const cache = immediateCache();
    const today = await loadManifests(root, KIND_HANDLERS, { cache, now: Date.parse('2026-01-01T00:00:00Z') });
    expect(today.diagnostics).toEqual([]);
    expect(today.objects).toHaveLength(1);
    expect(cache.size).toBe(0);

    const later = await loadManifests(root, KIND_HANDLERS, { cache, now: Date.parse('2999-01-01T00:00:00Z') });
    // A passed target date is judged again (a warning at load; an error only for an Initiative the
    // plan writes), never taken from the cache of an earlier day.
    expect(later.objects).toHaveLength(1);
    expect(later.diagnostics).toEqual([expect.objectContaining({ severity: 'warning', field: 'targetDate' })]);
  });

  it('freezes what it keeps, so a later run cannot see a mutation', async () => {
    await put('.cortex/catalog/a.yaml', descriptor('a'));
    const cache = immediateCache();
    const { objects } = await loadManifests(root, KIND_HANDLERS, { cache });
    const object = objects[0];
    if (!object) throw new Error('nothing loaded');
    expect(Object.isFrozen(object)).toBe(true);
    expect(Object.isFrozen(object.spec)).toBe(true);
    expect(Object.isFrozen(object.doc.value)).toBe(true);
    expect(Reflect.set(object.spec as object, 'info', {})).toBe(false);
  });

  it('loads examples/ exactly as without a cache, first and again', async () => {
    const cache = immediateCache();
    const uncached = visible(await loadManifests(EXAMPLES, KIND_HANDLERS));
    expect(visible(await loadManifests(EXAMPLES, KIND_HANDLERS, { cache }))).toEqual(uncached);
    const again = await loadManifests(EXAMPLES, KIND_HANDLERS, { cache });
    expect(visible(again)).toEqual(uncached);
    // Every file but the Initiative (judged against the date) came from the cache.
    expect(cache.lastLoad).toEqual({ reused: again.files.length - 1, loaded: 1, dropped: 0 });
  });
});
