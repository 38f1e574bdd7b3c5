/**
 * The plan comment as GitHub-flavoured Markdown (parsed with `marked`, as a screenshot-free check
 * that it renders): counts first, one `<details>` per kind with headings and diff tables, the
 * digest in a hidden marker; cut under GitHub's limit with a pointer to the job summary.
 */
import { type Token, lexer } from 'marked';
import { describe, expect, it } from 'vitest';
import { COMMENT_BUDGET, COMMENT_LIMIT, renderPlanComment } from '../../src/action/comment.js';
import { fingerprints, planDigest } from '../../src/action/digest.js';
import { readPlanComment, stickyMarker } from '../../src/action/markers.js';
import { stickyCommentBody } from '../../src/action/messages.js';
import type { Change, Plan } from '../../src/core/model.js';

const change = (over: Partial<Change> & Pick<Change, 'kind' | 'id' | 'action'>): Change => ({
  diff: [],
  waitsFor: [],
  ...over,
});

const plan = (changes: Change[]): Plan => {
  const summary = { create: 0, update: 0, delete: 0, archive: 0, noop: 0 };
  for (const c of changes) summary[c.action] += 1;
  return { changes, diagnostics: [], summary };
};

const samplePlan = plan([
  change({
    kind: 'entity-type',
    id: 'database',
    action: 'create',
    source: '.cortex/entity-types/database.yaml',
    line: 1,
    diff: [{ path: 'name', after: 'Database' }],
  }),
  change({
    kind: 'entity',
    id: 'payments-api',
    action: 'update',
    source: '.cortex/catalog/payments.yaml',
    line: 3,
    diff: [
      { path: 'info.x-cortex-groups', before: ['tier-1'], after: ['tier-0'] },
      { path: 'info.description', before: 'a | pipe', after: 'with `backticks` and <html>' },
    ],
  }),
  change({
    kind: 'entity',
    id: 'old-service',
    action: 'archive',
    reason: 'manifest removed; managed by source `example`',
  }),
  change({ kind: 'entity', id: 'same', action: 'noop' }),
]);

const allTokens = (tokens: Token[]): Token[] =>
  tokens.flatMap((t) => [t, ...allTokens('tokens' in t && Array.isArray(t.tokens) ? t.tokens : [])]);

const body = () =>
  stickyCommentBody({
    marker: stickyMarker('example/catalog', 'catalog'),
    label: { sourceId: 'example/catalog', dir: 'catalog' },
    renderPlan: (limit) => renderPlanComment(samplePlan, [], { title: 'cortex-sync plan for catalog', limit }),
    digest: planDigest(samplePlan),
    fingerprints: fingerprints(samplePlan),
  });

