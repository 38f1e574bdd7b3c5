/**
 * Merge writes, pure (docs/adr-0004-co-ownership.md): which key paths a manifest declares, what a
 * dropped key is, the delete marker no value can equal, and the PATCH body.
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject, LiveObject } from '../../../src/core/model.js';
import { toManifestFiles } from '../../../src/kinds/entity/to-manifest.js';
import {
  chooseDeleteMarker,
  claimantsOf,
  claimKeyOf,
  declaredKeyPaths,
  droppedPaths,
  keyPathOf,
  mergePatch,
  pathsOverlap,
  segmentsOf,
} from '../../../src/kinds/entity/merge.js';

describe('declared key paths', () => {
  it('go down through maps to lists and scalars; only keys the document writes; the tag is identity', () => {
    const raw = {
      openapi: '3.0.1',
      info: {
        'x-cortex-tag': 'svc',
        'x-cortex-service-groups': ['a'],
        'x-cortex-custom-metadata': { 'a.b': 1, nested: { deep: 'x' } },
        description: null,
      },
    };
    const wire = {
      openapi: '3.0.1',
      info: {
        'x-cortex-tag': 'svc',
        'x-cortex-type': 'service',
        'x-cortex-groups': ['a'],
        'x-cortex-custom-metadata': { 'a.b': 1, nested: { deep: 'x' } },
      },
    };
    expect(declaredKeyPaths(raw, wire)).toEqual([
      'info.x-cortex-custom-metadata.a~1b',
      'info.x-cortex-custom-metadata.nested.deep',
      'info.x-cortex-groups',
    ]);
  });

  it('escape `.` and `~` inside a segment, and read back the same segments', () => {
    const segments = ['info', 'x-cortex-custom-metadata', 'a.b~c'];
    expect(segmentsOf(keyPathOf(segments))).toEqual(segments);
    expect(pathsOverlap('info.x-cortex-custom-metadata', 'info.x-cortex-custom-metadata.a')).toBe(true);
    expect(pathsOverlap('info.x-cortex-custom-metadata.a', 'info.x-cortex-custom-metadata.ab')).toBe(false);
  });

  it('drop only what nothing declared now overlaps', () => {
    const before = ['info.description', 'info.x-cortex-custom-metadata', 'info.x-cortex-groups'];
    const now = ['info.x-cortex-custom-metadata.a', 'info.x-cortex-groups'];
    expect(droppedPaths(before, now)).toEqual(['info.description']);
  });
});

describe('the delete marker', () => {
  it('is never a string of the body or of the live descriptor, however the random source collides', () => {
    const taken = 'cortex-sync-delete-aaaa';
    const draws = ['aaaa', 'aaaa', 'bbbb'];
    const marker = chooseDeleteMarker([{ info: { note: taken } }], () => draws.shift() ?? 'cccc');
    expect(marker).toBe('cortex-sync-delete-bbbb');
  });

  it('is random per request by default', () => {
    expect(chooseDeleteMarker([])).not.toBe(chooseDeleteMarker([]));
  });
});

describe('the PATCH body', () => {
  const wire = {
    openapi: '3.0.1',
    info: { 'x-cortex-tag': 'svc', title: 'Svc', 'x-cortex-custom-metadata': { keep: '__delete__' } },
  };
  const live = {
    info: {
      'x-cortex-tag': 'svc',
      title: 'Svc',
      description: 'gone soon',
      'x-cortex-oncall': { pagerduty: { id: 'P1' } },
      'x-cortex-custom-metadata': { keep: '__delete__', foreign: 1 },
    },
  };

  it('holds the declared keys and a marker at each dropped key still live; no marker when nothing is dropped', () => {
    const declared = ['info.title', 'info.x-cortex-custom-metadata.keep'];
    const plain = mergePatch({ tag: 'svc', wire, declared, dropped: ['info.x-cortex-groups'], live });
    expect(plain.deleteMarker).toBeUndefined();
    expect(plain.body).toEqual({
      openapi: '3.0.1',
      info: { 'x-cortex-tag': 'svc', title: 'Svc', 'x-cortex-custom-metadata': { keep: '__delete__' } },
    });
    const removing = mergePatch({
      tag: 'svc',
      wire,
      declared,
      dropped: ['info.description'],
      live,
      random: () => 'r1',
    });
    expect(removing.deleteMarker).toBe('cortex-sync-delete-r1');
    expect(removing.body.info).toMatchObject({ description: 'cortex-sync-delete-r1' });
    expect(JSON.stringify(removing.body)).not.toContain('oncall');
    expect(JSON.stringify(removing.body)).not.toContain('foreign');
  });

  it('writes the ownership marker only when asked (a create)', () => {
    const created = mergePatch({
      tag: 'svc',
      wire,
      declared: ['info.title'],
      dropped: [],
      live: {},
      ownership: { source: 's' },
    });
    expect(created.body.info).toMatchObject({ 'x-cortex-custom-metadata': { 'cortex-sync': { source: 's' } } });
  });
});

describe('hostile key paths', () => {
  it('a recorded path through `__proto__` is an own key of the body, never a prototype', () => {
    const live = JSON.parse('{"info":{"x-cortex-tag":"svc","__proto__":{"x":1}}}') as Record<string, never>;
    const patch = mergePatch({
      tag: 'svc',
      wire: { info: {} },
      declared: [],
      dropped: ['info.__proto__.x'],
      live,
      random: () => 'm',
    });
    const info = patch.body.info as Record<string, unknown>;
    expect(Object.hasOwn(info, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(info)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('claims: sources that write keys into an entity they do not own', () => {
  const metadata: JsonObject = {
    'cortex-sync': { source: 'owner' },
    [claimKeyOf('platform')]: { source: 'platform' },
    [claimKeyOf('wrapped')]: { value: { source: 'wrapped' } },
    // Written by hand under another source's key: ignored.
    [claimKeyOf('a')]: { source: 'b' },
    tier: 1,
  };
  const descriptor: JsonObject = {
    openapi: '3.0.1',
    info: { 'x-cortex-tag': 'svc', title: 'S', 'x-cortex-custom-metadata': metadata },
  };

  it('are read back from the entity, each only under its own source’s key', () => {
    expect(claimantsOf(descriptor)).toEqual(['platform', 'wrapped']);
    expect(claimantsOf(null)).toEqual([]);
  });

  it('are never declared keys, never dropped, and never exported', () => {
    const path = `info.x-cortex-custom-metadata.${claimKeyOf('platform')}`;
    expect(declaredKeyPaths(descriptor, descriptor)).not.toContain(path);
    expect(droppedPaths([path], [])).toEqual([]);
    const live = { kind: 'entity', id: 'svc', state: { descriptor } } as LiveObject<never>;
    const [file] = toManifestFiles([live]);
    const text = JSON.stringify(file?.document);
    expect(text).toContain('"tier":1');
    expect(text).not.toContain('cortex-sync-merge-');
  });
});
