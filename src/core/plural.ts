/**
 * Counts with their noun, in English: `1 object`, `0 objects`, `2 entities`, `1 write request`.
 * Every count a user reads goes through here, so no message says `1 object(s)` or `1500 entity`.
 * Pure.
 */

/** The plural of an English noun (the last word of a phrase): `entity` → `entities`, `file` → `files`. */
export const pluralOf = (noun: string): string => {
  if (/[^aeiou]y$/i.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/i.test(noun)) return `${noun}es`;
  return `${noun}s`;
};

/** The noun for `n`: singular for exactly one, plural otherwise (`0 files`). */
const nounFor = (n: number, singular: string, plural: string = pluralOf(singular)): string =>
  n === 1 ? singular : plural;

/** `n` and its noun: `1 change`, `3 changes`, `0 changes`. */
export const countOf = (n: number, singular: string, plural?: string): string => `${n} ${nounFor(n, singular, plural)}`;
