import { describe, expect, it } from 'vitest';
import { planRun, type RunPlanInput } from '../../src/core/run-plan.js';
import { allHandlers, desired, live } from './fakes.js';

const SOURCE = 'platform-repo';

/** Freezes every plain object and array reachable from `value` (Maps and Sets are compared after instead). */
const deepFreeze = <T>(value: T): T => {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  if (value instanceof Map || value instanceof Set) {
    for (const item of value instanceof Map ? [...value.keys(), ...value.values()] : value) deepFreeze(item);
    return value;
  }
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
  return value;
};

/** A run of this source: one page changed, one new, one recorded without a manifest, a tag another source shares. */
const input = (): RunPlanInput => ({
  desired: [
    desired('catalog-page', 'changed', { state: { title: 'Changed, renamed' } }),
    desired('catalog-page', 'new', { state: { title: 'New' } }),
  ],
  live: [
    live('catalog-page', 'changed', { title: 'Changed' }, { owner: SOURCE }),
    live('catalog-page', 'gone', { title: 'Gone' }, { owner: SOURCE }),
  ],
  handlers: allHandlers(),
  options: { prune: false, allowTakeover: false, allowMassDelete: false, protect: [], manifestsComplete: true, now: 0 },
  deleteScope: { sourceId: SOURCE, origin: 'github.com/acme/platform', widened: [] },
  record: {
    sourceId: SOURCE,
    tag: 'tag-1',
    asRead: {
      keys: new Set(['catalog-page/changed', 'catalog-page/gone']),
      meta: { origin: 'github.com/acme/platform', protect: [] },
      declared: new Map(),
      serverIds: new Map(),
    },
    meta: { origin: 'github.com/acme/platform', protect: [] },
    sharesTagWith: 'other-repo',
  },
});

/** The Maps and Sets of an input, as values to compare before and after. */
const collections = (i: RunPlanInput) => ({
  keys: [...(i.record?.asRead.keys ?? [])],
  declared: [...(i.record?.asRead.declared ?? [])],
  serverIds: [...(i.record?.asRead.serverIds ?? [])],
  scope: [...(i.readScope ?? [])],
});

describe('planRun: the whole plan of a run, built once', () => {
  it('holds the changes, the header, the record writes and the leftovers, with its input frozen', () => {
    const given = deepFreeze(input());
    const before = collections(given);
    const { plan, steps } = planRun(given);
    expect(plan.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.kind}/${c.id}`)).toEqual([
      'update catalog-page/changed',
      'create catalog-page/new',
    ]);
    expect(plan.scope).toEqual(given.deleteScope);
    // The record grows by the new page before the changes; the page without a manifest stays (no prune).
    expect(plan.inventory?.map((w) => [w.action, w.add, w.remove])).toEqual([['update', ['catalog-page/new'], []]]);
    expect(steps?.id).toBe('tag-1');
    expect(plan.diagnostics.map((d) => d.code)).toEqual(['source-claimed', 'managed-without-manifest']);
    expect(plan.diagnostics[1]?.message).toContain('catalog-page/gone');
    expect(collections(given)).toEqual(before);
  });

  it('is the same plan for the same input', () => {
    const given = deepFreeze(input());
    expect(planRun(given)).toEqual(planRun(given));
    // A fresh input of the same values (its manifests' parsed documents carry functions: compared as JSON).
    const again = planRun(input());
    expect(JSON.stringify(again.plan)).toBe(JSON.stringify(planRun(given).plan));
    expect(again.steps).toEqual(planRun(given).steps);
  });

  it('a read of some objects plans those alone, and still judges the leftovers over every manifest', () => {
    const given = deepFreeze({ ...input(), readScope: new Set(['catalog-page/new'] as const) });
    const { plan } = planRun(given);
    expect(plan.changes.map((c) => `${c.action} ${c.kind}/${c.id}`)).toEqual(['create catalog-page/new']);
    expect(plan.diagnostics.map((d) => d.code)).toContain('managed-without-manifest');
  });

  it('without a source id: no record, no leftovers', () => {
    const { record: _record, ...rest } = input();
    const { plan, steps } = planRun(deepFreeze(rest));
    expect(steps).toBeUndefined();
    expect(plan.inventory).toEqual([]);
    expect(plan.diagnostics.map((d) => d.code)).not.toContain('managed-without-manifest');
  });
});
