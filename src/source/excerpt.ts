/**
 * Messages quote values from manifests (`got 'team'`, ``unknown key `x` ``). A value can be
 * anything a file holds — a pasted secret, a whole line of another file — so no message quotes more
 * than a short excerpt of it.
 */

/** The most characters of a value a message quotes. */
const MAX_EXCERPT = 60;

/** `value` cut to `max` characters, marked with `...` when cut. */
export const excerpt = (value: string, max: number = MAX_EXCERPT): string =>
  value.length > max ? `${value.slice(0, max - 3)}...` : value;

/**
 * Cuts every quoted run in a message (between backticks, double quotes, or single quotes that
 * open and close at a word boundary, so `doesn't` is not a quote) to `max` characters.
 */
export const capQuotedValues = (message: string, max: number = MAX_EXCERPT): string =>
  message
    .replace(/`([^`]*)`/g, (_, inner: string) => `\`${excerpt(inner, max)}\``)
    .replace(/"([^"]*)"/g, (_, inner: string) => `"${excerpt(inner, max)}"`)
    .replace(
      /(^|[^\p{L}\p{N}_])'([^']*)'(?=$|[^\p{L}\p{N}_])/gu,
      (_, before: string, inner: string) => `${before}'${excerpt(inner, max)}'`,
    );
