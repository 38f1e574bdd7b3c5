/**
 * Keys that are typos of keys the kind knows: `x-cortex-typ` for `x-cortex-type`, `isdraft` for
 * `isDraft`, `nmae` inside an owner. Such a key is an error (`unknown-key`, with the key it
 * likely means), wherever it is in the document: in a strict mapping (which refuses every unknown
 * key, and now says which one was meant) and in a loose one (an entity's `info`, where any other
 * key passes and an unknown `x-cortex-*` key is only a warning: the API drops it silently, so a
 * typo would silently turn a queue into a service or drop an owner).
 *
 * "Likely means" is `nearMiss` (core/references.ts): within the did-you-mean distance, case aside.
 * The schema is walked along the document: only mappings whose keys the schema names are judged;
 * free-form maps (custom metadata, integration blocks) are not. Pure.
 */
import type { z } from 'zod';
import type { Diagnostic, ParsedDocument } from '../core/model.js';
import { nearMiss } from '../core/references.js';
import { excerpt } from './excerpt.js';
import { formatFieldPath } from './zod-diagnostics.js';

type Schema = z.core.$ZodType;
interface Def {
  type: string;
  innerType?: Schema;
  in?: Schema;
  element?: Schema;
  options?: readonly Schema[];
  left?: Schema;
  right?: Schema;
  valueType?: Schema;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  getter?: () => Schema;
}

const defOf = (schema: Schema): Def => schema._zod.def;

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly', 'catch']);

const openedOnce = (schema: Schema, depth: number): Schema[] => {
  if (depth > 32) return [];
  const def = defOf(schema);
  if (WRAPPERS.has(def.type) && def.innerType) return openedOnce(def.innerType, depth + 1);
  if (def.type === 'pipe' && def.in) return openedOnce(def.in, depth + 1);
  if (def.type === 'lazy' && def.getter) return openedOnce(def.getter(), depth + 1);
  if (def.type === 'union' && def.options) return def.options.flatMap((o) => openedOnce(o, depth + 1));
  if (def.type === 'intersection' && def.left && def.right)
    return [...openedOnce(def.left, depth + 1), ...openedOnce(def.right, depth + 1)];
  return [schema];
};

const openedCache = new WeakMap<Schema, Schema[]>();
/** The schemas `schema` stands for once wrappers, pipes, lazies, unions and intersections are opened. */
const opened = (schema: Schema): Schema[] => {
  let found = openedCache.get(schema);
  if (found === undefined) {
    found = openedOnce(schema, 0);
    openedCache.set(schema, found);
  }
  return found;
};

/** The schemas a value inside `schema` may be checked against (array elements, record values, mapping values). */
const children = (schema: Schema): Schema[] => {
  const def = defOf(schema);
  if (def.type === 'array' && def.element) return [def.element];
  if (def.type === 'record' && def.valueType) return [def.valueType];
  if (def.type === 'object' && def.shape) return Object.values(def.shape);
  return [];
};

const namesKeysCache = new WeakMap<Schema, boolean>();
/**
 * Does `schema` (or anything inside it) name keys? A free-form value (`z.json()`, a map of
 * anything) does not, and is not walked.
 */
const namesKeys = (schema: Schema): boolean => {
  const cached = namesKeysCache.get(schema);
  if (cached !== undefined) return cached;
  namesKeysCache.set(schema, false); // a recursive schema (z.json) reaches itself: not through a shape
  const nodes = opened(schema);
  const found =
    nodes.some((n) => defOf(n).type === 'object' && Object.keys(defOf(n).shape ?? {}).length > 0) ||
    nodes.some((n) => children(n).some(namesKeys));
  namesKeysCache.set(schema, found);
  return found;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface Typo {
  path: PropertyKey[];
  key: string;
  meant: string;
}

/** Walks `value` along `schemas` (what it may be), collecting keys that are typos of known ones. */
const walk = (schemas: readonly Schema[], value: unknown, path: PropertyKey[], typos: Typo[]): void => {
  if (value === null || typeof value !== 'object' || !schemas.some(namesKeys)) return;
  const nodes = schemas.flatMap((s) => opened(s));
  if (Array.isArray(value)) {
    const elements = nodes.flatMap((n) => {
      const def = defOf(n);
      return def.type === 'array' && def.element ? [def.element] : [];
    });
    if (elements.length > 0) value.forEach((item, i) => walk(elements, item, [...path, i], typos));
    return;
  }
  if (!isRecord(value)) return;
  const shapes: Record<string, Schema>[] = [];
  const records: Schema[] = [];
  for (const node of nodes) {
    const def = defOf(node);
    if (def.type === 'object' && def.shape) shapes.push(def.shape);
    else if (def.type === 'record' && def.valueType) records.push(def.valueType);
  }
  const known = (): string[] => shapes.flatMap((shape) => Object.keys(shape));
  for (const key of Object.keys(value)) {
    const item = value[key];
    const inner: Schema[] = [];
    for (const shape of shapes) if (Object.hasOwn(shape, key)) inner.push(shape[key] as Schema);
    if (inner.length > 0) {
      walk(inner, item, [...path, key], typos);
      continue;
    }
    if (records.length > 0) {
      walk(records, item, [...path, key], typos);
      continue;
    }
    const meant = shapes.length > 0 ? nearMiss(key, known()) : undefined;
    if (meant !== undefined) typos.push({ path: [...path, key], key, meant });
  }
};

/** The message of a key that is a typo of `meant`. */
const typoMessage = (field: string, key: string, meant: string): string =>
  `${field}: unknown key \`${excerpt(key)}\`; did you mean \`${meant}\`? (a key this close to a known one is an error, not ignored)`;

/** An `unknown-key` error for each key of `doc` that is a typo of a key `schema` knows at its place. */
export const keyTypos = (schema: Schema, doc: ParsedDocument): Diagnostic[] => {
  const typos: Typo[] = [];
  walk([schema], doc.value, [], typos);
  return typos.map(({ path, key, meant }) => {
    const field = formatFieldPath(path);
    const { line, column } = doc.locate(path);
    return {
      severity: 'error',
      code: 'unknown-key',
      message: typoMessage(field, key, meant),
      file: doc.file,
      line,
      column,
      field,
    };
  });
};
