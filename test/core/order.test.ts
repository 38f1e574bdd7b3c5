import { describe, expect, it } from 'vitest';
import type { Action, Change, KindName } from '../../src/core/model.js';
import { changePhase, orderChanges } from '../../src/core/order.js';
import { KIND_NAMES } from '../../src/kinds/registry.js';

const change = (kind: KindName, id: string, action: Action): Change => ({ kind, id, action, diff: [], waitsFor: [] });
const keys = (cs: readonly Change[]): string[] => cs.map((c) => `${c.action} ${c.kind}/${c.id}`);

describe('orderChanges', () => {
  it('creates what is referenced first and keeps only edges to real changes in waitsFor', () => {
    const { changes, cyclic } = orderChanges(
      [
        change('entity', 'payments', 'create'),
        change('entity', 'billing', 'noop'),
        change('entity', 'team-a', 'create'),
        change('entity-type', 'database', 'update'),
      ],
      [
        { from: 'entity/payments', to: 'entity/team-a' },
        { from: 'entity/payments', to: 'entity/billing' },
        { from: 'entity/payments', to: 'entity-type/database' },
        { from: 'entity/payments', to: 'entity/not-in-plan' },
      ],
      KIND_NAMES,
    );
    expect(cyclic).toEqual([]);
    expect(keys(changes)).toEqual([
      'update entity-type/database',
      'noop entity/billing',
      'create entity/team-a',
      'create entity/payments',
    ]);
    expect(changes.find((c) => c.id === 'payments')?.waitsFor).toEqual(['entity-type/database', 'entity/team-a']);
  });

  it('puts deletes after every create/update, in reverse kind order, a deleted object after what references it', () => {
    const { changes } = orderChanges(
      [
        change('entity-type', 'legacy', 'delete'),
        change('entity', 'old', 'archive'),
        change('scaffolder-template', 'tpl', 'delete'),
        change('dependency', 'a->b', 'delete'),
        change('entity', 'zeta', 'create'),
        change('initiative', 'q3', 'update'),
      ],
      [{ from: 'entity/old', to: 'entity-type/legacy' }],
      KIND_NAMES,
    );
    expect(keys(changes)).toEqual([
      'create entity/zeta',
      'update initiative/q3',
      'delete scaffolder-template/tpl',
      'delete dependency/a->b',
      'archive entity/old',
      'delete entity-type/legacy',
    ]);
    expect(changes.find((c) => c.id === 'legacy')?.waitsFor).toEqual(['entity/old']);
    expect(changePhase({ kind: 'entity', action: 'create' }, KIND_NAMES)).toBeLessThan(
      changePhase({ kind: 'scaffolder-template', action: 'delete' }, KIND_NAMES),
    );
  });

  it('reports a cycle instead of dropping changes', () => {
    const { changes, cyclic } = orderChanges(
      [change('entity', 'a', 'create'), change('entity', 'b', 'create'), change('entity', 'c', 'create')],
      [
        { from: 'entity/a', to: 'entity/b' },
        { from: 'entity/b', to: 'entity/a' },
      ],
      KIND_NAMES,
    );
    expect(keys(changes)).toEqual(['create entity/c', 'create entity/a', 'create entity/b']);
    expect(cyclic).toEqual(['entity/a', 'entity/b']);
  });
});
