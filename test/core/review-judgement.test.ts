/**
 * Is this the reviewed plan, and what of it remains: the plan at the head judged against the
 * reviewed plans of the merges it carries. A reviewed step no longer planned counts as done only
 * when what it writes is live (ADR 0003).
 */
import { describe, expect, it } from 'vitest';
import { fingerprints, judgeMerges, planDigest } from '../../src/core/review-judgement.js';
import type { Change, DesiredObject, Plan } from '../../src/core/model.js';

const desired = (id: string, spec: Record<string, unknown>): DesiredObject =>
  ({ kind: 'entity', id, source: { file: `${id}.yaml`, line: 1 }, spec, doc: {} }) as unknown as DesiredObject;
const change = (
  id: string,
  action: Change['action'],
  spec?: Record<string, unknown>,
  extra: Partial<Change> = {},
): Change => ({
  kind: 'entity',
  id,
  action,
  diff: spec ? [{ path: 'owner', after: spec.owner as string }] : [],
  waitsFor: [],
  ...(spec ? { desired: desired(id, spec) } : {}),
  ...extra,
});
const plan = (changes: Change[]): Plan => {
  const summary = { create: 0, update: 0, delete: 0, archive: 0, noop: 0 };
  for (const c of changes) summary[c.action] += 1;
  return { changes, diagnostics: [], summary };
};
const review = (pullRequest: number, p: Plan) => ({ pullRequest, digest: planDigest(p), changes: fingerprints(p) });

const A = { owner: 'team-a' };
const B = { owner: 'team-b' };

describe('one merge', () => {
  const reviewed = plan([change('svc-a', 'update', A), change('svc-b', 'update', B)]);

  it('applies the reviewed plan, and its rest when the missing step is live as reviewed', () => {
    expect(judgeMerges([review(7, reviewed)], reviewed)).toMatchObject({ verdict: 'apply' });
    const rest = plan([change('svc-a', 'update', A), change('svc-b', 'noop', B)]);
    expect(judgeMerges([review(7, reviewed)], rest)).toEqual({
      verdict: 'apply',
      reviews: [{ pullRequest: 7, remaining: 1, reviewed: 2, superseded: [] }],
    });
  });

  it('refuses a head that dropped a reviewed step: svc-b declared otherwise is not "done"', () => {
    const reverted = plan([change('svc-a', 'update', A), change('svc-b', 'noop', { owner: 'old-team' })]);
    const judged = judgeMerges([review(7, reviewed)], reverted);
    expect(judged.verdict).toBe('refuse');
    expect(judged.verdict === 'refuse' && judged.problems).toEqual([
      { kind: 'dropped', pullRequest: 7, reviewed: expect.objectContaining({ key: 'entity/svc-b', action: 'update' }) },
    ]);
    // Not declared at all any more: not live as reviewed either.
    expect(judgeMerges([review(7, reviewed)], plan([change('svc-a', 'update', A)])).verdict).toBe('refuse');
  });

  it('an archive no longer planned is done only when the object is gone from the plan', () => {
    const archive = plan([change('payments-api', 'archive')]);
    expect(judgeMerges([review(7, archive)], plan([change('other', 'noop', A)])).verdict).toBe('apply');
    expect(judgeMerges([review(7, archive)], plan([change('payments-api', 'noop', A)])).verdict).toBe('refuse');
  });

  it('refuses anything new or different, the same steps in another order, and a plan with only a digest', () => {
    const a = change('svc-a', 'update', A);
    const b = change('svc-b', 'update', B);
    expect(judgeMerges([review(7, reviewed)], plan([a, b, change('c', 'create', A)])).verdict).toBe('refuse');
    expect(judgeMerges([review(7, reviewed)], plan([a, { ...b, unarchive: true }])).verdict).toBe('refuse');
    expect(judgeMerges([review(7, reviewed)], plan([b, a])).verdict).toBe('refuse');
    expect(judgeMerges([{ pullRequest: 7, digest: planDigest(reviewed) }], plan([a])).verdict).toBe('refuse');
  });
});

describe('several merges at one head, in merge order', () => {
  it('applies two pull requests planned against the same state, each step reviewed by one of them', () => {
    const p7 = plan([change('svc-a', 'update', A)]);
    const p8 = plan([change('svc-b', 'update', B)]);
    const head = plan([change('svc-a', 'update', A), change('svc-b', 'update', B)]);
    expect(judgeMerges([review(7, p7), review(8, p8)], head)).toEqual({
      verdict: 'apply',
      reviews: [
        { pullRequest: 7, remaining: 1, reviewed: 1, superseded: [] },
        { pullRequest: 8, remaining: 1, reviewed: 1, superseded: [] },
      ],
    });
  });

  it('a later merge replaces an earlier one on the same object; a stale middle one is named', () => {
    const p7 = plan([change('svc-a', 'update', A)]);
    const p8 = plan([change('svc-a', 'update', B)]);
    const head = plan([change('svc-a', 'update', B)]);
    expect(judgeMerges([review(7, p7), review(8, p8)], head)).toMatchObject({
      verdict: 'apply',
      reviews: [{ pullRequest: 7, superseded: [{ key: 'entity/svc-a', by: 8 }] }, { pullRequest: 8 }],
    });
    const stale = plan([change('svc-c', 'update', A, { diff: [{ path: 'owner', before: 'x', after: 'team-a' }] })]);
    const p9 = plan([change('svc-d', 'update', B)]);
    const now = plan([change('svc-a', 'update', A), change('svc-c', 'update', A), change('svc-d', 'update', B)]);
    const judged = judgeMerges([review(7, p7), review(8, stale), review(9, p9)], now);
    expect(judged.verdict === 'refuse' && judged.problems).toEqual([
      expect.objectContaining({ kind: 'changed', pullRequest: 8 }),
    ]);
  });
});
