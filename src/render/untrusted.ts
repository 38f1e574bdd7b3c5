/**
 * Strings a repository controls (ids, names, titles, file names, field paths, values, diagnostic
 * and API messages) as GitHub-flavoured Markdown, for every Markdown surface: the plan
 * (`plan --output markdown`, pasted into pull requests and job summaries), the Action's comments
 * and its job summary (pure). Whatever
 * they hold, the result shows their printable form (`printable()`: control and invisible
 * characters escaped) and can never form a hidden marker or any HTML comment (`<!--`), HTML, a
 * mention (`@user`, `@org/team`), an issue reference (`#12`), a link, an autolink or an image.
 *
 * - `untrustedCode`: a code span (GitHub neither links nor mentions inside code); `<!` gets an
 *   invisible U+200B between its characters, since a code span shows everything literally and a
 *   `<!--` in the raw text would still read as a marker to a parser. Printable() has already
 *   escaped any U+200B of the input, so the only raw ones are these. `printedCode` does the same
 *   for text already printable (a value as `formatValue` writes it).
 * - `untrustedText`: running text; HTML specials become entities, Markdown punctuation is
 *   backslash-escaped, and `&#8203;` (a zero-width space) breaks `@name`, `#12`, `GH-12`,
 *   `scheme://` and `www.` so GitHub neither mentions, references nor links.
 * - `untrustedMessage`: a message whose `` `quoted` `` parts become code spans.
 */
import { printable } from '../core/printable.js';

/** Longest identity or path shown (characters of its printable form) before it is cut with `…`. */
export const NAME_LIMIT = 200;

const cut = (s: string, max: number): string => {
  const chars = Array.from(s);
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : s;
};

/**
 * A code span safe inside a table cell: the fence is longer than any backtick run inside, pipes
 * are escaped (GFM applies `\|` before inline parsing), newlines become spaces. For our own text;
 * a repository's goes through `untrustedCode`.
 */
export const code = (text: string): string => {
  const body = text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = body.startsWith('`') || body.endsWith('`') || body === '' ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
};

const ZWSP = '\u200b';
const ZWSP_ENTITY = '&#8203;';

/** `s` as a code span of at most `max` characters. */
export const untrustedCode = (s: string, max = NAME_LIMIT): string => printedCode(printable(s), max);

/**
 * Text already in printable form (`formatValue`'s JSON of a value, whose backslashes are its own
 * escapes) as a code span of at most `max` characters: cut, and no `<!`; nothing escaped twice.
 */
export const printedCode = (printed: string, max = NAME_LIMIT): string =>
  code(cut(printed, max).replace(/<!/g, `<${ZWSP}!`));

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
