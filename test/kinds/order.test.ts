/**
 * The apply order is derived from what each kind references: every kind after the kinds it names,
 * ties in registry order, a kind only read or the kind itself ordering nothing, and kinds that
 * name each other in a cycle refused rather than ordered wrongly.
 */
import { describe, expect, it } from 'vitest';
import type { KindMeta } from '../../src/core/kind-contract.js';
import { applyOrder } from '../../src/kinds/order.js';
import { KIND_HANDLERS, KIND_NAMES } from '../../src/kinds/registry.js';

const kind = (name: string, refersTo: string[] = []): KindMeta => ({ kind: name, title: name, refersTo });
const names = (kinds: readonly KindMeta[]) => kinds.map((k) => k.kind);

describe('applyOrder', () => {
  it('the registry: entity types, entities, then what references them (Initiatives after scorecards); the names follow the same order', () => {
    expect(names(KIND_HANDLERS)).toEqual([
      'entity-type',
      'entity',
      'dependency',
      'catalog-page',
      'scaffolder-template',
      'scorecard',
      'initiative',
    ]);
    expect(KIND_NAMES).toEqual(names(KIND_HANDLERS));
  });

  it('puts a kind listed first after the kinds it references, and keeps the listed order otherwise', () => {
    const order = applyOrder([
      kind('initiative', ['scorecard', 'entity-type']),
      kind('entity-type'),
      kind('scorecard'),
    ]);
    expect(names(order)).toEqual(['entity-type', 'scorecard', 'initiative']);
  });

  it('a reference to itself or to a kind not in the list orders nothing', () => {
    expect(names(applyOrder([kind('entity', ['entity', 'entity-type']), kind('page')]))).toEqual(['entity', 'page']);
  });

  it('refuses two kinds of one name (a kind added under a registered name)', () => {
    expect(() => applyOrder([...KIND_HANDLERS, kind('entity')])).toThrow(/two kinds are named entity/);
  });

  it('refuses kinds that reference each other in a cycle, naming them', () => {
    expect(() => applyOrder([kind('a', ['b']), kind('b', ['c']), kind('c', ['a']), kind('d')])).toThrow(
      /cycle: a, b, c/,
    );
  });
});
