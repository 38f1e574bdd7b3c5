import { expect, it } from 'vitest';
import { jsonErrorAt, jsonErrorOffset } from '../../src/webhook-route/json-error-at.js';

const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

const CASES = [
  '{}',
  '[]',
  ' 1 ',
  '-0.5e+3',
  '"a\\u00e9\\n"',
  '{"a": [1, {"b": null}], "c": true}',
  '',
  ' ',
  '{',
  '[1,]',
  '{"a":1,}',
  '01',
  '1.',
  '.5',
  '+1',
  '"\\x"',
  '"\u0001"',
  'tru',
  'nul',
  '[1 2]',
  '{"a" 1}',
  '{a: 1}',
  '"a" "b"',
  '\uFEFF{}',
  '[\n1,\n]',
  "'a'",
  'NaN',
  '1e',
  '"\\ud800"',
  '[[[]]]',
];

it('agrees with JSON.parse on what is one JSON value, on chosen and random texts', () => {
  for (const text of CASES) expect(jsonErrorOffset(text) === undefined, JSON.stringify(text)).toBe(parses(text));
  const alphabet = ['{', '}', '[', ']', ',', ':', '"', '\\', 'a', '1', '-', '.', 'e', ' ', '\n', 'true', 'null', 'u'];
  let seed = 7;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  for (let n = 0; n < 20_000; n++) {
    const text = Array.from({ length: next() % 12 }, () => alphabet[next() % alphabet.length]).join('');
    expect(jsonErrorOffset(text) === undefined, JSON.stringify(text)).toBe(parses(text));
  }
});

it('says the line and column, and answers any depth', () => {
  expect(jsonErrorAt('{"a": 1,\n  "b": x}')).toBe('line 2, column 8');
  expect(jsonErrorAt('[1]')).toBeUndefined();
  expect(jsonErrorAt('['.repeat(200_000) + ']'.repeat(200_000))).toBeUndefined();
});
