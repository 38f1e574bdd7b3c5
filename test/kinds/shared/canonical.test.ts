/**
 * The building blocks of canonical forms: sets sorted the same way on every machine, the first of
 * a repeated key kept, absent, null and empty read as one, and a kind's choice of `null` or left out.
 */
import { describe, expect, it } from 'vitest';
import {
  entityFilterSets,
  entry,
  includeExcludeSets,
  sortedSet,
  textOrNull,
  uniqueSortedBy,
} from '../../../src/kinds/shared/canonical.js';

describe('canonical-form building blocks', () => {
  it('sort sets in code-unit order, whatever the locale, each name once', () => {
    expect(sortedSet(['é', 'e', 'Z', 'a', '_', 'a'])).toEqual(['Z', '_', 'a', 'e', 'é']);
    expect(sortedSet(null)).toEqual([]);
  });

  it('keep the first item of a repeated key, sorted by key (numbers as numbers)', () => {
    const levels = [
      { rank: 10, name: 'ten' },
      { rank: 2, name: 'two' },
      { rank: 10, name: 'ten again' },
    ];
    expect(uniqueSortedBy(levels, (l) => l.rank).map((l) => l.name)).toEqual(['two', 'ten']);
    expect(uniqueSortedBy([{ e: 'b' }, { e: 'B' }], (r) => r.e)).toEqual([{ e: 'B' }, { e: 'b' }]);
  });

  it('read absent, null and empty text as null, and leave null parts out of an entry', () => {
    expect([textOrNull(undefined), textOrNull(null), textOrNull(''), textOrNull('x')]).toEqual([null, null, null, 'x']);
    expect({ ...entry('a', null), ...entry('b', undefined), ...entry('c', ''), ...entry('d', 0) }).toEqual({
      c: '',
      d: 0,
    });
  });

  it('write an empty filter as the kind chooses: null, or left out', () => {
    const empty = { types: { include: [] }, groups: null, query: '' };
    expect(entityFilterSets(empty, { empty: null })).toBeNull();
    expect(entityFilterSets(empty, { empty: undefined })).toBeUndefined();
    expect(includeExcludeSets({ include: [], exclude: null }, { empty: null })).toBeNull();
    expect(
      JSON.stringify(entityFilterSets({ query: 'q', groups: { exclude: ['b', 'a'] }, types: {} }, { empty: null })),
    ).toBe('{"groups":{"exclude":["a","b"]},"query":"q"}');
  });
});
