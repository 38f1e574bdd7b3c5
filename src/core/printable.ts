/**
 * A string from the repository (an id, a title, a file name, an Initiative name) made safe to
 * print on one line of a terminal, a CI log or an annotation: control characters (C0, DEL, C1:
 * newlines, ANSI escapes, the carriage return that overwrites a line) and the invisible
 * formatting characters that reorder or hide text (bidirectional overrides and isolates,
 * zero-width characters, the byte-order mark) are written as `\n`, `\x1b`, `\u202e`, …, and a
 * backslash as `\\`, so the printed text can neither start a new line (a GitHub workflow command
 * such as `::error`), move the cursor, nor look like anything other than what it is.
 */

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };

// C0 controls, DEL, C1 controls, soft hyphen, Arabic letter mark, zero-width and directional
// marks, line/paragraph separators, bidi embeddings/overrides/isolates, word joiners and
// invisible operators, the byte-order mark / zero-width no-break space, interlinear annotations.
const UNPRINTABLE =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\\\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

const escapeOne = (ch: string): string =>
  NAMED[ch] ??
  (ch.charCodeAt(0) <= 0xff
    ? `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`
    : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** `s` with every control and invisible formatting character escaped (see the module comment). */
export const printable = (s: string): string => (UNPRINTABLE.test(s) ? s.replace(UNPRINTABLE, escapeOne) : s);

/** Whether `s` prints as itself. */
export const isPrintable = (s: string): boolean => !new RegExp(UNPRINTABLE.source).test(s);

/**
 * `s` made printable unless it already is, backslashes aside: a message that quotes a string
 * already passed through `printable()` (`\n` written as two characters) prints as it is, not as
 * `\\n`, which would say the string holds a backslash. A message holding any control or invisible
 * character is escaped whole.
 */
export const printableOnce = (s: string): string => (isPrintable(s.replaceAll('\\', '')) ? s : printable(s));
