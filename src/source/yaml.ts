/**
 * Parses one manifest file into YAML documents that remember where every node came from, and
 * reports every YAML error and warning with its line and column (not just the first one).
 * Ordinary files take the fast path (`yaml-fast.ts`); anything unusual takes the full `yaml`
 * parser below, which is the one that explains problems.
 */
import {
  type Document,
  isAlias,
  isCollection,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  visit,
  type YAMLError,
} from 'yaml';
import type { Diagnostic, ParsedDocument } from '../core/model.js';
import { refusePrototypeKeys } from './prototype-keys.js';
import { fastLocator, lineStarts, parseFast, positionOf } from './yaml-fast.js';

import { DEFAULT_PARSE_LIMITS, type ParseLimits } from './parse-limits.js';

export { DEFAULT_PARSE_LIMITS, type ParseLimits } from './parse-limits.js';

interface ParsedFile {
  documents: ParsedDocument[];
  diagnostics: Diagnostic[];
}

const formatBytes = (bytes: number): string =>
  bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MiB`
    : bytes % 1024 === 0
      ? `${bytes / 1024} KiB`
      : `${bytes.toLocaleString('en-US')} bytes`;

/**
 * YAML errors reported per file before the rest are summarised: a broken line early in a file makes
 * the parser report every later token, and those follow-on errors bury the real one.
 */
export const MAX_YAML_ERRORS_PER_FILE = 20;

interface HasRange {
  range?: [number, number, number] | null;
}
const startOf = (node: unknown): number | undefined => (node as HasRange | null)?.range?.[0];

/** Builds `locate` for one document: the key's position for a mapping entry, the item's for a list item. */
const locator = (doc: Document, lineCounter: LineCounter, fallback: number) => {
  return (path: readonly PropertyKey[]): { line: number; column: number } => {
    let node: unknown = doc.contents;
    let offset = startOf(node) ?? fallback;
    for (const segment of path) {
      if (isAlias(node)) node = node.resolve(doc);
      if (isMap(node)) {
        const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
        if (pair === undefined) break;
        offset = startOf(pair.key) ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof segment === 'number') {
        const item = node.items[segment];
        if (item === undefined) break;
        offset = startOf(item) ?? offset;
        node = item;
      } else {
        break;
      }
    }
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
};

/** A YAML error or warning as a diagnostic; duplicate keys name the key. */
const yamlProblem = (file: string, text: string, lineCounter: LineCounter, problem: YAMLError): Diagnostic => {
  const { line, col } = lineCounter.linePos(problem.pos[0]);
  const isWarning = problem.name === 'YAMLWarning';
  let code = isWarning ? 'yaml-warning' : 'yaml-syntax';
  let message = problem.message.split('\n')[0] ?? problem.message;
  if (problem.code === 'DUPLICATE_KEY') {
    code = 'duplicate-key';
    const key = /^("[^"\n]*"|'[^'\n]*'|[^:\n]*)/.exec(text.slice(problem.pos[0]))?.[1]?.trim();
    message = key ? `duplicate key \`${key}\` (a mapping may hold each key once)` : 'duplicate key in a mapping';
  }
  return { severity: isWarning ? 'warning' : 'error', code, message, file, line, column: col };
};

/** A document with no content (`---` followed by comments or nothing, or a bare `~`). */
const isEmptyDocument = (doc: Document): boolean =>
  doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null);

/** The error for a file over the size limit (also used by the loader, which checks before reading). */
export const fileTooLarge = (file: string, bytes: number, maxFileBytes: number): Diagnostic => ({
  severity: 'error',
  code: 'file-too-large',
  message: `${file} is ${bytes.toLocaleString('en-US')} bytes, over the ${formatBytes(maxFileBytes)} limit for a manifest file`,
  file,
  line: 1,
  column: 1,
});

/**
 * Mapping keys that are themselves mappings or lists (`{{ x }}: y` in an unrendered template): JSON
 * has no such keys, so they are errors rather than silently stringified.
 */
const collectionKeys = (doc: Document, file: string, lineCounter: LineCounter): Diagnostic[] => {
  const found: Diagnostic[] = [];
  visit(doc, {
    Pair(_, pair) {
      if (!isCollection(pair.key)) return;
      const { line, col } = lineCounter.linePos(startOf(pair.key) ?? 0);
      found.push({
        severity: 'error',
        code: 'yaml-syntax',
        message: 'a mapping key must be a plain value, not a mapping or list (an unrendered `{{ }}` template?)',
        file,
        line,
        column: col,
      });
    },
  });
  return found;
};

/** The error of a document nested deeper than `maxDepth` (`ParseLimits`), at the place it gets too deep. */
const tooDeep = (file: string, maxDepth: number, at: { line: number; col: number }): Diagnostic => ({
  severity: 'error',
  code: 'yaml-too-deep',
  message: `mappings and lists are nested deeper than ${maxDepth} levels here, the limit for a manifest`,
  file,
  line: at.line,
  column: at.col,
});

/** The stack overflow the YAML parser (or its conversion to values) throws on a far too deep document. */
const isStackOverflow = (message: string): boolean => /maximum call stack size exceeded/i.test(message);

