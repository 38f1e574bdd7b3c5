/**
 * An entity type's `schema` must itself be a valid JSON Schema: Cortex stores whatever it is sent
 * (`type: objekt`, `required: engine`, a `pattern` that is no regular expression) and every
 * entity of the type then fails or passes arbitrarily. Checked offline against the JSON Schema
 * meta-schema (draft-07) and by compiling every `pattern`, each problem located at its field.
 */
import type { ErrorObject } from 'ajv';
import type { Diagnostic, ParsedDocument } from '../../core/model.js';
import { formatFieldPath } from '../../source/zod-diagnostics.js';
import { DRAFT_07_URIS, jsonSchemaErrors, otherDraft } from './json-schema-ajv.js';

/** `/properties/model/type` → `['properties', 'model', 'type']` (JSON Pointer, RFC 6901). */
export const pointerToPath = (pointer: string): (string | number)[] =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
        .map((part) => (/^\d+$/.test(part) ? Number(part) : part));

/** One message per offending field: the most telling of ajv's errors at that place. */
const describe = (errors: readonly ErrorObject[]): Map<string, string> => {
  const byPlace = new Map<string, ErrorObject[]>();
  for (const error of errors) byPlace.set(error.instancePath, [...(byPlace.get(error.instancePath) ?? []), error]);
  const out = new Map<string, string>();
  for (const [place, list] of byPlace) {
    const allowed = list.find((e) => e.keyword === 'enum');
    const chosen = allowed ?? list.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf') ?? list[0];
    if (!chosen) continue;
    const values = allowed ? (allowed.params as { allowedValues?: unknown[] }).allowedValues : undefined;
    const types = list.filter((e) => e.keyword === 'type').map((e) => String((e.params as { type?: unknown }).type));
    let message = chosen.message ?? 'is not valid here';
    if (values)
      message = `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}${types.length ? ` (or ${types.join(' or ')})` : ''}`;
    out.set(place, message);
  }
  return out;
};

/** Every `pattern` (and `patternProperties` key) of the schema that is not a regular expression. */
const badPatterns = (
  value: unknown,
  path: (string | number)[],
  out: { path: (string | number)[]; message: string }[],
) => {
  if (Array.isArray(value)) {
    value.forEach((item, i) => badPatterns(item, [...path, i], out));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    if (key === 'pattern' && typeof child === 'string') {
      const problem = regexProblem(child);
      if (problem) out.push({ path: [...path, key], message: `is not a valid regular expression (${problem})` });
    }
    if (key === 'patternProperties' && child !== null && typeof child === 'object' && !Array.isArray(child)) {
      for (const name of Object.keys(child)) {
        const problem = regexProblem(name);
        if (problem)
          out.push({ path: [...path, key, name], message: `is not a valid regular expression (${problem})` });
      }
    }
    badPatterns(child, [...path, key], out);
  }
};

const regexProblem = (source: string): string | undefined => {
  try {
    new RegExp(source, 'u');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message.replace(/^Invalid regular expression: /, '') : 'invalid';
  }
};

const DRAFT_PATH = ['schema', '$schema'];

/** An error of an entity type's schema at `path` (from the document's root), located in `doc`. */
const schemaError = (
  doc: ParsedDocument,
  id: string,
  path: readonly (string | number)[],
  code: string,
  messageFor: (field: string) => string,
): Diagnostic => {
  const field = formatFieldPath([...path]);
  const at = doc.locate([...path]);
  return {
    severity: 'error',
    code,
    message: messageFor(field),
    file: doc.file,
    line: at.line,
    column: at.column,
    field,
    kind: 'entity-type',
    id,
  };
};

/** The error for a `schema.$schema` that names a draft other than draft-07 (`declared`), at its line. */
const otherDraftDiagnostic = (declared: unknown, doc: ParsedDocument, id: string): Diagnostic => {
  const shown = typeof declared === 'string' ? `\`${declared}\`` : `${JSON.stringify(declared)} (not a string)`;
  return schemaError(
    doc,
    id,
    DRAFT_PATH,
    'unsupported-json-schema-draft',
    (field) =>
      `${field}: ${shown} is not a JSON Schema draft cortex-sync checks: entity type schemas are checked as draft-07 only ` +
      `(\`${DRAFT_07_URIS[0]}\`, with or without the trailing \`#\`). Write the schema in draft-07 and declare that, ` +
      `or remove \`$schema\` (draft-07 is then assumed)`,
  );
};

/**
 * Located errors for an entity type whose `schema` (at `schema` in `doc`) is not a valid JSON
 * Schema; one that declares another draft than draft-07 gets that error only (and any pattern that
 * is no regular expression: one in any draft), not draft-07's verdict on it.
 */
export const jsonSchemaDiagnostics = (
  schema: Readonly<Record<string, unknown>>,
  doc: ParsedDocument,
  id: string,
): Diagnostic[] => {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const draft = otherDraft(schema);
  if (!draft.found)
    for (const [pointer, message] of describe(jsonSchemaErrors(schema)))
      problems.push({ path: pointerToPath(pointer), message });
  badPatterns(schema, [], problems);
  const seen = new Set<string>();
  const diagnostics: Diagnostic[] = draft.found ? [otherDraftDiagnostic(draft.declared, doc, id)] : [];
  for (const { path, message } of problems) {
    const full = ['schema', ...path];
    const field = formatFieldPath(full);
    if (seen.has(field)) continue;
    seen.add(field);
    diagnostics.push(
      schemaError(
        doc,
        id,
        full,
        'invalid-json-schema',
        () => `${field}: ${message}: the schema must be a valid JSON Schema`,
      ),
    );
  }
  return diagnostics.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
};
