import { describe, expect, it } from 'vitest';
import { checkReferences, suggest } from '../../src/core/references.js';
import type { ReadOnlyKindModel } from '../../src/core/kind-contract.js';
import { allHandlers, desired, live, ref } from './fakes.js';

const handlers = allHandlers();
/** A kind only read (a test's: which kinds the registry reads only changes as kinds become managed). */
const ONLY_READ: ReadOnlyKindModel = { kind: 'badge', title: 'badge', managed: false };

describe('checkReferences', () => {
  it('accepts references to desired objects and built-in entity types', () => {
    const diags = checkReferences({
      desired: [
        desired('entity', 'payments', {
          state: {},
          refs: [ref('entity-type', 'service', 'type'), ref('entity', 'team-a', 'owners.0.name', { type: 'team' })],
        }),
        desired('entity', 'team-a', { state: {}, type: 'team' }),
      ],
      handlers,
    });
    expect(diags).toEqual([]);
  });

  it('when planning, reports a target neither in the repository nor live as an error at the reference, suggesting a close name', () => {
    const diags = checkReferences({
      live: [live('entity', 'shipping-live', {})],
      desired: [
        desired(
          'entity',
          'checkout',
          { state: {}, refs: [ref('entity', 'paymnts', 'x-cortex-parents.0.tag')] },
          {
            file: 'svc/cortex.yaml',
            positions: { 'x-cortex-parents.0.tag': [12, 11] },
          },
        ),
        desired('entity', 'payments', { state: {} }),
        desired('entity', 'shipping', { state: {} }),
      ],
      handlers,
    });
    expect(diags).toEqual([
      {
        severity: 'error',
        code: 'unknown-reference',
        message: 'unknown entity `paymnts` (did you mean `payments`?)',
        file: 'svc/cortex.yaml',
        line: 12,
        column: 11,
        field: 'x-cortex-parents.0.tag',
        kind: 'entity',
        id: 'checkout',
      },
    ]);
  });

  it('offers no suggestion when nothing is close', () => {
    const [d] = checkReferences({
      live: [],
      desired: [
        desired('entity', 'a', { state: {}, refs: [ref('entity-type', 'zzzzzz', 'type')] }),
        desired('entity-type', 'database', { state: {} }),
      ],
      handlers,
    });
    expect(d?.message).toBe('unknown entity type `zzzzzz`');
  });

  it('counts live objects as targets only when planning', () => {
    const input = {
      desired: [desired('entity', 'a', { state: {}, refs: [ref('entity', 'legacy', 'parent')] })],
      handlers,
    };
    expect(checkReferences({ ...input, live: [] }).map((d) => [d.severity, d.code])).toEqual([
      ['error', 'unknown-reference'],
    ]);
    expect(checkReferences({ ...input, live: [live('entity', 'legacy', {})] })).toEqual([]);
  });

  it('offline, a target outside the repository is a located warning that says plan checks it', () => {
    const diags = checkReferences({
      desired: [
        desired(
          'entity',
          'checkout',
          {
            state: {},
            refs: [
              ref('entity', 'threatintel-rd', 'x-cortex-parents.0.tag'),
              ref('entity', 'platform', 'x-cortex-owners.0.name', { type: 'team' }),
              ref('entity-type', 'library', 'x-cortex-type'),
              ref('entity', 'paymnts', 'x-cortex-dependency.0.tag', { ordering: false }),
            ],
          },
          { file: 'svc/cortex.yaml', positions: { 'x-cortex-parents.0.tag': [9, 9] } },
        ),
        desired('entity', 'payments', { state: {} }),
      ],
      handlers,
    });
    expect(diags.map((d) => [d.severity, d.message])).toEqual([
      ['warning', 'entity `threatintel-rd` is not in this repository; `plan` checks it against the workspace'],
      ['warning', 'team entity `platform` is not in this repository; `plan` checks it against the workspace'],
      ['warning', 'entity type `library` is not in this repository; `plan` checks it against the workspace'],
      [
        'warning',
        'entity `paymnts` is not in this repository (did you mean `payments`?); `plan` checks it against the workspace',
      ],
    ]);
    expect(diags[0]).toMatchObject({ file: 'svc/cortex.yaml', line: 9, column: 9, field: 'x-cortex-parents.0.tag' });
  });

  it('offline, a wrong entity type inside the repository and a cycle stay errors', () => {
    const diags = checkReferences({
      desired: [
        desired('entity', 'payments', {
          state: {},
          refs: [ref('entity', 'billing', 'info.x-cortex-owners.0.name', { type: 'team' })],
        }),
        desired('entity', 'billing', { state: {}, type: 'service', refs: [ref('entity', 'billing', 'parent')] }),
      ],
      handlers,
    });
    expect(diags.map((d) => [d.severity, d.code])).toEqual([
      ['error', 'wrong-entity-type'],
      ['error', 'reference-cycle'],
    ]);
  });

  it('requires owners of provider CORTEX to be team entities', () => {
    const diags = checkReferences({
      desired: [
        desired('entity', 'payments', {
          state: {},
          refs: [ref('entity', 'billing', 'info.x-cortex-owners.0.name', { type: 'team' })],
        }),
      ],
      live: [live('entity', 'billing', {}, { type: 'service' })],
      handlers,
    });
    expect(diags).toEqual([
      expect.objectContaining({
        code: 'wrong-entity-type',
        message: '`billing` is a `service` entity, but info.x-cortex-owners.0.name must name a `team` entity',
      }),
    ]);
  });

  it('checks references to a kind only read only when its objects are known', () => {
    const d = [desired('initiative', 'q3', { state: {}, refs: [ref('badge', 'prod-readyness', 'badgeTag')] })];
    const withBadges = [...handlers, ONLY_READ];
    expect(checkReferences({ desired: d, handlers: withBadges })).toEqual([]);
    const badges = [live('badge', 'prod-readiness', {}), live('badge', 'dora', {})];
    expect(checkReferences({ desired: d, handlers: withBadges, live: badges })[0]?.message).toBe(
      'unknown badge `prod-readyness` (did you mean `prod-readiness`?)',
    );
    const unreadable = new Set(['badge']);
    expect(checkReferences({ desired: d, handlers: withBadges, live: [], unreadable })).toEqual([]);
  });

  it('does not judge references to a managed kind whose objects this key could not read', () => {
    const d = [desired('initiative', 'q3', { state: {}, refs: [ref('catalog-page', 'hidden', 'page')] })];
    // Read: an unknown target is an error.
    expect(checkReferences({ desired: d, handlers, live: [] })).toEqual([
      expect.objectContaining({ code: 'unknown-reference', severity: 'error' }),
    ]);
    // The kind's read said this key may not read its objects: nothing is judged (a warning said why).
    expect(checkReferences({ desired: d, handlers, live: [], unreadable: new Set(['catalog-page']) })).toEqual([]);
    // A target the repository declares still resolves, and other kinds are still judged.
    const other = [
      ...d,
      desired('initiative', 'q4', { state: {}, refs: [ref('entity-type', 'nope', 'filter.types.include[0]')] }),
    ];
    expect(
      checkReferences({ desired: other, handlers, live: [], unreadable: new Set(['catalog-page']) }).map((x) => x.id),
    ).toEqual(['q4']);
  });

  it('names a whole ordering cycle once, at its first object', () => {
    const diags = checkReferences({
      desired: [
        desired('entity', 'c', { state: {}, refs: [ref('entity', 'a', 'parent')] }),
        desired('entity', 'b', { state: {}, refs: [ref('entity', 'c', 'parent')] }),
        desired(
          'entity',
          'a',
          { state: {}, refs: [ref('entity', 'b', 'parent')] },
          {
            file: 'a.yaml',
            positions: { parent: [7, 3] },
          },
        ),
        // a non-ordering back edge (children) is not a cycle
        desired('entity', 'p', { state: {}, refs: [ref('entity', 'q', 'children', { ordering: false })] }),
        desired('entity', 'q', { state: {}, refs: [ref('entity', 'p', 'parent')] }),
      ],
      handlers,
    });
    expect(diags).toEqual([
      expect.objectContaining({
        code: 'reference-cycle',
        message: 'reference cycle: entity/a → entity/b → entity/c → entity/a',
        file: 'a.yaml',
        line: 7,
        column: 3,
      }),
    ]);
  });

  it('says the same cycles whatever order the manifests and their references come in (the walk is unsorted)', () => {
    // Two cycles, one with a chord (a → c): the shortest cycle through its first object is said.
    const graph: [string, string[]][] = [
      ['a', ['b', 'c']],
      ['b', ['c']],
      ['c', ['a']],
      ['x', ['y']],
      ['y', ['x', 'a']],
      ['z', ['z']],
      ['free', ['a']],
    ];
    const objects = (order: readonly number[], reverseRefs: boolean) =>
      order.map((i) => {
        const [id, targets] = graph[i]!;
        const refs = targets.map((t, j) => ref('entity', t, `parents.${j}`));
        return desired('entity', id, { state: {}, refs: reverseRefs ? refs.reverse() : refs });
      });
    const said = (order: readonly number[], reverseRefs: boolean) =>
      checkReferences({ desired: objects(order, reverseRefs), handlers }).map((d) => `${d.id} ${d.message}`);
    const expected = [
      'a reference cycle: entity/a → entity/c → entity/a',
      'x reference cycle: entity/x → entity/y → entity/x',
      'z reference cycle: entity/z → entity/z',
    ];
    expect(said([0, 1, 2, 3, 4, 5, 6], false)).toEqual(expected);
    expect(said([6, 5, 4, 3, 2, 1, 0], true)).toEqual(expected);
    expect(said([2, 4, 6, 0, 5, 1, 3], true)).toEqual(expected);
  });

  it('reports a self-reference as a cycle', () => {
    const diags = checkReferences({
      desired: [desired('entity', 'a', { state: {}, refs: [ref('entity', 'a', 'parent')] })],
      handlers,
    });
    expect(diags.map((d) => d.message)).toEqual(['reference cycle: entity/a → entity/a']);
  });
});

describe('suggest', () => {
  it('prefers the smallest edit distance, accepts prefixes and case differences, ignores far names', () => {
    expect(suggest('paymnts', ['shipping', 'payments', 'payment-gw'])).toBe('payments');
    expect(suggest('payments', ['payments-api', 'orders'])).toBe('payments-api');
    expect(suggest('Payments-API', ['payments-api'])).toBe('payments-api');
    expect(suggest('ab', ['xy', 'cd'])).toBeUndefined();
    expect(suggest('inventory', ['billing', 'orders'])).toBeUndefined();
  });
});