/** The path of the first value nested deeper than `maxDepth` levels in `value`, if any (iterative). */
const pathBeyond = (value: unknown, maxDepth: number): PropertyKey[] | undefined => {
  const stack: { node: unknown; path: PropertyKey[] }[] = [{ node: value, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop() as { node: unknown; path: PropertyKey[] };
    if (node === null || typeof node !== 'object') continue;
    if (path.length >= maxDepth) return path;
    if (Array.isArray(node)) node.forEach((item: unknown, i) => stack.push({ node: item, path: [...path, i] }));
    else if (!(node instanceof Date))
      for (const [key, item] of Object.entries(node)) stack.push({ node: item, path: [...path, key] });
  }
  return undefined;
};

/**
 * Parses `text` (the content of `file`, relative to the manifest root) into its non-empty YAML
 * documents. A document with YAML errors is left out and its errors are reported; warnings keep it.
 * So is a document holding a key named `__proto__` (`prototype-keys.ts`).
 */
export const parseManifestFile = (file: string, text: string, limits: Partial<ParseLimits> = {}): ParsedFile => {
  const { maxFileBytes, maxDepth } = { ...DEFAULT_PARSE_LIMITS, ...limits };
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxFileBytes) return { documents: [], diagnostics: [fileTooLarge(file, bytes, maxFileBytes)] };
  const fast = parseFast(text, maxDepth);
  if (fast === undefined) return parseManifestFileFully(file, text, limits);
  const starts = lineStarts(text);
  const documents = fast.map(({ index, start, value, shallowKeys }): ParsedDocument => {
    const { line, column } = positionOf(starts, start);
    return { file, index, line, column, value, locate: fastLocator(text, index, start, shallowKeys) };
  });
  return refusePrototypeKeys(text, { documents, diagnostics: [] });
};

/** The full parser: every YAML error and warning with its position; alias expansion bounded. */
export const parseManifestFileFully = (file: string, text: string, limits: Partial<ParseLimits> = {}): ParsedFile => {
  const { maxFileBytes, maxAliasCount, maxDepth } = { ...DEFAULT_PARSE_LIMITS, ...limits };
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxFileBytes) return { documents: [], diagnostics: [fileTooLarge(file, bytes, maxFileBytes)] };

  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
    merge: true,
    logLevel: 'error',
  });
  const documents: ParsedDocument[] = [];
  const diagnostics: Diagnostic[] = [];

  parsed.forEach((doc, index) => {
    for (const problem of [...doc.errors, ...doc.warnings]) {
      diagnostics.push(
        isStackOverflow(problem.message)
          ? tooDeep(file, maxDepth, lineCounter.linePos(problem.pos[0]))
          : yamlProblem(file, text, lineCounter, problem),
      );
    }
    if (doc.errors.length > 0 || isEmptyDocument(doc)) return;
    const complexKeys = collectionKeys(doc, file, lineCounter);
    if (complexKeys.length > 0) {
      diagnostics.push(...complexKeys);
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount });
    } catch (error) {
      const { line, col } = lineCounter.linePos(startOf(doc.contents) ?? 0);
      const reason = error instanceof Error ? error.message : String(error);
      if (isStackOverflow(reason)) {
        diagnostics.push(tooDeep(file, maxDepth, { line, col }));
        return;
      }
      diagnostics.push({
        severity: 'error',
        code: 'yaml-alias-limit',
        message: `document ${index + 1} expands too many aliases (limit ${maxAliasCount}): ${reason}`,
        file,
        line,
        column: col,
      });
      return;
    }
    const start = startOf(doc.contents) ?? 0;
    const beyond = pathBeyond(value, maxDepth);
    if (beyond !== undefined) {
      const at = locator(doc, lineCounter, start)(beyond);
      diagnostics.push(tooDeep(file, maxDepth, { line: at.line, col: at.column }));
      return;
    }
    const { line, col } = lineCounter.linePos(start);
    documents.push({ file, index, line, column: col, value, locate: locator(doc, lineCounter, start) });
  });

  const syntaxErrors = diagnostics.filter((d) => d.code === 'yaml-syntax');
  if (syntaxErrors.length > MAX_YAML_ERRORS_PER_FILE) {
    const dropped = new Set(syntaxErrors.slice(MAX_YAML_ERRORS_PER_FILE));
    const last = syntaxErrors[syntaxErrors.length - 1];
    const kept = diagnostics.filter((d) => !dropped.has(d));
    kept.push({
      severity: 'error',
      code: 'yaml-syntax',
      message: `${dropped.size} more YAML errors, up to line ${last?.line}; fix the first ones, the rest usually follow from them`,
      file,
      line: last?.line ?? 1,
      column: last?.column ?? 1,
    });
    return refusePrototypeKeys(text, { documents, diagnostics: kept });
  }
  if (documents.length === 0 && diagnostics.length === 0) {
    diagnostics.push({
      severity: 'warning',
      code: 'empty-manifest',
      message: `${file} holds no YAML document (only comments or whitespace); nothing is declared`,
      file,
      line: 1,
      column: 1,
    });
  }
  return refusePrototypeKeys(text, { documents, diagnostics });
};
