import { describe, expect, it } from 'vitest';
import type { DesiredObject, Diagnostic, LiveObject, ObjectKey } from '../../src/core/model.js';
import { buildPlan, type PlanOptions } from '../../src/core/plan.js';
import type { KindHandler } from '../../src/kinds/types.js';
import { allHandlers, desired, fakeHandler, live, ref } from './fakes.js';

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
const codes = (diags: readonly Diagnostic[]): string[] => diags.map((d) => d.code);
const actions = (plan: ReturnType<typeof buildPlan>): string[] =>
  plan.changes.map((c) => `${c.action} ${c.kind}/${c.id}`);

describe('buildPlan: desired vs live', () => {
  it('creates what is missing live, with the full desired state as diff and the manifest as source', () => {
    const plan = buildPlan({
      desired: [desired('entity', 'payments', { state: { title: 'Payments' } }, { file: 'svc/cortex.yaml', line: 3 })],
      live: [],
      handlers: allHandlers(),
      options: options(),
    });
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]).toMatchObject({
      action: 'create',
      source: 'svc/cortex.yaml',
      line: 3,
      diff: [{ path: 'title', after: 'Payments' }],
    });
    expect(plan.summary).toEqual({ create: 1, update: 0, delete: 0, archive: 0, noop: 0 });
  });

  it('is a noop when the states are equal in a different key order and owned by this source', () => {
    const plan = buildPlan({
      desired: [desired('entity', 'payments', { state: { title: 'P', groups: ['a'], meta: { x: 1, y: 2 } } })],
      live: [live('entity', 'payments', { meta: { y: 2, x: 1 }, groups: ['a'], title: 'P' }, { owner: SOURCE })],
      handlers: allHandlers(),
      options: options(),
    });
    expect(actions(plan)).toEqual(['noop entity/payments']);
    expect(plan.diagnostics).toEqual([]);
  });

  it('updates with a field diff when states differ', () => {
    const plan = buildPlan({
      desired: [desired('entity', 'payments', { state: { groups: ['tier-0'] } })],
      live: [live('entity', 'payments', { groups: ['tier-1'] }, { owner: SOURCE })],
      handlers: allHandlers(),
      options: options(),
    });
    expect(plan.changes[0]).toMatchObject({
      action: 'update',
      diff: [{ path: 'groups', before: ['tier-1'], after: ['tier-0'] }],
    });
    expect(plan.changes[0]?.adopt).toBeUndefined();
  });

  it('adopts an unowned live object even when nothing else differs', () => {
    const plan = buildPlan({
      desired: [desired('entity', 'payments', { state: { title: 'P' } })],
      live: [live('entity', 'payments', { title: 'P' })],
      handlers: allHandlers(),
      options: options(),
    });
    expect(plan.changes[0]).toMatchObject({ action: 'update', adopt: true, diff: [] });
    expect(plan.changes[0]?.reason).toBe('adopt: exists live, not yet managed by any repository');
    expect(plan.diagnostics).toEqual([]);
  });

  it('refuses an object managed by another source unless takeover is allowed', () => {
    const input = {
      desired: [desired('entity', 'payments', { state: { title: 'P' } }, { file: 'cortex.yaml', line: 1 })],
      live: [live('entity', 'payments', { title: 'P' }, { owner: 'other-repo' })],
      handlers: allHandlers(),
    };
    const refused = buildPlan({ ...input, options: options() });
    expect(refused.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'ownership-conflict',
        file: 'cortex.yaml',
        message: 'entity `payments` is managed by source `other-repo`; pass --allow-takeover to hand it over',
      }),
    ]);
    const taken = buildPlan({ ...input, options: options({ allowTakeover: true }) });
    expect(taken.diagnostics).toEqual([]);
    expect(taken.changes[0]).toMatchObject({ action: 'update', adopt: true, reason: 'take over from `other-repo`' });
  });

  it('unarchives an archived live object whose manifest is back', () => {
    const plan = buildPlan({
      desired: [desired('entity', 'payments', { state: { title: 'P' } })],
      live: [live('entity', 'payments', { title: 'P' }, { owner: SOURCE, archived: true })],
      handlers: allHandlers(),
      options: options(),
    });
    expect(plan.changes[0]).toMatchObject({
      action: 'update',
      unarchive: true,
      reason: 'archived live; the manifest is back',
    });
  });
});

