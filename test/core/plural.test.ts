import { describe, expect, it } from 'vitest';
import { countOf, pluralOf } from '../../src/core/plural.js';

describe('counts with their noun', () => {
  it('0 and 2 take the plural, 1 the singular', () => {
    expect([0, 1, 2].map((n) => countOf(n, 'object'))).toEqual(['0 objects', '1 object', '2 objects']);
    expect([0, 1, 2].map((n) => countOf(n, 'entity'))).toEqual(['0 entities', '1 entity', '2 entities']);
  });

  it('the plural of every noun a message counts', () => {
    expect(
      ['entity', 'entity type', 'dependency', 'catalog page', 'Initiative', 'Scaffolder template', 'write request'].map(
        pluralOf,
      ),
    ).toEqual([
      'entities',
      'entity types',
      'dependencies',
      'catalog pages',
      'Initiatives',
      'Scaffolder templates',
      'write requests',
    ]);
    expect(pluralOf('day')).toBe('days');
    expect(countOf(3, 'archived entity', 'archived entities')).toBe('3 archived entities');
  });
});
