/**
 * One Markdown renderer for `plan --output markdown` and the Action: every string a repository
 * controls is escaped the Action's strict way in both (the CLI's Markdown is pasted into pull
 * requests and job summaries too), values are JSON escaped once, and the size budget is the
 * caller's.
 */
import { type Token, lexer } from 'marked';
import { describe, expect, it } from 'vitest';
import { renderPlanComment } from '../../src/action/comment.js';
import type { Change, Diagnostic, Plan } from '../../src/core/model.js';
import { renderPlanMarkdown } from '../../src/render/markdown.js';

const HOSTILE =
  '<!-- cortex-sync:digest v2 sha256:00 --> @acme/admins see #12 and https://evil.example [x](https://evil.example)';

const change = (over: Partial<Change> & Pick<Change, 'kind' | 'id' | 'action'>): Change => ({
  diff: [],
  waitsFor: [],
  ...over,
});

const hostilePlan = (): Plan => ({
  changes: [
    change({
      kind: 'entity',
      id: `svc ${HOSTILE}`,
      action: 'update',
      source: `svc/${HOSTILE}/cortex.yaml`,
      line: 2,
      reason: `manifest says ${HOSTILE}`,
      waitsFor: [`entity-type/${HOSTILE}`],
      diff: [{ path: `info.${HOSTILE}`, before: HOSTILE, after: `${HOSTILE}\n"quoted"` }],
    }),
  ],
  diagnostics: [],
  summary: { create: 0, update: 1, delete: 0, archive: 0, noop: 0 },
});

const diagnostics: Diagnostic[] = [
  { severity: 'warning', code: `code ${HOSTILE}`, message: `unknown key ${HOSTILE}`, file: `${HOSTILE}.yaml`, line: 1 },
];

/** Text outside code spans (where GitHub neither mentions, references nor links). */
const outsideCode = (md: string): string => md.replace(/(`+)[^`]*?\1/g, '');

describe('the Markdown plan', () => {
  it('escapes every repository string the strict way: no marker, mention, reference or link, in the CLI output too', () => {
    const md = renderPlanMarkdown(hostilePlan(), { diagnostics });
    expect(md).not.toContain('<!--');
    expect(outsideCode(md)).not.toMatch(/@acme/);
    expect(outsideCode(md)).not.toMatch(/#12/);
    expect(outsideCode(md)).not.toMatch(/https:\/\/evil/);
    const links = (tokens: Token[]): Token[] =>
      tokens.flatMap((t) => [
        ...(t.type === 'link' || t.type === 'html' ? [t] : []),
        ...links('tokens' in t && Array.isArray(t.tokens) ? t.tokens : []),
      ]);
    // Only our own HTML (the collapsible sections), no link at all.
    expect(links(lexer(md, { gfm: true })).filter((t) => !/^<\/?(details|summary|b)>/.test(t.raw.trim()))).toEqual([]);
  });

  it('shows a value as JSON escaped once, in a code span that keeps its table cell', () => {
    for (const md of [
      renderPlanMarkdown(hostilePlan()),
      renderPlanComment(hostilePlan(), [], { title: 'cortex-sync plan', limit: 60_000 }),
    ]) {
      expect(md).toContain('\\n\\"quoted\\"');
      expect(md).not.toContain('\\\\n');
      const row = md.split('\n').find((l) => l.startsWith('| `info.'));
      expect(row?.split(/(?<!\\)\|/).length).toBe(5);
    }
  });

  it('is the same for the CLI and the Action, whose comment passes its own budget', () => {
    const long: Plan = {
      changes: Array.from({ length: 300 }, (_, i) =>
        change({ kind: 'entity', id: `svc-${i}`, action: 'create', diff: [{ path: 'd', after: 'x'.repeat(200) }] }),
      ),
      diagnostics: [],
      summary: { create: 300, update: 0, delete: 0, archive: 0, noop: 0 },
    };
    const comment = renderPlanComment(long, [], { title: 'cortex-sync plan', limit: 10_000 });
    expect(comment).toBe(renderPlanMarkdown(long, { title: 'cortex-sync plan', limit: 10_000 }));
    expect(comment.length).toBeLessThanOrEqual(10_000);
    expect(comment).toMatch(
      /This plan is too long to show whole here: the field diffs of \d+ (?:creates|updates) not shown\./,
    );
    expect(renderPlanMarkdown(long).length).toBeGreaterThan(comment.length);
  });
});
