/**
 * Turns zod issues into located diagnostics a user understands:
 * `info.x-cortex-owners[0].type: expected one of group, email, slack, got 'team'`.
 * Pure (no IO): kinds call it from their `parse`.
 */
import type { z } from 'zod';
import type { Diagnostic, KindName, ParsedDocument } from '../core/model.js';
import { countOf } from '../core/plural.js';
import { excerpt } from './excerpt.js';

type Issue = z.core.$ZodIssue;

/** Identifies the object a diagnostic belongs to (no kind for non-manifest files such as the config). */
interface DiagnosticSubject {
  kind?: KindName;
  id?: string;
}

/** `info.x-cortex-owners[0].name` from `['info', 'x-cortex-owners', 0, 'name']`; each key cut to a short excerpt. */
export const formatFieldPath = (path: readonly PropertyKey[]): string => {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? excerpt(String(segment)) : `.${excerpt(String(segment))}`;
  }
  return out;
};

/** The value at `path` inside `root`, or `found: false` when some step does not exist. */
const valueAt = (root: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown } => {
  let node: unknown = root;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return { found: false, value: undefined };
    const container = node as Record<PropertyKey, unknown>;
    if (!Object.hasOwn(container, segment)) return { found: false, value: undefined };
    node = container[segment];
  }
  return { found: true, value: node };
};

/**
 * `'team'`, `3`, `null`, `a list`, `a mapping`: how a received value is shown. The values of the
 * YAML 1.1 tags the parser still resolves when written explicitly are named by their tag (they are
 * objects, but no mapping the author wrote).
 */
export const describeValue = (value: unknown): string => {
  if (value === null || value === undefined) return 'nothing (an empty value)';
  if (typeof value === 'string') return `'${excerpt(value)}'`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a `!!timestamp` value';
  if (value instanceof Uint8Array) return 'binary data (`!!binary`)';
  if (value instanceof Set) return 'a `!!set`';
  if (value instanceof Map) return 'an ordered map (`!!omap`)';
  return 'a mapping';
};

const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  record: 'a mapping',
};
const typeName = (expected: string): string => TYPE_NAMES[expected] ?? expected;

/** Values of an enum, case variants folded: `group, email, slack` rather than `group, email, slack, GROUP, ...`. */
const enumValues = (values: readonly unknown[]): string => {
  const seen = new Set<string>();
  const shown: string[] = [];
  for (const value of values) {
    const key = String(value).toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    shown.push(String(value));
  }
  return shown.join(', ');
};

interface Located {
  path: PropertyKey[];
  text: string;
}

/** One issue (possibly a union, which becomes its most plausible branch) as path + message text. */
const explainIssue = (issue: Issue, prefix: readonly PropertyKey[], root: unknown): Located[] => {
  const path = [...prefix, ...issue.path];
  const received = valueAt(root, path);
  switch (issue.code) {
    case 'invalid_type': {
      if (!received.found || received.value === undefined) return [{ path, text: 'is required' }];
      if (path.length === 0) {
        return [
          { path, text: `the document must be ${typeName(issue.expected)}, got ${describeValue(received.value)}` },
        ];
      }
      return [{ path, text: `expected ${typeName(issue.expected)}, got ${describeValue(received.value)}` }];
    }
    case 'invalid_value':
      return [{ path, text: `expected one of ${enumValues(issue.values)}, got ${describeValue(received.value)}` }];
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ path: [...path, key], text: `unknown key \`${key}\`` }));
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return [{ path, text: 'must not be empty' }];
      if (issue.origin === 'array') return [{ path, text: `needs at least ${countOf(Number(issue.minimum), 'item')}` }];
      return [{ path, text: issue.message }];
    case 'too_big':
      if (issue.origin === 'array') return [{ path, text: `allows at most ${countOf(Number(issue.maximum), 'item')}` }];
      return [{ path, text: issue.message }];
    case 'invalid_format':
      return [{ path, text: `is not a valid ${issue.format}, got ${describeValue(received.value)}` }];
    case 'invalid_union':
      return explainUnion(issue, path, root);
    default:
      return [{ path, text: issue.message }];
  }
};

/**
 * A union failed: when every branch only disagrees on the type (`string | number`), say so in one
 * message; otherwise explain the branch with the fewest problems (the shape the author most likely meant).
 */
const explainUnion = (issue: z.core.$ZodIssueInvalidUnion, path: PropertyKey[], root: unknown): Located[] => {
  const branches = issue.errors.filter((branch) => branch.length > 0);
  if (branches.length === 0) return [{ path, text: issue.message }];
  const typeOnly = branches.every(
    (branch) => branch.length === 1 && branch[0]?.code === 'invalid_type' && branch[0].path.length === 0,
  );
  if (typeOnly) {
    const received = valueAt(root, path);
    if (!received.found || received.value === undefined) return [{ path, text: 'is required' }];
    const expected = branches.map((branch) => typeName((branch[0] as z.core.$ZodIssueInvalidType).expected));
    return [{ path, text: `expected ${[...new Set(expected)].join(' or ')}, got ${describeValue(received.value)}` }];
  }
  const best = branches.reduce((a, b) => (b.length < a.length ? b : a));
  return best.flatMap((inner) => explainIssue(inner, path, root));
};

/** Maps each zod issue to an `error` diagnostic located in `doc` (one per unknown key). */
export const zodIssuesToDiagnostics = (
  issues: readonly Issue[],
  doc: ParsedDocument,
  base: DiagnosticSubject,
): Diagnostic[] =>
  issues
    .flatMap((issue) => explainIssue(issue, [], doc.value))
    .map(({ path, text }) => {
      const field = formatFieldPath(path);
      const position = doc.locate(path);
      const diagnostic: Diagnostic = {
        severity: 'error',
        code: 'schema',
        message: field === '' ? text : `${field}: ${text}`,
        file: doc.file,
        line: position.line,
        column: position.column,
      };
      if (base.kind !== undefined) diagnostic.kind = base.kind;
      if (field !== '') diagnostic.field = field;
      if (base.id !== undefined) diagnostic.id = base.id;
      return diagnostic;
    });