describe('the plan comment', () => {
  it('renders as GitHub-flavoured Markdown: headings, a <details> per kind, tables', () => {
    const tokens = allTokens(lexer(body(), { gfm: true }));
    const headings = tokens.filter((t) => t.type === 'heading').map((t) => (t as Token & { text: string }).text);
    expect(headings[0]).toBe('cortex-sync plan for catalog');
    expect(headings).toContain('🟡 update `payments-api` — `.cortex/catalog/payments.yaml:3`');
    const html = tokens.filter((t) => t.type === 'html').map((t) => t.raw);
    expect(html.filter((h) => h.includes('<details>'))).toHaveLength(2); // entity-type, entity
    expect(html.some((h) => h.includes('<summary><b>entity</b>: 2 changes</summary>'))).toBe(true);
    const tables = tokens.filter((t) => t.type === 'table') as (Token & {
      header: { text: string }[];
      rows: { text: string }[][];
    })[];
    // The counts table comes first, then one diff table per change with fields.
    expect(tables[0]?.header.map((h) => h.text)).toEqual(['', 'create', 'update', 'delete', 'archive', 'unchanged']);
    expect(tables[0]?.rows.map((r) => r[0]?.text)).toEqual(['**all**', 'entity-type', 'entity']);
    const diffTable = tables.find((t) => t.rows.some((r) => r[0]?.text.includes('info.description')));
    // A pipe and backticks inside a value stay inside their cell.
    expect(diffTable?.rows.every((r) => r.length === 3)).toBe(true);
    expect(body().indexOf('| **all** |')).toBeLessThan(body().indexOf('<details>'));
  });

  it('names the writes of the ownership record', () => {
    const withInventory: Plan = {
      ...samplePlan,
      inventory: [
        {
          phase: 'before',
          id: 'cortex-sync-inventory-x',
          action: 'create',
          add: ['entity-type/database'],
          remove: [],
          reason: 'r',
        },
      ],
    };
    const text = renderPlanComment(withInventory, [], { title: 't', limit: COMMENT_BUDGET });
    expect(text).toContain('Ownership record `cortex-sync-inventory-x`: create before the changes (adds 1).');
  });

  it('carries the digest and the reviewed changes in hidden markers', () => {
    const text = body();
    const marker = stickyMarker('example/catalog', 'catalog');
    expect(readPlanComment(text, marker)).toEqual({
      status: 'reviewed',
      plan: { digest: planDigest(samplePlan), changes: fingerprints(samplePlan) },
    });
    expect(text.startsWith('<!-- cortex-sync:plan source=example%2Fcatalog dir=catalog -->\n')).toBe(true);
  });

  const manyChanges = (n: number): Plan =>
    plan(
      Array.from({ length: n }, (_, i) =>
        change({
          kind: i % 2 ? 'entity' : 'catalog-page',
          id: `object-${i}`,
          action: 'update',
          diff: [{ path: 'description', before: 'x'.repeat(400), after: 'y'.repeat(400) }],
        }),
      ),
    );
  const longComment = (p: Plan) =>
    stickyCommentBody({
      marker: stickyMarker('s', '.'),
      label: { sourceId: 's', dir: '.' },
      renderPlan: (limit) =>
        renderPlanComment(p, [], { title: 'plan', limit, fullPlanAt: '[the job summary](https://example.test/run)' }),
      digest: planDigest(p),
      fingerprints: fingerprints(p),
    });

  it('cuts a long plan under the limit, points to the job summary, and keeps every fingerprint', () => {
    const many = manyChanges(2000);
    const text = longComment(many);
    expect(text.length).toBeLessThan(COMMENT_LIMIT);
    expect(text).toContain('The full plan is in [the job summary](https://example.test/run).');
    // The fingerprints of all 2,000 changes are kept: the plan gave up diffs for them.
    expect(readPlanComment(text, stickyMarker('s', '.'))).toEqual({
      status: 'reviewed',
      plan: { digest: planDigest(many), changes: fingerprints(many) },
    });
    // Cut at a section boundary: every opened <details> is closed.
    expect(text.split('<details>').length).toBe(text.split('</details>').length);
  });

  it('keeps only the digest when the fingerprints of a very long plan do not fit', () => {
    const many = manyChanges(4000);
    const text = longComment(many);
    expect(text.length).toBeLessThan(COMMENT_LIMIT);
    expect(text).toContain('| **all** | 0 | 4000 | 0 | 0 | 0 |');
    expect(readPlanComment(text, stickyMarker('s', '.'))).toEqual({
      status: 'reviewed',
      plan: { digest: planDigest(many) },
    });
  });
});

describe('the plan digest', () => {
  it('is the same for the same changes, whatever the key order of values or where they were declared, and ignores noops', () => {
    const a = plan([
      change({ kind: 'entity', id: 'x', action: 'update', diff: [{ path: 'm', before: { a: 1, b: 2 }, after: null }] }),
    ]);
    const b = plan([
      change({
        kind: 'entity',
        id: 'x',
        action: 'update',
        diff: [{ path: 'm', before: { b: 2, a: 1 }, after: null }],
        source: 'moved.yaml',
        line: 9,
      }),
      change({ kind: 'entity', id: 'y', action: 'noop' }),
    ]);
    expect(planDigest(a)).toBe(planDigest(b));
  });

  it('differs when a value, an action or an object differs', () => {
    const base = plan([
      change({ kind: 'entity', id: 'x', action: 'update', diff: [{ path: 'p', before: 1, after: 2 }] }),
    ]);
    const value = plan([
      change({ kind: 'entity', id: 'x', action: 'update', diff: [{ path: 'p', before: 1, after: 3 }] }),
    ]);
    const action = plan([
      change({ kind: 'entity', id: 'x', action: 'create', diff: [{ path: 'p', before: 1, after: 2 }] }),
    ]);
    const other = plan([
      change({ kind: 'entity', id: 'z', action: 'update', diff: [{ path: 'p', before: 1, after: 2 }] }),
    ]);
    const digests = new Set([base, value, action, other].map(planDigest));
    expect(digests.size).toBe(4);
  });
});
