/**
 * Where a text stops being one JSON value (RFC 8259), as a line and column, and never what is
 * there: the runtime's `JSON.parse` message quotes the text around the error, and a payload may
 * be a secret. Iterative (no recursion), so any depth of nesting is answered. Pure.
 */

/** 1-based line and column (in UTF-16 code units) of `offset` in `text`. */
const lineColumn = (text: string, offset: number): { line: number; column: number } => {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line += 1;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
};

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// A string's body: anything but `"`, `\` and controls, or an escape.
// eslint-disable-next-line no-control-regex -- a JSON string may not hold control characters
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const LITERAL = /true|false|null/y;

/** The offset of the first character where `text` is not one JSON value, or undefined when it is. */
export const jsonErrorOffset = (text: string): number | undefined => {
  let i = 0;
  const skip = (): void => {
    while (i < text.length && WHITESPACE.has(text[i] as string)) i += 1;
  };
  const match = (re: RegExp): boolean => {
    re.lastIndex = i;
    if (!re.test(text)) return false;
    i = re.lastIndex;
    return true;
  };
  // What each open container expects next: a value, a key, or a `,`/closer.
  const stack: ('[' | '{')[] = [];
  let expect: 'value' | 'key' | 'after' = 'value';
  for (;;) {
    skip();
    const ch = text[i];
    if (expect === 'value') {
      if (ch === '[' || ch === '{') {
        stack.push(ch);
        i += 1;
        skip();
        if (text[i] === (ch === '[' ? ']' : '}')) {
          stack.pop();
          i += 1;
          expect = 'after';
        } else expect = ch === '[' ? 'value' : 'key';
        continue;
      }
      if (!(match(STRING) || match(NUMBER) || match(LITERAL))) return i;
      expect = 'after';
      continue;
    }
    if (expect === 'key') {
      if (!match(STRING)) return i;
      skip();
      if (text[i] !== ':') return i;
      i += 1;
      expect = 'value';
      continue;
    }
    const open = stack.at(-1);
    if (open === undefined) return i < text.length ? i : undefined;
    if (ch === ',') {
      i += 1;
      expect = open === '[' ? 'value' : 'key';
    } else if (ch === (open === '[' ? ']' : '}')) {
      stack.pop();
      i += 1;
    } else return i;
  }
};

/** `line 2, column 11` where `text` stops being one JSON value, or undefined when it is one. */
export const jsonErrorAt = (text: string): string | undefined => {
  const offset = jsonErrorOffset(text);
  if (offset === undefined) return undefined;
  const { line, column } = lineColumn(text, offset);
  return `line ${line}, column ${column}`;
};
