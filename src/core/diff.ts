/**
 * Field-level comparison of canonical states. Pure.
 *
 * Objects are compared key by key (key order never matters); arrays are compared as a whole and,
 * when they differ, reported as one leaf (`info.x-cortex-groups: ["tier-1"] → ["tier-0"]`), which
 * reads better in a plan than per-index noise when an item is inserted at the front.
 */
import type { FieldDiff, JsonValue } from './model.js';

type JsonRecord = { [key: string]: JsonValue };

const isRecord = (v: JsonValue | undefined): v is JsonRecord =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON text with object keys sorted at every level: equal values ⇔ equal strings. */
export function canonicalJson(value: JsonValue | undefined): string {
  if (value === undefined) return 'undefined';
  return JSON.stringify(sortKeys(value));
}

/**
 * A copy of `value` whose objects have their keys in sorted order (arrays keep their order).
 * Accepts any parsed JSON/YAML value: `undefined` members are dropped, values JSON cannot hold
 * become `null`.
 */
export function sortKeys(value: unknown): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: JsonRecord = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null)
    return value;
  return null;
}

/** Structural equality of JSON values; object key order is ignored, array order is not. */
export function deepEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isRecord(a)) {
    if (!isRecord(b)) return false;
    // Counted in place rather than by filtered key lists: a plan compares every object it reads.
    let defined = 0;
    for (const key of Object.keys(a)) {
      const value = a[key];
      if (value === undefined) continue;
      defined += 1;
      if (!Object.hasOwn(b, key) || !deepEqual(value, b[key])) return false;
    }
    for (const key of Object.keys(b)) if (b[key] !== undefined) defined -= 1;
    return defined === 0;
  }
  // Numbers: treat -0 and 0 alike, NaN never occurs in JSON.
  return typeof a === 'number' && typeof b === 'number' && a === b;
}

const PLAIN_KEY = /^[A-Za-z0-9_$@-]+$/;

/** Appends `key` to a dotted path; keys that are not plain words are written `["a.b"]`. */
function joinPath(parent: string, key: string): string {
  if (PLAIN_KEY.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/**
 * The fields that differ between `before` (live) and `after` (desired), as dotted paths, sorted by
 * key at every level. `before` undefined (a create) lists every leaf of `after`; `after`
 * undefined lists every leaf of `before`. An empty object or array on one side only is one leaf.
 * The root itself, when it is not an object, has the path `""`.
 */
export function diffValues(before: JsonValue | undefined, after: JsonValue | undefined): FieldDiff[] {
  const out: FieldDiff[] = [];
  walk('', before, after, out);
  return out;
}

function walk(path: string, before: JsonValue | undefined, after: JsonValue | undefined, out: FieldDiff[]): void {
  if (deepEqual(before, after)) return;
  const recurse =
    (isRecord(before) || before === undefined) &&
    (isRecord(after) || after === undefined) &&
    (isNonEmptyRecord(before) || isNonEmptyRecord(after));
  if (recurse) {
    const b = isRecord(before) ? before : {};
    const a = isRecord(after) ? after : {};
    const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort();
    for (const key of keys) {
      walk(joinPath(path, key), isRecord(before) ? b[key] : undefined, isRecord(after) ? a[key] : undefined, out);
    }
    return;
  }
  out.push(leaf(path, before, after));
}

const isNonEmptyRecord = (v: JsonValue | undefined): boolean => isRecord(v) && Object.keys(v).length > 0;

function leaf(path: string, before: JsonValue | undefined, after: JsonValue | undefined): FieldDiff {
  const d: FieldDiff = { path };
  if (before !== undefined) d.before = before;
  if (after !== undefined) d.after = after;
  return d;
}
