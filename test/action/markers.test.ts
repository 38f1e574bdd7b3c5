/**
 * The plan comment's markers are read only from its trailer, exactly once; whatever a repository
 * puts in an id, a file name or a message, the comment shows it and can never form a marker, an
 * HTML comment, a link, an image or a mention.
 */
import { type Token, lexer } from 'marked';
import { describe, expect, it } from 'vitest';
import { COMMENT_LIMIT, renderPlanComment } from '../../src/action/comment.js';
import { fingerprints, planDigest } from '../../src/action/digest.js';
import { planTrailer, readPlanComment, stickyMarker, visibleTextDigest } from '../../src/action/markers.js';
import { stickyCommentBody } from '../../src/action/messages.js';
import { untrustedCode, untrustedMessage, untrustedText } from '../../src/render/untrusted.js';
import type { Change, Diagnostic, Plan } from '../../src/core/model.js';

const MARKER = stickyMarker('example-catalog', 'catalog');
const DIGEST = `sha256:${'ab'.repeat(32)}`;
const OTHER = `sha256:${'cd'.repeat(32)}`;

const change = (over: Partial<Change> & Pick<Change, 'kind' | 'id' | 'action'>): Change => ({
  diff: [],
  waitsFor: [],
  ...over,
});
const plan = (changes: Change[], inventory?: Plan['inventory']): Plan => {
  const summary = { create: 0, update: 0, delete: 0, archive: 0, noop: 0 };
  for (const c of changes) summary[c.action] += 1;
  return { changes, diagnostics: [], summary, ...(inventory ? { inventory } : {}) };
};

const HOSTILE = [
  `<!-- cortex-sync:digest v2 ${OTHER} -->`,
  `<!-- cortex-sync:changes v2 AwA= -->`,
  `<!-- cortex-sync:plan source=example-catalog dir=catalog -->`,
  '@octocat and @example/platform-team',
  '#1 and GH-2 and example/catalog#3',
  '[click](https://evil.example) ![x](https://evil.example/x.png) <https://evil.example> www.evil.example',
  '<img src=x onerror=alert(1)> <details open> </code>``` `',
  'line one\n<!-- cortex-sync:digest v2 x -->\r\nline three',
  '<\u200b!-- zero width -->',
  '\uff1c!-- cortex-sync:digest v2 full width --\uff1e',
  'Readiness\n::error file=.github/workflows/deploy.yml::x\u001b[2K',
  '$x$ ~~strike~~ *em* _em_ | pipe \\ backslash',
];

const hostilePlan = (): Plan =>
  plan(
    HOSTILE.map((name, i) =>
      change({
        kind: i % 2 ? 'initiative' : 'entity',
        id: name,
        action: i % 3 ? 'create' : 'update',
        source: `.cortex/catalog/${name}.yaml`,
        line: 1,
        reason: `because \`${name}\` and ${name}`,
        diff: [{ path: name, before: name, after: `${name}!` }],
      }),
    ),
  );
const hostileDiagnostics: Diagnostic[] = HOSTILE.map((name) => ({
  severity: 'warning',
  code: 'unknown-key',
  message: `key \`${name}\` is unknown: ${name}`,
  file: `.cortex/catalog/${name}.yaml`,
  line: 2,
}));

const commentOf = (p: Plan, diagnostics: Diagnostic[] = []) =>
  stickyCommentBody({
    marker: MARKER,
    label: { sourceId: HOSTILE[0] ?? '', dir: 'catalog' },
    renderPlan: (limit) => renderPlanComment(p, diagnostics, { title: 'cortex-sync plan for catalog', limit }),
    digest: planDigest(p),
    fingerprints: fingerprints(p),
  });

const allTokens = (tokens: Token[]): Token[] =>
  tokens.flatMap((t) => [
    t,
    ...allTokens('tokens' in t && Array.isArray(t.tokens) ? t.tokens : []),
    ...('rows' in t && Array.isArray(t.rows)
      ? (t.rows as { tokens: Token[] }[][]).flat().flatMap((c) => allTokens(c.tokens))
      : []),
    ...('header' in t && Array.isArray(t.header)
      ? (t.header as { tokens: Token[] }[]).flatMap((c) => allTokens(c.tokens))
      : []),
  ]);

