/**
 * Strings a repository controls (ids, names, titles, file names, field paths, values, diagnostic
 * and API messages) as GitHub-flavoured Markdown for a comment or a job summary (pure). Whatever
 * they hold, the result shows their printable form (`printable()`: control and invisible
 * characters escaped) and can never form a hidden marker or any HTML comment (`<!--`), HTML, a
 * mention (`@user`, `@org/team`), an issue reference (`#12`), a link, an autolink or an image.
 *
 * - `untrustedCode`: a code span (GitHub neither links nor mentions inside code); `<!` gets an
 *   invisible U+200B between its characters, since a code span shows everything literally and a
 *   `<!--` in the raw text would still read as a marker to a parser. Printable() has already
 *   escaped any U+200B of the input, so the only raw ones are these.
 * - `untrustedText`: running text; HTML specials become entities, Markdown punctuation is
 *   backslash-escaped, and `&#8203;` (a zero-width space) breaks `@name`, `#12`, `GH-12`,
 *   `scheme://` and `www.` so GitHub neither mentions, references nor links.
 * - `untrustedMessage`: a message whose `` `quoted` `` parts become code spans.
 */
import { printable } from '../core/printable.js';
import { code } from '../render/markdown.js';

/** Longest identity or path shown (characters of its printable form) before it is cut with `…`. */
export const NAME_LIMIT = 200;

const cut = (s: string, max: number): string => {
  const chars = Array.from(s);
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : s;
};

const ZWSP = '\u200b';
const ZWSP_ENTITY = '&#8203;';

/** `s` as a code span of at most `max` characters. */
export const untrustedCode = (s: string, max = NAME_LIMIT): string =>
  code(cut(printable(s), max).replace(/<!/g, `<${ZWSP}!`));

const HTML: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

/** `s` as running text of at most `max` characters. */
export const untrustedText = (s: string, max = 2_000): string =>
  cut(printable(s), max)
    .replace(/[&<>"]/g, (ch) => HTML[ch] ?? ch)
    .replace(/[\\`*_[\]{}()|~!$:^#]/g, '\\$&')
    .replace(/@(?=[\p{L}\p{N}_-])/gu, `@${ZWSP}`)
    .replace(/#(?=\p{N})/gu, `#${ZWSP}`)
    .replace(/\b(gh)-(?=\p{N})/giu, `$1${ZWSP}-`)
    .replace(/\\:\/\//g, `\\:${ZWSP}//`)
    .replace(/\b(www)\./giu, `$1${ZWSP}.`)
    .replaceAll(ZWSP, ZWSP_ENTITY);

/** A message: `` `quoted` `` parts as code spans, the rest as running text. */
export const untrustedMessage = (s: string, max = 2_000): string =>
  cut(s, max)
    .split(/(`[^`\n]*`)/)
    .map((part) =>
      part.length >= 2 && part.startsWith('`') && part.endsWith('`')
        ? untrustedCode(part.slice(1, -1))
        : untrustedText(part, max),
    )
    .join('');
