/**
 * Building blocks of canonical forms: the comparable form a kind computes the same way for a
 * manifest and for what the API answers, so that equal forms mean "nothing to do". Pure.
 *
 * A canonical form is also what a saved plan's digest and a review's binding cover: how a form
 * writes a part (its key order, `null` or left out, the order of a set) is part of every saved
 * plan. So the kinds' differing choices stay as they were, stated once per kind through the
 * `empty` option below, and the pins in `test/kinds/shared/canonical-pins.test.ts` fail on any change.
 */
import type { JsonObject, JsonValue } from '../../core/model.js';

/** Strings in code-unit order (as `Array.prototype.sort` and `<` order them), never the locale's. */
export const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Names compared as a set: each once, in code-unit order; absent and `null` are the empty set. */
export const sortedSet = (values: readonly string[] | null | undefined): string[] =>
  [...new Set(values ?? [])].sort(byCodeUnit);

/**
 * Items compared as a set by a key (levels by rank, rules by expression): the first item of each
 * key, in the order given (a server that repeats one: the first counts), sorted by key, numbers as
 * numbers and strings in code-unit order.
 */
export const uniqueSortedBy = <T, K extends string | number>(
  items: readonly T[] | null | undefined,
  keyOf: (item: T) => K,
): T[] => {
  const first = new Map<K, T>();
  for (const item of items ?? []) if (!first.has(keyOf(item))) first.set(keyOf(item), item);
  return [...first.entries()]
    .sort(([a], [b]) => (typeof a === 'number' && typeof b === 'number' ? a - b : byCodeUnit(String(a), String(b))))
    .map(([, item]) => item);
};

/** A text as compared: absent, `null` and `''` are the same, written `null`. */
export const textOrNull = (value: string | null | undefined): string | null => (value ? value : null);

/** `{ [key]: value }`, or nothing for `null` and `undefined`: a part left out of the form rather than written `null`. */
export const entry = (key: string, value: JsonValue | null | undefined): JsonObject =>
  value === null || value === undefined ? {} : { [key]: value };

/**
 * What a form writes for a part with nothing in it: `null` (the part is shown, as cleared) or
 * `undefined` (the part is left out). Each kind has always written its own way, and changing it
 * would change its saved plans' digests, so each states it where it builds its form.
 */
export interface EmptyAs<E extends null | undefined> {
  empty: E;
}

/** `object`, or `options.empty` when it has no key. */
export const nonEmpty = <E extends null | undefined>(object: JsonObject, options: EmptyAs<E>): JsonObject | E =>
  Object.keys(object).length > 0 ? object : options.empty;

/** `{include, exclude}` name lists (entity types, groups) as compared. */
export interface IncludeExcludeLike {
  include?: readonly string[] | null;
  exclude?: readonly string[] | null;
}

/** Both lists as sets, an empty one left out; nothing left: `options.empty`. */
export const includeExcludeSets = <E extends null | undefined>(
  value: IncludeExcludeLike | null | undefined,
  options: EmptyAs<E>,
): JsonObject | E => {
  const include = sortedSet(value?.include);
  const exclude = sortedSet(value?.exclude);
  return nonEmpty({ ...(include.length > 0 ? { include } : {}), ...(exclude.length > 0 ? { exclude } : {}) }, options);
};

/** An entity filter (catalog pages, Initiatives, scorecards): which types and groups, and a query. */
export interface EntityFilterLike {
  types?: IncludeExcludeLike | null;
  groups?: IncludeExcludeLike | null;
  query?: string | null;
}

/**
 * An entity filter as compared: `types`, `groups` (as sets, empty ones left out) and `query`
 * (an empty one left out), in that order; an empty filter reads the same as none: `options.empty`.
 */
export const entityFilterSets = <E extends null | undefined>(
  filter: EntityFilterLike | null | undefined,
  options: EmptyAs<E>,
): JsonObject | E => {
  const types = includeExcludeSets(filter?.types, { empty: undefined });
  const groups = includeExcludeSets(filter?.groups, { empty: undefined });
  return nonEmpty(
    { ...entry('types', types), ...entry('groups', groups), ...(filter?.query ? { query: filter.query } : {}) },
    options,
  );
};
