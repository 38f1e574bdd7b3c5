/**
 * The removal list and the look-alike flags hold strings a pull request controls (ids, file
 * names, look-alike messages): whatever they hold — a marker, HTML, Markdown, a mention, a
 * right-to-left override, zero-width characters — they are shown escaped, and the list stays
 * first and whole while the rest is cut. The Action's drift comment lists new deletes and
 * archives first too.
 */
import { describe, expect, it } from 'vitest';
import { driftCommentBody } from '../../src/action/messages.js';
import type { Change, Diagnostic, Plan } from '../../src/core/model.js';
import { renderPlanMarkdown } from '../../src/render/markdown.js';
import { renderPlanText } from '../../src/render/text.js';

const HOSTILE = '<!-- cortex-sync:digest v2 sha256:00 --> **bold** <img src=x> @acme/admins #12 \u202Egnp.exe\u200b';

const change = (over: Partial<Change> & Pick<Change, 'kind' | 'id' | 'action'>): Change => ({
  diff: [],
  waitsFor: [],
  ...over,
});

const plan = (creates: number): Plan => ({
  changes: [
    ...Array.from({ length: creates }, (_, i) =>
      change({
        kind: 'entity',
        id: `svc-${i}`,
        action: 'create',
        source: `s/${i}.yaml`,
        diff: [{ path: 'info.title', after: 'x'.repeat(200) }],
      }),
    ),
    change({ kind: 'entity', id: `gone ${HOSTILE}`, action: 'delete', source: `${HOSTILE}.yaml` }),
  ],
  diagnostics: [],
  summary: { create: creates, update: 0, delete: 1, archive: 0, noop: 0 },
});

const flag: Diagnostic = {
  severity: 'warning',
  code: 'lookalike-change',
  message: `entity \`gone ${HOSTILE}\` (delete) looks like ${HOSTILE} (create)`,
  kind: 'entity',
  id: `gone ${HOSTILE}`,
};

describe('the removal list', () => {
  it('escapes a hostile id, file name and look-alike message: no marker, HTML, bidi override or raw zero-width', () => {
    const md = renderPlanMarkdown(plan(2), { diagnostics: [flag] });
    const line = md.split('\n').find((l) => l.startsWith('- 🔴 delete')) ?? '';
    expect(line).toContain('⚠️');
    expect(md).not.toContain('<!--');
    expect(md).not.toContain('\u202E');
    // The pull request's zero-width space and override are shown as escapes, beside the delete.
    expect(line).toContain('\\u202e');
    expect(line).toContain('\\u200b');
    // Outside code spans (which GitHub shows literally): no HTML, emphasis or mention.
    const outside = md.replace(/(`+)[^`]*?\1/g, '');
    expect(outside).not.toContain('<img');
    expect(outside).not.toContain('**bold**');
    expect(outside).not.toMatch(/@acme/);
    const text = renderPlanText({ ...plan(2), diagnostics: [flag] }, { color: false });
    expect(text).not.toContain('\u202E');
    expect(text).toContain('⚠ entity');
  });

  it('stays first and whole while 2,000 creates are cut to fit, with a count of what was cut', () => {
    const md = renderPlanMarkdown(plan(2_000), { diagnostics: [flag], limit: 20_000 });
    expect(md.length).toBeLessThanOrEqual(20_000);
    expect(md.indexOf('- 🔴 delete')).toBeLessThan(md.indexOf('create `svc-0`'));
    expect(md).toMatch(/the field diffs of \d+ creates not shown/);
  });

  it('counts bytes when asked: 4-byte characters never pass the limit', () => {
    const emoji = plan(500);
    for (const c of emoji.changes) c.diff = [{ path: 'info.title', after: '🦀'.repeat(150) }];
    const md = renderPlanMarkdown(emoji, { limit: 50_000, unit: 'bytes' });
    expect(Buffer.byteLength(md, 'utf8')).toBeLessThanOrEqual(50_000);
    expect(md).toContain('- 🔴 delete');
  });
});

describe('the drift comment', () => {
  it('names every delete and archive new since the review, first, however many creates came too', () => {
    const creates = Array.from({ length: 300 }, (_, i) => ({
      key: `entity/svc-${i}`,
      action: 'create',
      hash: '0'.repeat(20),
    }));
    const body = driftCommentBody({
      label: { sourceId: 'example-catalog', dir: 'catalog' },
      reviewedDigest: `sha256:${'ab'.repeat(32)}`,
      currentDigest: `sha256:${'cd'.repeat(32)}`,
      difference: {
        added: [...creates, { key: 'entity/payments-api', action: 'archive', hash: '1'.repeat(20) }],
        removed: [],
        changed: [],
      },
      applied: false,
      sha: 'f'.repeat(40),
    });
    const archived = body.indexOf('- archive `entity/payments-api`');
    expect(archived).toBeGreaterThan(0);
    expect(archived).toBeLessThan(body.indexOf('- create `entity/svc-0`'));
    expect(body).toContain('- … and 251 more');
  });
});
