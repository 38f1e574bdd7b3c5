import { describe, expect, it } from 'vitest';
import { canonicalJson, deepEqual, diffValues } from '../../src/core/diff.js';
import type { JsonValue } from '../../src/core/model.js';

describe('deepEqual / canonicalJson', () => {
  it('ignores object key order at every level but not array order', () => {
    const a = { info: { title: 'Pay', 'x-cortex-tag': 'pay', groups: ['a', 'b'] }, openapi: '3.0.1' };
    const b = { openapi: '3.0.1', info: { groups: ['a', 'b'], 'x-cortex-tag': 'pay', title: 'Pay' } };
    expect(deepEqual(a, b)).toBe(true);
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(deepEqual({ g: ['a', 'b'] }, { g: ['b', 'a'] })).toBe(false);
  });

  it('tells null, missing, 0, "" and false apart', () => {
    expect(deepEqual({ a: null }, {})).toBe(false);
    expect(deepEqual(0, false)).toBe(false);
    expect(deepEqual('', null)).toBe(false);
    expect(deepEqual([], {})).toBe(false);
  });
});

describe('diffValues', () => {
  it('reports a changed array as one leaf under its dotted path, as in the interface example', () => {
    const before = { info: { title: 'Payments', 'x-cortex-groups': ['tier-1'] } };
    const after = { info: { 'x-cortex-groups': ['tier-0'], title: 'Payments' } };
    expect(diffValues(before, after)).toEqual([
      { path: 'info.x-cortex-groups', before: ['tier-1'], after: ['tier-0'] },
    ]);
  });

  it('lists additions, removals and changes sorted by key, recursing into objects', () => {
    const before = { b: { y: 1, x: 1 }, a: 'gone' };
    const after = { c: true, b: { x: 2, y: 1, z: { deep: 'new' } } };
    expect(diffValues(before, after)).toEqual([
      { path: 'a', before: 'gone' },
      { path: 'b.x', before: 1, after: 2 },
      { path: 'b.z.deep', after: 'new' },
      { path: 'c', after: true },
    ]);
  });

  it('lists every leaf of a new object for a create and nothing when equal', () => {
    expect(diffValues(undefined, { name: 'db', schema: { required: [] } })).toEqual([
      { path: 'name', after: 'db' },
      { path: 'schema.required', after: [] },
    ]);
    expect(diffValues({ a: { b: [1] } }, { a: { b: [1] } })).toEqual([]);
  });

  it('quotes keys that are not plain words and reports an empty object as a whole', () => {
    expect(diffValues({ meta: {} }, { meta: { 'a.b': 1 } })).toEqual([{ path: 'meta["a.b"]', after: 1 }]);
    expect(diffValues({}, { meta: {} })).toEqual([{ path: 'meta', after: {} }]);
    expect(diffValues({ x: { a: 1 } }, { x: 'flat' })).toEqual([{ path: 'x', before: { a: 1 }, after: 'flat' }]);
  });
});

describe('deepEqual with missing and undefined members', () => {
  it('treats an undefined member as absent, on either side, and still compares the rest', () => {
    // Parsed values may hold undefined members (an optional field zod left out); JSON cannot.
    const withUndefined = { a: 1, b: undefined } as unknown as JsonValue;
    expect(deepEqual(withUndefined, { a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, withUndefined)).toBe(true);
    expect(deepEqual(withUndefined, { a: 1, c: 2 })).toBe(false);
    expect(deepEqual({ a: 1, c: 2 }, withUndefined)).toBe(false);
    expect(deepEqual({ a: [1, { x: 2 }] }, { a: [1, { x: 2 }] })).toBe(true);
    expect(deepEqual({ a: [1, { x: 2 }] }, { a: [1, { x: 3 }] })).toBe(false);
    expect(diffValues(withUndefined, { a: 1 })).toEqual([]);
  });
});
