import { describe, expect, it } from 'vitest';
import type { LiveObject } from '../../../src/core/model.js';
import { type BulkEntry, packBulkChunks } from '../../../src/kinds/dependency/bulk.js';
import { dependencyId, parseDependencyId } from '../../../src/kinds/dependency/edges.js';
import { dependencyKind } from '../../../src/kinds/dependency/index.js';
import type { DependencySpec, LiveDependency } from '../../../src/kinds/dependency/schema.js';
import type { KindChange } from '../../../src/kinds/types.js';
import { parsedDoc } from '../entity-type/parsed-doc.js';
import { AT } from '../parse-context.js';

const FILE = '.cortex/dependencies/payments.yaml';
const MANIFEST = `callerTag: payments
dependencies:
  - tag: ledger
    method: POST
    path: /v1/entries
    description: writes ledger rows
    metadata: {prod: true}
  - tag: users
`;

describe('dependency parse', () => {
  it('declares one object per edge, identified by caller, callee, method and path, located at the edge', () => {
    const { objects, diagnostics } = dependencyKind.manifest.parse(parsedDoc(MANIFEST, FILE), AT);
    expect(diagnostics).toEqual([]);
    expect(objects.map((o) => o.id)).toEqual(['payments→ledger POST /v1/entries', 'payments→users']);
    expect(objects.map((o) => o.source)).toEqual([
      { file: FILE, line: 3, column: 5 },
      { file: FILE, line: 8, column: 5 },
    ]);
  });

  it('references the caller and the callee entities, as ordering edges located in the file', () => {
    const [, users] = dependencyKind.manifest.parse(parsedDoc(MANIFEST, FILE), AT).objects;
    const refs = dependencyKind.manifest.references(users!);
    expect(refs).toEqual([
      { kind: 'entity', id: 'payments', field: 'callerTag', path: ['callerTag'], ordering: true },
      { kind: 'entity', id: 'users', field: 'dependencies[1].tag', path: ['dependencies', 1, 'tag'], ordering: true },
    ]);
    expect(users!.doc.locate(refs[1]!.path)).toEqual({ line: 8, column: 5 });
  });

  it('wants method and path together, and a known method', () => {
    const doc = parsedDoc(
      'callerTag: a\ndependencies:\n  - tag: b\n    method: GET\n  - tag: c\n    path: /x\n  - tag: d\n    method: FETCH\n    path: /y\n',
      FILE,
    );
    const { objects, diagnostics } = dependencyKind.manifest.parse(doc, AT);
    expect(objects).toEqual([]);
    const fields = diagnostics.map((d) => d.field);
    expect(fields).toContain('dependencies[0].path');
    expect(fields).toContain('dependencies[1].method');
    expect(fields).toContain('dependencies[2].method');
    expect(diagnostics.find((d) => d.field === 'dependencies[0].path')?.message).toMatch(/method and path go together/);
  });

  it('round-trips ids, including paths with spaces and tags with dots and slashes', () => {
    for (const key of [
      { callerTag: 'a.b', calleeTag: 'c/d' },
      { callerTag: 'a', calleeTag: 'b', method: 'GET', path: '/x y/z' },
    ]) {
      expect(parseDependencyId(dependencyId(key))).toEqual(key);
    }
    expect(parseDependencyId('not-an-edge')).toBeUndefined();
  });
});

describe('dependency comparable state', () => {
  const [ledger, users] = dependencyKind.manifest.parse(parsedDoc(MANIFEST, FILE), AT).objects;
  const live = (state: LiveDependency): LiveObject<LiveDependency> => ({ kind: 'dependency', id: 'x', state });

  it('reads an absent description and empty metadata the same way, and metadata keys in any order', () => {
    expect(
      dependencyKind.live.canonical(
        live({ callerTag: 'payments', calleeTag: 'users', method: null, path: null, description: null, metadata: {} }),
      ),
    ).toEqual(dependencyKind.manifest.canonical(users!));
    expect(
      dependencyKind.live.canonical(
        live({
          callerTag: 'payments',
          calleeTag: 'ledger',
          method: 'post',
          path: '/v1/entries',
          description: 'writes ledger rows',
          metadata: { prod: true },
          callerType: 'service',
        }),
      ),
    ).toEqual(dependencyKind.manifest.canonical(ledger!));
  });

  it('sees a changed description', () => {
    expect(
      dependencyKind.live.canonical(live({ callerTag: 'payments', calleeTag: 'users', description: 'old' })),
    ).not.toEqual(dependencyKind.manifest.canonical(users!));
  });
});

describe('bulk request packing', () => {
  const edge = dependencyKind.manifest.parse(parsedDoc(MANIFEST, FILE), AT).objects[0]!;
  const change = (i: number): KindChange<DependencySpec, LiveDependency> => ({
    kind: 'dependency',
    id: `c${i}`,
    action: 'create',
    diff: [],
    waitsFor: [],
    desired: edge,
  });
  const entries: BulkEntry[] = Array.from({ length: 300 }, (_, i) => ({
    change: change(i),
    callerTag: `caller-${i % 7}`,
    edge: { tag: `callee-${i}`, description: 'x'.repeat(i % 50) },
  }));

  it('keeps every body within the limit, packs each body close to it, and sends every edge exactly once', () => {
    const limit = 2_000;
    const { chunks, oversized } = packBulkChunks(entries, limit);
    expect(oversized).toEqual([]);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(Buffer.byteLength(JSON.stringify(chunk.body))).toBeLessThanOrEqual(limit);
    // Each chunk but the last could not have taken the next entry.
    for (const chunk of chunks.slice(0, -1))
      expect(Buffer.byteLength(JSON.stringify(chunk.body))).toBeGreaterThan(limit - 120);
    const sent = chunks.flatMap((c) => c.entries.map((e) => e.change.id));
    expect(sent).toEqual(entries.map((e) => e.change.id));
    const inBodies = chunks.flatMap((c) =>
      Object.values(c.body.values)
        .flat()
        .map((e) => e.tag),
    );
    expect(inBodies.sort()).toEqual(entries.map((e) => e.edge.tag).sort());
  });

  it('puts everything in one body when it fits', () => {
    expect(packBulkChunks(entries, 2_000_000).chunks).toHaveLength(1);
  });

  it('sets aside an edge that cannot fit even alone', () => {
    const big: BulkEntry = { change: change(999), callerTag: 'a', edge: { tag: 'b', description: 'y'.repeat(500) } };
    const { chunks, oversized } = packBulkChunks([entries[0]!, big, entries[1]!], 300);
    expect(oversized.map((e) => e.change.id)).toEqual(['c999']);
    expect(chunks.flatMap((c) => c.entries.map((e) => e.change.id))).toEqual(['c0', 'c1']);
  });
});
