/**
 * A mapping key named `__proto__` is refused wherever a YAML file holds one. JavaScript reads it
 * as an object's prototype as soon as the value is copied by assignment: what the key holds then
 * vanishes from the object (a manifest's block never reaches the API) or is read as if it were
 * the object's own keys (`__proto__: {prune: true}` in `cortex-sync.yaml` would set `prune`
 * without any line saying `prune:`). Pure.
 */
import type { Diagnostic, ParsedDocument } from '../core/model.js';
import { formatFieldPath } from './zod-diagnostics.js';

const PROTOTYPE_KEY = '__proto__';

/**
 * Whether `text` may hold the key at all: written as it is, or built from escapes in a
 * double-quoted scalar (`"\x5f_proto__"`), the only two ways YAML spells a key.
 */
const mayHoldPrototypeKey = (text: string): boolean => text.includes(PROTOTYPE_KEY) || text.includes('\\');

/** Paths of every `__proto__` key in a parsed value (lists and plain mappings; shared aliases walked once). */
const prototypeKeyPaths = (root: unknown): PropertyKey[][] => {
  const found: PropertyKey[][] = [];
  const seen = new Set<object>();
  const walk = (value: unknown, path: PropertyKey[]): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, [...path, index]));
      return;
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return;
    for (const [key, item] of Object.entries(value)) {
      if (key === PROTOTYPE_KEY) found.push([...path, key]);
      walk(item, [...path, key]);
    }
  };
  walk(root, []);
  return found;
};

/**
 * The documents without a `__proto__` key, and an error at each such key (a document holding one
 * is left out, as a document with a YAML error is).
 */
export const refusePrototypeKeys = (
  text: string,
  parsed: { documents: ParsedDocument[]; diagnostics: Diagnostic[] },
): { documents: ParsedDocument[]; diagnostics: Diagnostic[] } => {
  if (!mayHoldPrototypeKey(text)) return parsed;
  const refused: Diagnostic[] = [];
  const documents = parsed.documents.filter((doc) => {
    const paths = prototypeKeyPaths(doc.value);
    for (const path of paths) {
      const { line, column } = doc.locate(path);
      const field = formatFieldPath(path);
      refused.push({
        severity: 'error',
        code: 'prototype-key',
        message: `${field}: a key named \`${PROTOTYPE_KEY}\` is not read (JavaScript takes it for the object's prototype, so what it holds would be dropped or misread); rename or remove it`,
        file: doc.file,
        line,
        column,
        field,
      });
    }
    return paths.length === 0;
  });
  return refused.length === 0 ? parsed : { documents, diagnostics: [...parsed.diagnostics, ...refused] };
};
