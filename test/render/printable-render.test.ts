/** The terminal renderers print repository-controlled strings escaped, values still as JSON. */
import { describe, expect, it } from 'vitest';
import { codeFrame } from '../../src/render/code-frame.js';
import { renderDiagnostics } from '../../src/render/diagnostics.js';
import { formatValue } from '../../src/render/style.js';

describe('printable renderers', () => {
  it('a value keeps JSON escapes and gets \\u escapes for what JSON leaves raw (bidi, C1, line separators)', () => {
    expect(formatValue('a\nb')).toBe('"a\\nb"');
    expect(formatValue('pay\u202eyap\u0085\u2028')).toBe('"pay\\u202eyap\\u0085\\u2028"');
    expect(formatValue({ 'k\u200b': ['\u007f'] })).toBe('{"k\\u200b":["\\u007f"]}');
    expect(JSON.parse(formatValue('pay\u202eyap'))).toBe('pay\u202eyap');
  });

  it('a diagnostic’s file, message and code are escaped', () => {
    const text = renderDiagnostics(
      [{ severity: 'error', code: 'x\n', message: 'bad\r\n::error::y', file: 'a\u001b[2K.yaml', line: 1, column: 1 }],
      { color: false },
    );
    expect(text).toBe('a\\x1b[2K.yaml:1:1: error: bad\\r\\n::error::y [x\\n]\n');
  });

  it('a code frame shows the line escaped, the caret under the same character', () => {
    const source = () => 'k: "\u001b[2K" : x\n';
    const frame = codeFrame(
      { severity: 'error', code: 'yaml-syntax', message: 'm', file: 'f', line: 1, column: 11 },
      source,
    );
    expect(frame[0]).toBe('    1 | k: "\\x1b[2K" : x');
    expect(frame[1]?.indexOf('^')).toBe(frame[0]?.indexOf(':', 12));
  });
});
