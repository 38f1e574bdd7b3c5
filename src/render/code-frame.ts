/**
 * YAML syntax errors as a terminal shows them: the first one of each file only (the parser's
 * later errors follow from it), moved to the line that is really wrong when a key is indented
 * more than the one above it, and with that line and a caret under the column.
 */
import type { Diagnostic } from '../core/model.js';
import { printable } from '../core/printable.js';

/** The most characters of a source line shown (a line can hold anything; show only its start). */
const SHOWN = 100;

const indentOf = (line: string): number => line.length - line.trimStart().length;

/** `key: value` on one line (not a list item, not a comment). */
const isKeyLine = (line: string): boolean => /^\s*[^\s#-][^:#]*:(\s|$)/.test(line);

/** Where a syntax error really is, and what is wrong there, when the parser points at the line before. */
const overIndentedKey = (lines: readonly string[], line: number): { line: number; column: number } | undefined => {
  const at = lines[line - 1];
  const next = lines[line];
  if (at === undefined || next === undefined || !isKeyLine(at) || !isKeyLine(next)) return undefined;
  return indentOf(next) > indentOf(at) && !/:\s*$/.test(at)
    ? { line: line + 1, column: indentOf(next) + 1 }
    : undefined;
};

/** The diagnostics with YAML syntax errors reduced to the first per file and located on the wrong line. */
export const firstSyntaxErrors = (
  diags: readonly Diagnostic[],
  source: (file: string) => string | undefined,
): Diagnostic[] => {
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  for (const d of diags) {
    if (d.code !== 'yaml-syntax' || d.file === undefined) {
      out.push(d);
      continue;
    }
    if (seen.has(d.file)) continue;
    seen.add(d.file);
    const text = d.line !== undefined ? source(d.file) : undefined;
    const moved = text !== undefined && d.line !== undefined ? overIndentedKey(text.split('\n'), d.line) : undefined;
    out.push(
      moved
        ? {
            ...d,
            ...moved,
            message: `this key is indented more than the key on line ${moved.line - 1}; keys of one mapping must line up (the parser said: ${d.message})`,
          }
        : d,
    );
  }
  return out;
};

/** `   5 | text` and a caret under `column`; empty when the line cannot be shown. */
export const codeFrame = (d: Diagnostic, source: (file: string) => string | undefined): string[] => {
  if (d.file === undefined || d.line === undefined) return [];
  const line = source(d.file)?.split('\n')[d.line - 1];
  if (line === undefined) return [];
  const cut = line.length > SHOWN ? line.slice(0, SHOWN) : line;
  // The line as printed (control characters escaped); the caret under the same character.
  const shown = `${printable(cut)}${cut.length < line.length ? '…' : ''}`;
  const gutter = String(d.line).padStart(5);
  const column = Math.min(Math.max(1, d.column ?? 1), cut.length + 1);
  const caretAt = printable(cut.slice(0, column - 1)).length;
  return [`${gutter} | ${shown}`, `${' '.repeat(gutter.length)} | ${' '.repeat(caretAt)}^`];
};
