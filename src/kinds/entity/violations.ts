/**
 * The API's descriptor violations (`{ok, violations: [{title, description, violationType, pointer,
 * paths, startLine, endLine}]}`) as diagnostics located in the manifest.
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { z } from 'zod';
import type { Change, Diagnostic, ParsedDocument } from '../../core/model.js';
import { LEGACY_CORTEX_INFO_KEYS } from './normalize.js';

const violationSchema = z.looseObject({
  title: z.string().nullish().catch(undefined),
  description: z.string().nullish().catch(undefined),
  violationType: z.string().nullish().catch(undefined),
  pointer: z.string().nullish().catch(undefined),
  paths: z.array(z.unknown()).nullish().catch(undefined),
  startLine: z.number().nullish().catch(undefined),
});
type Violation = z.infer<typeof violationSchema>;

/** A validation body: `ok` (when present) and its violations. */
const validationBodySchema = z.looseObject({
  ok: z.boolean().optional().catch(undefined),
  violations: z.array(z.unknown()),
});

/** The violations of an API body, or `undefined` when it is not a validation body. */
export const readViolations = (body: unknown): { ok: boolean | undefined; violations: Violation[] } | undefined => {
  const parsed = validationBodySchema.safeParse(body);
  if (!parsed.success) return undefined;
  const violations = parsed.data.violations.flatMap((v) => {
    const item = violationSchema.safeParse(v);
    return item.success ? [item.data] : [];
  });
  return { ok: parsed.data.ok, violations };
};

/** `/info/x-cortex-owners/0` → `['info', 'x-cortex-owners', 0]` (RFC 6901 escapes undone). */
const pointerToPath = (pointer: string): PropertyKey[] | undefined => {
  if (pointer === '' || pointer === '/') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((segment) => (/^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment));
};

/** `info.x-cortex-owners[0].name` → `['info', 'x-cortex-owners', 0, 'name']`. */
const dottedToPath = (dotted: string): PropertyKey[] =>
  dotted
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((s) => s !== '')
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));

/** A path as the field of a diagnostic: `info.x-cortex-owners[0].name`. */
const fieldOf = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (out, segment) =>
      typeof segment === 'number' ? `${out}[${segment}]` : out === '' ? String(segment) : `${out}.${String(segment)}`,
    '',
  );

/** The path of the deepest key written on `line` of `text` (1-based), if any. */
const pathAtLine = (text: string, line: number): PropertyKey[] | undefined => {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  let best: PropertyKey[] | undefined;
  const lineOf = (node: Node | null | undefined): number | undefined =>
    node?.range ? lineCounter.linePos(node.range[0]).line : undefined;
  const walk = (node: unknown, path: PropertyKey[]): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair) || !isScalar(pair.key)) continue;
        const next = [...path, String(pair.key.value)];
        if (lineOf(pair.key) === line) best = next;
        walk(pair.value, next);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const next = [...path, i];
        if (isScalar(item) && lineOf(item) === line) best = next;
        walk(item, next);
      });
    }
  };
  walk(doc.contents, []);
  return best;
};

/**
 * A path of the descriptor that was sent, as a path of the manifest: the sent descriptor spells
 * legacy keys (`x-cortex-domain-parents`) the current way; point at the key the manifest wrote.
 */
const manifestPath = (path: PropertyKey[], doc: ParsedDocument): PropertyKey[] => {
  if (path[0] !== 'info' || typeof path[1] !== 'string') return path;
  const info = (doc.value as { info?: Record<string, unknown> } | null)?.info;
  if (!info || typeof info !== 'object' || Object.hasOwn(info, path[1])) return path;
  const legacy = Object.entries(LEGACY_CORTEX_INFO_KEYS).find(([old, current]) => current === path[1] && old in info);
  return legacy ? ['info', legacy[0], ...path.slice(2)] : path;
};

const pathOf = (v: Violation, sentText: string | undefined): PropertyKey[] | undefined => {
  const candidates = [v.pointer, ...(v.paths ?? [])].filter((p): p is string => typeof p === 'string' && p !== '');
  for (const candidate of candidates) {
    const path = candidate.startsWith('/') ? pointerToPath(candidate) : dottedToPath(candidate.replace(/^\$\.?/, ''));
    if (path && path.length > 0) return path;
  }
  if (typeof v.startLine === 'number' && sentText !== undefined) return pathAtLine(sentText, v.startLine);
  return undefined;
};

const severityOf = (ok: boolean | undefined, v: Violation): Diagnostic['severity'] => {
  if (ok === true) return 'warning';
  const type = v.violationType?.toUpperCase();
  return type === 'SHOULD' || type === 'MAY' || type === 'HINT' ? 'warning' : 'error';
};

/**
 * Diagnostics for the violations in an API body about `change` (none when the body has none).
 * `sentText` is the YAML that was sent, to place violations that only give a line number.
 */
export const violationDiagnostics = (change: Change, body: unknown, sentText?: string): Diagnostic[] => {
  const read = readViolations(body);
  if (!read) return [];
  const doc = change.desired?.doc;
  return read.violations.map((v) => {
    const title = v.title?.trim() ?? '';
    const description = v.description?.trim() ?? '';
    const text = [title, description].filter((s, i, all) => s !== '' && all.indexOf(s) === i).join(': ');
    const diagnostic: Diagnostic = {
      severity: severityOf(read.ok, v),
      code: 'api-violation',
      message: `the API rejected the descriptor: ${text || 'invalid descriptor'}`,
      kind: 'entity',
      id: change.id,
    };
    if (read.ok === true) diagnostic.message = `the API warns: ${text || 'descriptor warning'}`;
    const raw = pathOf(v, sentText);
    if (doc) {
      const path = raw ? manifestPath(raw, doc) : undefined;
      const at = path ? doc.locate(path) : { line: doc.line, column: doc.column };
      diagnostic.file = doc.file;
      diagnostic.line = at.line;
      diagnostic.column = at.column;
      if (path && path.length > 0) diagnostic.field = fieldOf(path);
    } else if (change.source !== undefined) {
      diagnostic.file = change.source;
      if (change.line !== undefined) diagnostic.line = change.line;
    }
    return diagnostic;
  });
};
