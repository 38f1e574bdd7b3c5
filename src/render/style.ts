/**
 * Colour for terminal renderers: `node:util` `styleText`, applied only when the caller says so
 * (the caller decides from TTY and `NO_COLOR`). Without colour the text is returned unchanged.
 */
import { styleText } from 'node:util';

export type Style = Parameters<typeof styleText>[0];
/** One format name (`'red'`, `'bold'`), not a list. */
export type StyleName = Exclude<Style, readonly unknown[]>;

/** Returns a painter: `paint(style, text)` styles `text` when `color` is true, else returns it as is. */
export function painter(color: boolean): (style: Style, text: string) => string {
  if (!color) return (_style, text) => text;
  return (style, text) => styleText(style, text, { validateStream: false });
}

/** Compact JSON of one value for a plan line (`"a"`, `["tier-0"]`, `{"k":1}`). */
export function formatValue(value: unknown): string {
  if (value === undefined) return '(none)';
  // `undefined` only for values JSON cannot hold (functions, symbols), which manifests never have.
  return JSON.stringify(value) ?? typeof value;
}
