/** Diagnostics for a terminal: `file:line:col: error: message [code]`, sorted by file and position. */
import type { Diagnostic } from '../core/model.js';
import { printable, printableOnce } from '../core/printable.js';
import { codeFrame, firstSyntaxErrors } from './code-frame.js';
import { painter } from './style.js';

/** Sorts diagnostics by file (located ones first), line, column, then code and message. */
export function sortDiagnostics(diags: readonly Diagnostic[]): Diagnostic[] {
  return [...diags].sort((a, b) => {
    if (a.file !== b.file) {
      if (a.file === undefined) return 1;
      if (b.file === undefined) return -1;
      return a.file < b.file ? -1 : 1;
    }
    const byLine = (a.line ?? 0) - (b.line ?? 0);
    if (byLine !== 0) return byLine;
    const byColumn = (a.column ?? 0) - (b.column ?? 0);
    if (byColumn !== 0) return byColumn;
    if (a.code !== b.code) return a.code < b.code ? -1 : 1;
    return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
  });
}

/** The location prefix of a diagnostic: `file:line:col`, `file:line`, `file`, or empty. */
export function locationOf(d: Diagnostic): string {
  if (d.file === undefined) return '';
  const file = printable(d.file);
  if (d.line === undefined) return file;
  return d.column === undefined ? `${file}:${d.line}` : `${file}:${d.line}:${d.column}`;
}

/**
 * One line per diagnostic, each ending with a newline; empty string when there are none. With
 * `source` (a manifest's text by its relative path), YAML syntax errors are reduced to the first
 * real one per file and shown with their line and a caret.
 */
export function renderDiagnostics(
  diags: readonly Diagnostic[],
  options: { color: boolean; source?: (file: string) => string | undefined },
): string {
  const paint = painter(options.color);
  const source = options.source;
  const shown = source ? firstSyntaxErrors(diags, source) : diags;
  return sortDiagnostics(shown)
    .map((d) => {
      const where = locationOf(d);
      const severity = paint([d.severity === 'error' ? 'red' : 'yellow', 'bold'], `${d.severity}:`);
      const prefix = where === '' ? '' : `${paint('bold', where)}: `;
      const frame = source && d.code === 'yaml-syntax' ? codeFrame(d, source).map((l) => `${paint('dim', l)}\n`) : [];
      return `${prefix}${severity} ${printableOnce(d.message)} ${paint('dim', `[${printable(d.code)}]`)}\n${frame.join('')}`;
    })
    .join('');
}
