/**
 * An object may have several types (`manifest.typedBy.typeOf` answering a list, or `typedBy` a
 * list of kinds): a prune keeps every type still held, and a reference that asks for a type is
 * satisfied by any of them. The fake entities here read `type: 'a,b'` as the types `a` and `b`.
 */
import { describe, expect, it } from 'vitest';
import type { TypedBy } from '../../src/core/kind-contract.js';
import { typesOf } from '../../src/core/kind-contract.js';
import { buildPlan, type PlanOptions } from '../../src/core/plan.js';
import { checkReferences } from '../../src/core/references.js';
import type { KindHandler } from '../../src/kinds/types.js';
import { allHandlers, desired, type FakeLive, type FakeSpec, live, ref } from './fakes.js';

const SOURCE = 'platform-repo';
const options = (extra: Partial<PlanOptions> = {}): PlanOptions => ({
  sourceId: SOURCE,
  prune: false,
  allowTakeover: false,
  allowMassDelete: false,
  protect: [],
  manifestsComplete: true,
  ...extra,
});

const severalTypes: TypedBy<FakeSpec, FakeLive> = {
  kind: 'entity-type',
  typeOf: (obj) => ('spec' in obj ? obj.spec.type : obj.state.type)?.split(','),
};

/** The fake kinds, entities typed by several entity types. */
const handlers = (): KindHandler[] =>
  allHandlers().map((h) =>
    h.kind === 'entity' ? ({ ...h, manifest: { ...h.manifest, typedBy: severalTypes } } as KindHandler) : h,
  );

describe('an object typed by several types', () => {
  it('holds each of them: a prune keeps every type one of its entities still has', () => {
    const plan = buildPlan({
      desired: [desired('entity', 'payments', { state: {}, type: 'service,ledger' })],
      live: [
        live('entity-type', 'ledger', {}, { owner: SOURCE }),
        live('entity-type', 'orphan', {}, { owner: SOURCE }),
        live('entity', 'payments', {}, { owner: SOURCE, type: 'service,ledger' }),
        ...Array.from({ length: 6 }, (_, i) => live('catalog-page', `p${i}`, {}, { owner: SOURCE })),
      ],
      handlers: handlers(),
      options: options({ prune: true, allowMassDelete: true }),
    });
    const removed = plan.changes.filter((c) => c.action === 'delete' && c.kind === 'entity-type').map((c) => c.id);
    expect(removed).toEqual(['orphan']);
    expect(plan.diagnostics.filter((d) => d.code === 'prune-kept').map((d) => d.id)).toEqual(['ledger']);
  });

  it('satisfies a reference asking for any one of its types, and names all of them when none fits', () => {
    const team = desired('entity', 'payments', { state: {}, type: 'team,ledger' });
    const asking = (type: string) =>
      desired('catalog-page', 'home', { state: {}, refs: [ref('entity', 'payments', 'owner', { type })] });
    const check = (type: string) => checkReferences({ desired: [team, asking(type)], handlers: handlers() });
    expect(check('team')).toEqual([]);
    expect(check('ledger')).toEqual([]);
    expect(check('service')).toEqual([
      expect.objectContaining({
        code: 'wrong-entity-type',
        message: '`payments` is a `team`, `ledger` entity, but owner must name a `service` entity',
      }),
    ]);
  });

  it('reads a kind typed by objects of several kinds, and one type as before', () => {
    const byTwo = { manifest: { typedBy: [severalTypes, { kind: 'badge', typeOf: () => 'gold' }] } };
    const obj = desired('entity', 'x', { state: {}, type: 'a,b' });
    expect(typesOf(byTwo, obj)).toEqual([
      { kind: 'entity-type', id: 'a' },
      { kind: 'entity-type', id: 'b' },
      { kind: 'badge', id: 'gold' },
    ]);
    expect(typesOf(byTwo, desired('entity', 'z', { state: {}, type: 'a,a' }))).toEqual([
      { kind: 'entity-type', id: 'a' },
      { kind: 'badge', id: 'gold' },
    ]);
    expect(typesOf(allHandlers()[1] as KindHandler, desired('entity', 'y', { state: {}, type: 'service' }))).toEqual([
      { kind: 'entity-type', id: 'service' },
    ]);
  });
});
