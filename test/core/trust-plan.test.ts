/**
 * The planner's side of the trust model: `protect` patterns match whole identities whatever they
 * hold, and a source id claimed from another origin removes nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Diagnostic, ObjectKey } from '../../src/core/model.js';
import { buildPlan, globMatches, type PlanOptions, protectMatcher } from '../../src/core/plan.js';
import { type SourceBinding, sourceBinding } from '../../src/core/source-binding.js';
import { allHandlers, desired, live } from './fakes.js';

const SOURCE = 'repo-b';
const options = (extra: Partial<PlanOptions> = {}): PlanOptions => ({
  sourceId: SOURCE,
  prune: true,
  allowTakeover: false,
  allowMassDelete: true,
  protect: [],
  manifestsComplete: true,
  ...extra,
});
const codes = (diags: readonly Diagnostic[]): string[] => diags.map((d) => d.code);
const removals = (plan: ReturnType<typeof buildPlan>): string[] =>
  plan.changes.filter((c) => c.action === 'delete' || c.action === 'archive').map((c) => `${c.kind}/${c.id}`);

/** Odd identities a manifest or the UI can give an object. */
const ODD_NAMES = [
  'Two\nlines',
  'carriage\rreturn',
  'line\u2028separator',
  'paragraph\u2029separator',
  'tab\there',
  'nul\u0000byte',
  'emoji 🚀 launch',
  'right-to-left \u202e evil',
  'dots.and*stars?',
  '(parens)[brackets]{braces}',
  'back\\slash',
  'trailing newline\n',
  '\nleading newline',
];

describe('protect patterns match the whole identity, whatever it holds', () => {
  it.each(ODD_NAMES)('initiative/* protects the Initiative %j from apply --prune', (name) => {
    const plan = buildPlan({
      desired: [desired('initiative', 'kept', { state: {} })],
      live: [
        live('initiative', 'kept', {}, { owner: SOURCE }),
        live('initiative', name, {}, { owner: SOURCE }),
        live('catalog-page', 'gone', {}, { owner: SOURCE }),
      ],
      handlers: allHandlers(),
      options: options({ protect: ['initiative/*'] }),
    });
    expect(removals(plan)).toEqual(['catalog-page/gone']);
  });

  it('a pattern with a star in the middle matches across newlines, and nothing is special but the star', () => {
    const matches = protectMatcher(['initiative/Two*lines', 'entity/a.b', 'entity/(x)+', 'entity/[ab]']);
    expect(matches('initiative/Two\nlines' as ObjectKey)).toBe(true);
    expect(matches('initiative/Two\u2028and more\nlines' as ObjectKey)).toBe(true);
    // Regular-expression metacharacters are literal: `.` is not "any character", `+` not "one or more".
    expect(matches('entity/a.b')).toBe(true);
    expect(matches('entity/axb')).toBe(false);
    expect(matches('entity/(x)+')).toBe(true);
    expect(matches('entity/xx')).toBe(false);
    expect(matches('entity/[ab]')).toBe(true);
    expect(matches('entity/a')).toBe(false);
  });

  it('matches the whole key: no prefix or suffix match, and stars on both ends', () => {
    expect(globMatches('entity/prod', 'entity/prod-api')).toBe(false);
    expect(globMatches('entity/prod', 'x-entity/prod')).toBe(false);
    expect(globMatches('*api*', 'entity/payments-api-v2')).toBe(true);
    expect(globMatches('entity/a*a', 'entity/a')).toBe(false); // the two ends may not overlap
    expect(globMatches('entity/a*a', 'entity/aa')).toBe(true);
    expect(globMatches('**', '')).toBe(true);
    expect(globMatches('a*b*c', 'a\nb\nc')).toBe(true);
    expect(globMatches('a*b*c', 'a\nc\nb')).toBe(false);
  });

  it('an identity written with combining accents is protected by a pattern typed with precomposed ones', () => {
    const matches = protectMatcher(['initiative/Café*']);
    expect(matches('initiative/Cafe\u0301 launch' as ObjectKey)).toBe(true);
    // And the raw form still matches when normalising would split a prefix.
    expect(protectMatcher(['initiative/e*'])('initiative/e\u0301t\u00e9' as ObjectKey)).toBe(true);
  });
});

describe('a source id bound to another origin removes nothing', () => {
  const liveB = () => [
    live('entity', 'b-1', {}, { owner: SOURCE }),
    live('entity', 'b-2', {}, { owner: SOURCE }),
    live('entity', 'b-3', {}, { owner: SOURCE }),
    live('entity', 'b-4', {}, { owner: SOURCE }),
  ];
  const planWith = (binding: SourceBinding | undefined) =>
    buildPlan({
      desired: [desired('entity', 'b-1', { state: {} })],
      live: liveB(),
      handlers: allHandlers('delete'),
      options: options({ maxDeleteShare: 1, ...(binding ? { binding } : {}) }),
    });
  const bind = (record: { exists: boolean; origin?: string }, allowTakeover = false) =>
    sourceBinding({ sourceId: SOURCE, origin: 'github.com/acme/repo-a', record, allowTakeover });

  it('claimed by another origin: an error naming both origins, and not one removal in the plan', () => {
    const plan = planWith(bind({ exists: true, origin: 'github.com/acme/repo-b' }));
    expect(removals(plan)).toEqual([]);
    expect(codes(plan.diagnostics)).toEqual(['source-claimed']);
    const message = plan.diagnostics[0]?.message ?? '';
    expect(message).toContain('github.com/acme/repo-b');
    expect(message).toContain('github.com/acme/repo-a');
    expect(message).toContain('3 removals left out');
    expect(message).toContain('--allow-takeover');
  });

  it('the same origin: removals as before', () => {
    const plan = planWith(
      sourceBinding({
        sourceId: SOURCE,
        origin: 'github.com/acme/repo-b',
        record: { exists: true, origin: 'github.com/acme/repo-b' },
        allowTakeover: false,
      }),
    );
    expect(removals(plan)).toEqual(['entity/b-2', 'entity/b-3', 'entity/b-4']);
    expect(plan.diagnostics).toEqual([]);
  });

  it('a record without an origin is bound by this apply, which says so and removes nothing yet', () => {
    const plan = planWith(bind({ exists: true }));
    expect(removals(plan)).toEqual([]);
    expect(plan.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        code: 'source-bound',
        message: expect.stringContaining('binds it'),
      }),
    ]);
  });

  it('the operator allowed the takeover: removals go ahead, with a warning naming the old origin', () => {
    const plan = planWith(bind({ exists: true, origin: 'github.com/acme/repo-b' }, true));
    expect(removals(plan)).toEqual(['entity/b-2', 'entity/b-3', 'entity/b-4']);
    expect(plan.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        code: 'source-takeover',
        message: expect.stringContaining('repo-b'),
      }),
    ]);
  });

  it('an origin with a newline or an escape is printed escaped in the message', () => {
    const plan = planWith(
      sourceBinding({
        sourceId: SOURCE,
        origin: 'path:/tmp/x\n::error::forged',
        record: { exists: true, origin: 'evil\u001b[2Korigin' },
        allowTakeover: false,
      }),
    );
    const message = plan.diagnostics[0]?.message ?? '';
    expect(message).not.toContain('\n');
    expect(message).not.toContain('\u001b');
    expect(message).toContain('path:/tmp/x\\n::error::forged');
  });
});