describe('reading a plan comment', () => {
  const STEPS = [{ key: 'entity/a', action: 'create', hash: '0123456789abcdef0123' }];
  /** A comment as the Action writes it: its visible text bound by the trailer. */
  const commentWith = (visible: string) =>
    `${MARKER}\n${visible}${planTrailer(DIGEST, visibleTextDigest(visible), STEPS)}`;
  const genuine = commentWith('### plan\n\ntext\n');

  it('reads the digest and the steps from the trailer of a comment the Action wrote', () => {
    expect(readPlanComment(genuine, MARKER)).toEqual({
      status: 'reviewed',
      plan: { digest: DIGEST, changes: [{ key: 'entity/a', action: 'create', hash: '0123456789abcdef0123' }] },
    });
    // A comment edited in the UI comes back with CRLF line ends.
    expect(readPlanComment(genuine.replace(/\n/g, '\r\n'), MARKER).status).toBe('reviewed');
    expect(readPlanComment(`${MARKER}\n### plan: invalid manifests\n`, MARKER)).toEqual({ status: 'no-digest' });
  });

  const unreadable: [string, string][] = [
    ['a marker above the trailer', genuine.replace('text', `<!-- cortex-sync:digest v2 ${OTHER} -->`)],
    ['a second digest in the trailer', `${genuine}<!-- cortex-sync:digest v2 ${OTHER} -->\n`],
    ['text after the digest', `${MARKER}\ntext\n<!-- cortex-sync:digest v2 ${DIGEST} -->\nmore text\n`],
    ['an HTML comment anywhere', genuine.replace('text', '<!-- a note -->')],
    ['markers of another version', `${MARKER}\ntext\n<!-- cortex-sync:digest ${DIGEST} -->\n`],
    ['a malformed digest', `${MARKER}\ntext\n<!-- cortex-sync:digest v2 sha256:xyz -->\n`],
    [
      'unreadable steps',
      `${MARKER}\ntext\n${planTrailer(DIGEST, visibleTextDigest('text'))}<!-- cortex-sync:changes v2 bm90IGRlZmxhdGU= -->\n`,
    ],
    [
      'another first line',
      `${stickyMarker('other', 'catalog')}\ntext\n${planTrailer(DIGEST, visibleTextDigest('text'))}`,
    ],
    // The visible text is bound by the trailer: an edit that keeps the first line and the trailer is seen.
    ['its visible text edited (a line removed)', genuine.replace('\ntext\n', '\n')],
    ['its visible text edited (a word changed)', genuine.replace('text', 'texts')],
    ['no digest of its visible text', `${MARKER}\ntext\n<!-- cortex-sync:digest v2 ${DIGEST} -->\n`],
  ];
  for (const [what, body] of unreadable)
    it(`does not read a comment with ${what}`, () => {
      expect(readPlanComment(body, MARKER).status).toBe('unreadable');
    });

  it('is not fooled by look-alike or zero-width-broken markers in the text (they are not markers)', () => {
    const body = commentWith(
      `\uff1c!-- cortex-sync:digest v2 ${OTHER} --\uff1e <\u200b!-- cortex-sync:digest v2 ${OTHER} -->\n`,
    );
    expect(readPlanComment(body, MARKER)).toMatchObject({ status: 'reviewed', plan: { digest: DIGEST } });
  });
});

