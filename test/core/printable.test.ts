import { describe, expect, it } from 'vitest';
import { isPrintable, printable } from '../../src/core/printable.js';

describe('printable', () => {
  it('leaves ordinary text, Unicode letters and emoji alone', () => {
    for (const s of ['payments-api', 'Équipe Paiements', '支付服务', 'Readiness 🚀', 'a b/c:d']) {
      expect(printable(s)).toBe(s);
      expect(isPrintable(s)).toBe(true);
    }
  });

  it('keeps a name from starting a new line of a CI log (a GitHub workflow command)', () => {
    const name = 'Readiness\n::error file=.github/workflows/deploy.yml,line=3::boom';
    const shown = printable(name);
    expect(shown).not.toContain('\n');
    expect(shown).toBe('Readiness\\n::error file=.github/workflows/deploy.yml,line=3::boom');
    expect(printable('a\r\nb\u2028c\u2029d')).toBe('a\\r\\nb\\u2028c\\u2029d');
  });

  it('escapes ANSI escapes, DEL and C1 controls, so a name cannot move the cursor or erase a line', () => {
    expect(printable('\u001b[2K\u001b[1Aok')).toBe('\\x1b[2K\\x1b[1Aok');
    expect(printable('a\u007fb\u009bc')).toBe('a\\x7fb\\x9bc');
  });

  it('escapes bidirectional overrides and zero-width characters that make text read differently', () => {
    expect(printable('abc\u202edcba')).toBe('abc\\u202edcba');
    expect(printable('pay\u200bments')).toBe('pay\\u200bments');
    expect(printable('\ufeffx')).toBe('\\ufeffx');
  });

  it('escapes the backslash, so an escaped name cannot pass for another name', () => {
    expect(printable('a\\nb')).toBe('a\\\\nb');
    expect(printable('a\\nb')).not.toBe(printable('a\nb'));
    expect(isPrintable('a\\b')).toBe(false);
  });
});