describe('buildPlan: prune', () => {
  const ownedLive = (n: number) =>
    Array.from({ length: n }, (_, i) => live('catalog-page', `page-${i}`, { n: i }, { owner: SOURCE }));
  const keep = (n: number) =>
    Array.from({ length: n }, (_, i) => desired('catalog-page', `page-${i}`, { state: { n: i } }));

  it('never touches live-only objects without --prune, and lists no foreign or unowned ones', () => {
    const liveObjs = [
      live('entity', 'mine', {}, { owner: SOURCE }),
      live('entity', 'theirs', {}, { owner: 'other-repo' }),
      live('entity', 'nobodys', {}),
    ];
    const d = [desired('entity', 'kept', { state: {} })];
    expect(actions(buildPlan({ desired: d, live: liveObjs, handlers: allHandlers(), options: options() }))).toEqual([
      'create entity/kept',
    ]);
    const pruned = buildPlan({
      desired: d,
      live: liveObjs,
      handlers: allHandlers(),
      options: options({ prune: true, allowMassDelete: true }),
    });
    expect(actions(pruned)).toEqual(['create entity/kept', 'archive entity/mine']);
    expect(pruned.changes[1]?.reason).toBe('manifest removed; managed by source `platform-repo`');
  });

  it("uses the entity kind's prune action setting and delete for other kinds", () => {
    const plan = buildPlan({
      desired: [desired('entity', 'kept', { state: {} })],
      live: [
        live('entity', 'gone', {}, { owner: SOURCE }),
        live('initiative', 'q3', {}, { owner: SOURCE }),
        ...ownedLive(6),
      ],
      handlers: allHandlers('delete'),
      options: options({ prune: true, allowMassDelete: true }),
    });
    expect(actions(plan).filter((a) => a.includes('gone') || a.includes('q3'))).toEqual([
      'delete initiative/q3',
      'delete entity/gone',
    ]);
  });

  it('skips protected objects, objects matching --protect globs and already archived ones', () => {
    const plan = buildPlan({
      desired: keep(1),
      live: [
        ...ownedLive(1),
        live('entity', 'flagged', {}, { owner: SOURCE, protected: true }),
        live('entity', 'prod-api', {}, { owner: SOURCE }),
        live('entity', 'archived', {}, { owner: SOURCE, archived: true }),
        live('entity', 'stale', {}, { owner: SOURCE }),
      ],
      handlers: allHandlers(),
      options: options({ prune: true, protect: ['entity/prod-*'], allowMassDelete: true }),
    });
    expect(actions(plan)).toEqual(['noop catalog-page/page-0', 'archive entity/stale']);
  });

  it('refuses to prune more than 25 % of the owned objects without --allow-mass-delete', () => {
    const atLimit = buildPlan({
      desired: keep(3),
      live: ownedLive(4),
      handlers: allHandlers(),
      options: options({ prune: true }),
    });
    expect(atLimit.diagnostics).toEqual([]);
    expect(atLimit.summary.delete).toBe(1);

    const over = buildPlan({
      desired: keep(2),
      live: ownedLive(4),
      handlers: allHandlers(),
      options: options({ prune: true }),
    });
    expect(codes(over.diagnostics)).toEqual(['mass-delete']);
    expect(over.diagnostics[0]?.message).toContain('prunes 2 objects, more than 25 % of the 4 objects');
    expect(over.summary.delete).toBe(2); // still listed, so users see what would happen

    const allowed = buildPlan({
      desired: keep(2),
      live: ownedLive(4),
      handlers: allHandlers(),
      options: options({ prune: true, allowMassDelete: true }),
    });
    expect(allowed.diagnostics).toEqual([]);

    const byCount = buildPlan({
      desired: keep(90),
      live: ownedLive(100),
      handlers: allHandlers(),
      options: options({ prune: true, maxDeleteCount: 5 }),
    });
    expect(codes(byCount.diagnostics)).toEqual(['mass-delete']);
  });

  it('refuses to prune every managed object of one kind, even a small share of the whole, without --allow-mass-delete', () => {
    const initiatives = ['q1', 'q2', 'q3'].map((id) => live('initiative', id, {}, { owner: SOURCE }));
    const input = { desired: keep(18), live: [...ownedLive(18), ...initiatives], handlers: allHandlers() };
    const refused = buildPlan({ ...input, options: options({ prune: true }) });
    expect(refused.summary.delete).toBe(3); // 3 of 21: under the 25 % share
    expect(codes(refused.diagnostics)).toEqual(['mass-delete']);
    expect(refused.diagnostics[0]?.message).toMatch(/prunes every .* managed by source `platform-repo` \(3 of 3\)/);
    expect(buildPlan({ ...input, options: options({ prune: true, allowMassDelete: true }) }).diagnostics).toEqual([]);

    const oneKept = buildPlan({
      ...input,
      desired: [...keep(18), desired('initiative', 'q1', { state: {} })],
      options: options({ prune: true }),
    });
    expect(oneKept.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const lastOfOne = buildPlan({
      desired: keep(18),
      live: [...ownedLive(18), initiatives[0] as (typeof initiatives)[number]],
      handlers: allHandlers(),
      options: options({ prune: true }),
    });
    expect(lastOfOne.diagnostics).toEqual([]); // removing the only one of a kind is an ordinary edit
  });

  it('prunes nothing when no manifest was found', () => {
    const plan = buildPlan({
      desired: [],
      live: ownedLive(3),
      handlers: allHandlers(),
      options: options({ prune: true, allowMassDelete: true }),
    });
    expect(plan.changes).toEqual([]);
    expect(codes(plan.diagnostics)).toEqual(['prune-empty']);
  });

  it('prunes nothing when a manifest failed to load', () => {
    const plan = buildPlan({
      desired: keep(1),
      live: ownedLive(3),
      handlers: allHandlers(),
      options: options({ prune: true, allowMassDelete: true, manifestsComplete: false }),
    });
    expect(actions(plan)).toEqual(['noop catalog-page/page-0']);
    expect(codes(plan.diagnostics)).toEqual(['prune-incomplete']);
  });
});

describe('buildPlan: ordering', () => {
  it('creates referenced objects first and removes in reverse kind order after all writes', () => {
    const plan = buildPlan({
      desired: [
        desired('entity', 'payments', {
          state: {},
          type: 'database',
          refs: [ref('entity-type', 'database', 'type'), ref('entity', 'team-a', 'owners.0.name')],
        }),
        desired('entity', 'team-a', { state: {}, type: 'team' }),
        desired('entity-type', 'database', { state: { v: 2 } }),
        desired('catalog-page', 'keep', { state: {} }),
      ],
      live: [
        live('entity-type', 'database', { v: 1 }, { owner: SOURCE }),
        live('catalog-page', 'keep', {}, { owner: SOURCE }),
        live('entity-type', 'legacy', {}, { owner: SOURCE }),
        live('entity', 'old', {}, { owner: SOURCE, type: 'legacy' }),
        live('scaffolder-template', 'tpl', {}, { owner: SOURCE }),
      ],
      handlers: allHandlers('delete'),
      options: options({ prune: true, allowMassDelete: true }),
    });
    expect(plan.diagnostics).toEqual([]);
    expect(actions(plan)).toEqual([
      'update entity-type/database',
      'create entity/team-a',
      'create entity/payments',
      'noop catalog-page/keep',
      'delete scaffolder-template/tpl',
      'delete entity/old',
      'delete entity-type/legacy',
    ]);
    const byId = new Map(plan.changes.map((c) => [c.id, c]));
    expect(byId.get('payments')?.waitsFor).toEqual(['entity-type/database', 'entity/team-a']);
    expect(byId.get('legacy')?.waitsFor).toEqual(['entity/old']);
  });

  it('errors when a manifest still references an object this plan deletes', () => {
    const plan = buildPlan({
      desired: [
        desired(
          'entity',
          'payments',
          { state: {}, refs: [ref('entity-type', 'legacy', 'type')] },
          {
            file: 'cortex.yaml',
            positions: { type: [4, 9] },
          },
        ),
        ...Array.from({ length: 5 }, (_, i) => desired('catalog-page', `p${i}`, { state: {} })),
      ],
      live: [live('entity-type', 'legacy', {}, { owner: SOURCE })],
      handlers: allHandlers(),
      options: options({ prune: true, allowMassDelete: true }),
    });
    expect(plan.diagnostics).toEqual([
      expect.objectContaining({
        code: 'reference-to-pruned',
        severity: 'error',
        file: 'cortex.yaml',
        line: 4,
        column: 9,
      }),
    ]);
  });
});

describe('buildPlan: ownership records and source ids', () => {
  it('prunes an object only when its marker AND this source inventory both say it is ours', () => {
    const liveObjs = [
      live('entity', 'ours', {}, { owner: SOURCE }),
      live('entity', 'copied-marker', {}, { owner: SOURCE }),
      live('catalog-page', 'page', {}, { owner: SOURCE }),
    ];
    const plan = buildPlan({
      desired: [desired('entity', 'kept', { state: {} })],
      live: liveObjs,
      handlers: allHandlers(),
      options: options({
        prune: true,
        allowMassDelete: true,
        ownInventory: new Set(['entity/ours', 'catalog-page/page', 'entity/kept']),
      }),
    });
    expect(actions(plan).sort()).toEqual(['archive entity/ours', 'create entity/kept', 'delete catalog-page/page']);
  });

  it('refuses a manifest that declares an ownership record: its type, an entity of it, or a record tag', () => {
    const plan = buildPlan({
      desired: [
        desired('entity-type', 'cortex-sync-inventory', { state: {} }),
        desired('entity', 'cortex-sync-inventory-github-com-acme-catalog-1a2b3c4d', { state: {} }),
        desired('entity', 'innocent-name', { state: {}, type: 'cortex-sync-inventory' }),
        desired('entity', 'cortex-sync-lease-github-com-acme-catalog-1a2b3c4d', { state: {} }),
        desired('entity', 'fine', { state: {} }),
      ],
      live: [],
      handlers: allHandlers(),
      options: options(),
    });
    expect(codes(plan.diagnostics)).toEqual(['reserved', 'reserved', 'reserved', 'reserved']);
    expect(actions(plan)).toEqual(['create entity/fine']);
    expect(plan.diagnostics[0]).toMatchObject({ file: '.cortex/entity-type/cortex-sync-inventory.yaml', line: 1 });
  });

  it('without a source id: nothing is adopted or pruned, and --prune is refused with a clear message', () => {
    const input = {
      desired: [desired('entity', 'a', { state: { t: 1 } }), desired('entity', 'b', { state: { t: 1 } })],
      live: [live('entity', 'a', { t: 1 }), live('entity', 'b', { t: 0 }), live('entity', 'c', {}, { owner: 'x' })],
      handlers: allHandlers(),
    };
    const plain = buildPlan({ ...input, options: options({ sourceId: undefined }) });
    expect(actions(plain)).toEqual(['noop entity/a', 'update entity/b']);
    expect(plain.changes.some((c) => c.adopt)).toBe(false);
    expect(plain.diagnostics).toEqual([]);

    const pruned = buildPlan({ ...input, options: options({ sourceId: undefined, prune: true }) });
    expect(codes(pruned.diagnostics)).toEqual(['prune-needs-source-id']);
    expect(pruned.diagnostics[0]?.message).toMatch(/--prune needs a source id.*sourceId.*CORTEX_SYNC_SOURCE_ID/);
    expect(pruned.summary.archive + pruned.summary.delete).toBe(0);
  });
});

describe('buildPlan: removals the API would refuse, and updates that must wait', () => {
  /** The fake kind with `extra` hooks added to its groups. */
  const withType = (
    kind: Parameters<typeof fakeHandler>[0],
    extra: { prune?: Partial<KindHandler['prune']>; write?: Partial<KindHandler['write']> },
  ): KindHandler => {
    const handler = fakeHandler(kind);
    return {
      ...handler,
      prune: { ...handler.prune, ...extra.prune },
      write: { ...handler.write, ...extra.write },
    };
  };

  it('keeps an entity type that an archived entity and an unmanaged one still have, naming both', () => {
    const plan = buildPlan({
      desired: [desired('entity', 'other', { state: {}, type: 'service' })],
      live: [
        live('entity-type', 'widget', {}, { owner: SOURCE }),
        live('entity', 'old', {}, { owner: SOURCE, archived: true, type: 'widget' }),
        live('entity', 'ui-made', {}, { type: 'widget' }),
        live('entity', 'other', {}, { owner: SOURCE, type: 'service' }),
        ...Array.from({ length: 6 }, (_, i) => live('catalog-page', `p${i}`, {}, { owner: SOURCE })),
      ],
      handlers: allHandlers(),
      options: options({ prune: true, allowMassDelete: true }),
    });
    expect(actions(plan).filter((a) => a.includes('widget'))).toEqual([]);
    const kept = plan.diagnostics.find((d) => d.code === 'prune-kept');
    expect(kept?.severity).toBe('warning');
    expect(kept?.message).toContain('2 entities have it (1 archived: `old`; 1 not archived: `ui-made`)');
  });

  it('deletes the type after the last entity that has it, when the plan deletes that entity', () => {
    const plan = buildPlan({
      desired: [desired('entity', 'other', { state: {}, type: 'service' })],
      live: [
        live('entity-type', 'widget', {}, { owner: SOURCE }),
        live('entity', 'wa', {}, { owner: SOURCE, type: 'widget' }),
        live('entity', 'other', {}, { owner: SOURCE, type: 'service' }),
      ],
      handlers: allHandlers('delete'),
      options: options({ prune: true, allowMassDelete: true }),
    });
    expect(actions(plan).filter((a) => !a.startsWith('noop'))).toEqual([
      'delete entity/wa',
      'delete entity-type/widget',
    ]);
    expect(plan.changes.find((c) => c.id === 'widget')?.waitsFor).toEqual(['entity/wa']);
    expect(codes(plan.diagnostics)).not.toContain('prune-kept');
  });

  it('hands over, with or without prune, only what this source manages; a foreign object is left alone', () => {
    const handlers = allHandlers().map((h) =>
      h.kind === 'dependency'
        ? withType('dependency', {
            prune: {
              declaredWithin: (l: LiveObject, desiredOf: (key: ObjectKey) => DesiredObject | undefined) => {
                const by = desiredOf('entity/caller');
                return by ? { by, field: 'info.x-cortex-dependency[0]', path: ['info'] } : undefined;
              },
            },
          })
        : h,
    );
    for (const prune of [false, true]) {
      const plan = buildPlan({
        desired: [desired('entity', 'caller', { state: {} })],
        live: [
          live('entity', 'caller', {}, { owner: SOURCE }),
          live('dependency', 'caller→ours', {}, { owner: SOURCE }),
          live('dependency', 'caller→theirs', {}, { owner: 'other-repo' }),
          ...Array.from({ length: 6 }, (_, i) => live('catalog-page', `p${i}`, {}, { owner: SOURCE })),
        ],
        handlers,
        options: options({ prune }),
      });
      expect(plan.handOvers).toEqual([{ kind: 'dependency', id: 'caller→ours', to: 'entity/caller' }]);
      expect(actions(plan).filter((a) => a.includes('dependency'))).toEqual([]);
      expect(plan.diagnostics.filter((d) => d.code === 'handed-over').map((d) => d.id)).toEqual(['caller→ours']);
    }
  });

  it('turns an update round to wait for the write it must follow, and follows with the writes that work either way', () => {
    const handlers = allHandlers().map((h) =>
      h.kind === 'entity-type'
        ? withType('entity-type', {
            write: {
              updateOrder: (_u: unknown, r: { desired: DesiredObject }) => ({
                order: r.desired.id === 'needs-after' ? 'after' : 'either',
              }),
            },
          })
        : h,
    );
    const typeRef = [ref('entity-type', 'widget', 'info.x-cortex-type')];
    const plan = buildPlan({
      desired: [
        desired('entity-type', 'widget', { state: { v: 2 } }),
        desired('entity', 'needs-after', { state: { v: 2 }, refs: typeRef, type: 'widget' }),
        desired('entity', 'either', { state: { v: 2 }, refs: typeRef, type: 'widget' }),
      ],
      live: [
        live('entity-type', 'widget', { v: 1 }, { owner: SOURCE }),
        live('entity', 'needs-after', { v: 1 }, { owner: SOURCE, type: 'widget' }),
        live('entity', 'either', { v: 1 }, { owner: SOURCE, type: 'widget' }),
      ],
      handlers,
      options: options(),
    });
    expect(plan.changes.find((c) => c.id === 'widget')?.waitsFor).toEqual(['entity/either', 'entity/needs-after']);
    expect(actions(plan).at(-1)).toBe('update entity-type/widget');
    expect(codes(plan.diagnostics)).toEqual([]);
  });

  it('when turning round would close a cycle, every update goes first and the plan says so', () => {
    const handlers = allHandlers().map((h) =>
      h.kind === 'entity-type'
        ? withType('entity-type', {
            write: {
              updateOrder: (_u: unknown, r: { desired: DesiredObject }) => ({
                order: r.desired.id === 'child' ? 'after' : 'first',
              }),
            },
          })
        : h,
    );
    const typeRef = ref('entity-type', 'widget', 'info.x-cortex-type');
    const plan = buildPlan({
      desired: [
        desired('entity-type', 'widget', { state: { v: 2 } }),
        // child must come before the type, but waits for parent, which needs the type first.
        desired('entity', 'child', {
          state: { v: 2 },
          refs: [typeRef, ref('entity', 'parent', 'info.x-cortex-parents')],
        }),
        desired('entity', 'parent', { state: { v: 1 }, refs: [typeRef] }),
      ],
      live: [
        live('entity-type', 'widget', { v: 1 }, { owner: SOURCE }),
        live('entity', 'child', { v: 1 }, { owner: SOURCE }),
      ],
      handlers,
      options: options(),
    });
    expect(codes(plan.diagnostics)).toEqual(['write-order-conflict']);
    expect(plan.diagnostics[0]?.message).toMatch(
      /^entity-type\/widget is updated before the objects that reference it/,
    );
    expect(actions(plan)[0]).toBe('update entity-type/widget');
  });
});