describe('repository-controlled strings in a comment', () => {
  it('never form a marker or an HTML comment: only the first line and the trailer hold one', () => {
    const p = hostilePlan();
    const body = commentOf(p, hostileDiagnostics);
    expect(body.split('<!--')).toHaveLength(1 + 4); // the first line; the digest, text and changes lines
    expect(readPlanComment(body, MARKER)).toEqual({
      status: 'reviewed',
      plan: { digest: planDigest(p), changes: fingerprints(p) },
    });
  });

  it('render as text: no link, image, autolink or HTML but the Action’s own, and no mention or issue reference', () => {
    const body = commentOf(hostilePlan(), hostileDiagnostics);
    const tokens = allTokens(lexer(body, { gfm: true }));
    expect(tokens.filter((t) => t.type === 'link' || t.type === 'image')).toEqual([]);
    const html = tokens.filter((t) => t.type === 'html').map((t) => t.raw.trim());
    for (const h of html) expect(h).toMatch(/^(<!-- cortex-sync:[^\n]*-->|<\/?details>|<summary>.*<\/summary>)/s);
    // Outside code spans, every @ and # before a name or number is broken by a zero-width space.
    const prose = body.replace(/(`+)[^`]*?\1/g, '');
    expect(prose).not.toMatch(/@[A-Za-z0-9]/);
    expect(prose).not.toMatch(/(?<!&)#[0-9]/);
    expect(body).not.toContain('\u001b');
  });

  it('keeps a comment with a name near the size limit under GitHub’s limit, still readable', () => {
    const p = plan([change({ kind: 'initiative', id: `${'N'.repeat(70_000)}`, action: 'create' })]);
    const body = commentOf(p, [{ severity: 'warning', code: 'x', message: 'm'.repeat(70_000) }]);
    expect(body.length).toBeLessThan(COMMENT_LIMIT);
    expect(readPlanComment(body, MARKER).status).toBe('reviewed');
  });

  it('untrustedCode, untrustedText and untrustedMessage keep `<!--` out of the raw text', () => {
    for (const s of HOSTILE) {
      for (const out of [untrustedCode(s), untrustedText(s), untrustedMessage(s)]) {
        expect(out).not.toContain('<!--');
        for (const control of ['\n', '\r', '\u001b']) expect(out).not.toContain(control);
      }
    }
    expect(untrustedText('@example/platform-team')).toBe('@&#8203;example/platform-team');
    expect(untrustedText('see https://evil.example')).toBe('see https\\:&#8203;//evil.example');
  });
});

describe('the digest reviews every action and flag', () => {
  const base = change({ kind: 'entity', id: 'x', action: 'update', diff: [{ path: 'p', before: 1, after: 2 }] });
  const variants: [string, Change][] = [
    ['unarchive', { ...base, unarchive: true }],
    ['adopt', { ...base, adopt: true }],
    ['reason (a takeover)', { ...base, reason: 'take over from `repo-b`' }],
    ['a flag added later', { ...base, takeover: true } as Change],
  ];
  for (const [what, variant] of variants)
    it(`differs for ${what}`, () => {
      expect(planDigest(plan([variant]))).not.toBe(planDigest(plan([base])));
      expect(fingerprints(plan([variant]))[0]?.hash).not.toBe(fingerprints(plan([base]))[0]?.hash);
    });

  it('includes the writes of the ownership record', () => {
    const write = {
      phase: 'after' as const,
      id: 'cortex-sync-inventory-x',
      action: 'update' as const,
      add: [],
      remove: ['catalog-page/databases' as const],
      reason: 'r',
    };
    const withRecord = plan([], [write]);
    expect(planDigest(withRecord)).not.toBe(planDigest(plan([])));
    expect(fingerprints(withRecord)).toEqual([
      expect.objectContaining({ key: 'inventory/cortex-sync-inventory-x@after', action: 'update' }),
    ]);
    expect(planDigest(plan([], [{ ...write, remove: ['catalog-page/other'] }]))).not.toBe(planDigest(withRecord));
  });
});

describe('a plan comment of invalid manifests', () => {
  it('stays under GitHub’s limit whatever the diagnostics hold', () => {
    const huge = `### invalid\n\n${Array.from({ length: 60 }, (_, i) => `- problem ${i}: ${'x'.repeat(2_000)}`).join('\n')}\n`;
    const body = stickyCommentBody({ marker: MARKER, label: { sourceId: 's', dir: '.' }, renderPlan: () => huge });
    expect(body.length).toBeLessThan(COMMENT_LIMIT);
    expect(readPlanComment(body, MARKER)).toEqual({ status: 'no-digest' });
  });
});
