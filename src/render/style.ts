/**
 * Colour for terminal renderers: `node:util` `styleText`, applied only when the caller says so
 * (the caller decides from TTY and `NO_COLOR`). Without colour the text is returned unchanged.
 */
import { styleText } from 'node:util';
import { isPrintable } from '../core/printable.js';

export type Style = Parameters<typeof styleText>[0];
/** One format name (`'red'`, `'bold'`), not a list. */
export type StyleName = Exclude<Style, readonly unknown[]>;

/** Returns a painter: `paint(style, text)` styles `text` when `color` is true, else returns it as is. */
export function painter(color: boolean): (style: Style, text: string) => string {
  if (!color) return (_style, text) => text;
  return (style, text) => styleText(style, text, { validateStream: false });
}

/**
 * Compact JSON of one value for a plan line (`"a"`, `["tier-0"]`, `{"k":1}`). JSON escapes the C0
 * controls already; what else `printable()` would escape (DEL, C1 controls, bidirectional and
 * zero-width characters, line separators) is written as a JSON `\uXXXX` escape too, so a value
 * can neither start a line nor hide text, and still reads as JSON.
 */
export function formatValue(value: unknown): string {
  if (value === undefined) return '(none)';
  // `undefined` only for values JSON cannot hold (functions, symbols), which manifests never have.
  return escapedJson(JSON.stringify(value) ?? typeof value);
}

/**
 * Text whose backslashes are its own escapes (JSON, or a field path whose keys `joinPath` wrote
 * as JSON strings: `rules["a\\d"]`) made printable without escaping them again: what else
 * `printable()` would escape is written as `\uXXXX`.
 */
function escapedJson(json: string): string {
  if (isPrintable(json)) return json;
  return Array.from(json, (ch) =>
    ch !== '\\' && !isPrintable(ch) ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : ch,
  ).join('');
}

/** A field path of a diff as printed: its JSON-written keys' escapes kept, nothing escaped twice. */
export const printedPath = (path: string): string => (path === '' ? '(value)' : escapedJson(path));
