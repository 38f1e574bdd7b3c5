/**
 * Validates one entity descriptor document and says what it references. Problems the API would
 * reject are errors; things it silently ignores or renames (unknown `x-cortex-*` keys, legacy key
 * names) are warnings, located at the key.
 */
import { closest } from 'fastest-levenshtein';
import type { DesiredObject, Diagnostic, ParsedDocument } from '../../core/model.js';
import { formatFieldPath, zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import type { ObjectReference, ParseResult } from '../types.js';
import {
  BUILT_IN_ENTITY_TYPES,
  descriptorOddities,
  type EntityDescriptor,
  entityDescriptorSchema,
  KNOWN_CORTEX_KEYS,
  TAG_TEMPLATE,
} from './schema.js';

const LEGACY_KEYS: Record<string, string> = {
  'x-cortex-domain-parents': 'x-cortex-parents',
  'x-cortex-service-groups': 'x-cortex-groups',
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const byPosition = (a: Diagnostic, b: Diagnostic): number =>
  (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);

/** The entity type of a descriptor: `x-cortex-type` without surrounding whitespace (`service` by default). */
const descriptorEntityType = (spec: EntityDescriptor): string => spec.info['x-cortex-type'].trim();

/** Advisory checks that hold whether or not the schema passed: they look at the raw document. */
const warningsFor = (doc: ParsedDocument, id: string | undefined): Diagnostic[] => {
  const warnings: Diagnostic[] = [];
  const warn = (path: readonly PropertyKey[], field: string, code: string, message: string): void => {
    const { line, column } = doc.locate(path);
    const diagnostic: Diagnostic = { severity: 'warning', code, message, file: doc.file, line, column, field };
    diagnostic.kind = 'entity';
    if (id !== undefined) diagnostic.id = id;
    warnings.push(diagnostic);
  };
  const root = doc.value;
  if (!isRecord(root)) return warnings;

  for (const key of Object.keys(root)) {
    if (key.startsWith('x-cortex-')) {
      warn([key], key, 'misplaced-key', `${key}: belongs under \`info\`; at the top level the API ignores it`);
    }
  }
  if (typeof root.openapi === 'number') {
    warn(['openapi'], 'openapi', 'openapi-version', `openapi: write the version as a string ('${root.openapi}')`);
  }
  const info = root.info;
  if (!isRecord(info)) return warnings;

  for (const key of Object.keys(info)) {
    const field = `info.${key}`;
    const legacy = LEGACY_KEYS[key];
    if (legacy !== undefined) {
      warn(['info', key], field, 'deprecated-key', `${field}: deprecated name; use \`${legacy}\``);
    } else if (key.startsWith('x-cortex-') && !KNOWN_CORTEX_KEYS.includes(key)) {
      const suggestion = closest(key, [...KNOWN_CORTEX_KEYS]);
      warn(
        ['info', key],
        field,
        'unknown-key',
        `${field}: unknown Cortex key; the API silently drops it (did you mean \`${suggestion}\`?)`,
      );
    }
  }
  for (const oddity of descriptorOddities(info)) {
    const path = ['info', ...oddity.path];
    warn(path, formatFieldPath(path), 'tolerated-value', `${formatFieldPath(path)}: ${oddity.message}`);
  }
  const tag = info['x-cortex-tag'];
  if (typeof tag === 'string' && /\s/.test(tag.trim()) && !TAG_TEMPLATE.test(tag)) {
    warn(
      ['info', 'x-cortex-tag'],
      'info.x-cortex-tag',
      'tag-format',
      `info.x-cortex-tag: '${tag}' contains whitespace`,
    );
  }
  const type = info['x-cortex-type'];
  if (typeof type === 'string' && type.trim() !== type) {
    warn(
      ['info', 'x-cortex-type'],
      'info.x-cortex-type',
      'type-format',
      `info.x-cortex-type: '${type}' has surrounding whitespace`,
    );
  }
  const customType = typeof type === 'string' && !BUILT_IN_ENTITY_TYPES.includes(type.trim());
  if (customType && info['x-cortex-definition'] === undefined) {
    warn(
      ['info', 'x-cortex-type'],
      'info.x-cortex-definition',
      'missing-definition',
      `info.x-cortex-definition: entities of the custom type '${type.trim()}' usually need one (\`{}\` when the type's schema is empty)`,
    );
  }
  return warnings.sort(byPosition);
};

/** Validates one YAML document as an entity descriptor; the id is `info.x-cortex-tag`. */
export const parseEntityDocument = (doc: ParsedDocument): ParseResult<EntityDescriptor> => {
  const rawInfo = isRecord(doc.value) ? doc.value.info : undefined;
  const rawTag = isRecord(rawInfo) ? rawInfo['x-cortex-tag'] : undefined;
  const tentativeId = typeof rawTag === 'string' && rawTag !== '' ? rawTag : undefined;

  const warnings = warningsFor(doc, tentativeId);
  const result = entityDescriptorSchema.safeParse(doc.value);
  if (!result.success) {
    const subject =
      tentativeId === undefined ? { kind: 'entity' as const } : { kind: 'entity' as const, id: tentativeId };
    const diagnostics = [...zodIssuesToDiagnostics(result.error.issues, doc, subject), ...warnings];
    return { objects: [], diagnostics: diagnostics.sort(byPosition) };
  }
  const spec = result.data;
  const id = spec.info['x-cortex-tag'];
  const at = doc.locate(['info', 'x-cortex-tag']);
  const object: DesiredObject<EntityDescriptor> = {
    kind: 'entity',
    id,
    source: { file: doc.file, line: at.line, column: at.column },
    spec,
    doc,
  };
  return { objects: [object], diagnostics: warnings };
};

/**
 * What a descriptor names, for ordering and existence checks:
 * - a custom `x-cortex-type` → its entity type (ordering: the type is created first);
 * - owners `{type: group, provider: CORTEX}` → a `team` entity (ordering). Groups without a provider
 *   or with an external provider (OKTA, GITHUB, ...) name an identity-provider group, not an entity;
 * - `x-cortex-parents` / `x-cortex-domain-parents` → entities (ordering: parents first);
 * - `x-cortex-children` → entities, existence only (ordering would cycle with the child's parents);
 * - `x-cortex-dependency` tags → entities, existence only: the API resolves descriptor dependencies
 *   lazily, and mutual dependencies between services are common, so they must not order;
 * - `x-cortex-relationships` destinations (and the one-edge `{type, tag}` form) → entities, ordering
 *   (the API caches a failed relationship if the destination does not exist yet);
 *   `sources` → existence only (the other end may well list this entity as a destination).
 */
export const entityReferences = (obj: DesiredObject<EntityDescriptor>): ObjectReference[] => {
  const info = obj.spec.info;
  const refs: ObjectReference[] = [];
  const add = (
    kind: ObjectReference['kind'],
    id: string,
    path: PropertyKey[],
    ordering: boolean,
    type?: string,
  ): void => {
    const field = formatFieldPath(path);
    const ref: ObjectReference = { kind, id, field, path, ordering };
    if (type !== undefined) ref.type = type;
    refs.push(ref);
  };

  const type = descriptorEntityType(obj.spec);
  if (!BUILT_IN_ENTITY_TYPES.includes(type)) add('entity-type', type, ['info', 'x-cortex-type'], true);

  (info['x-cortex-owners'] ?? []).forEach((owner, i) => {
    if (owner.type.toLowerCase() === 'group' && owner.provider === 'CORTEX' && owner.name !== undefined) {
      add('entity', owner.name, ['info', 'x-cortex-owners', i, 'name'], true, 'team');
    }
  });
  for (const key of ['x-cortex-parents', 'x-cortex-domain-parents'] as const) {
    (info[key] ?? []).forEach((parent, i) => {
      add('entity', parent.tag, ['info', key, i, 'tag'], true);
    });
  }
  (info['x-cortex-children'] ?? []).forEach((child, i) => {
    add('entity', child.tag, ['info', 'x-cortex-children', i, 'tag'], false);
  });
  (info['x-cortex-dependency'] ?? []).forEach((dependency, i) => {
    add('entity', dependency.tag, ['info', 'x-cortex-dependency', i, 'tag'], false);
  });
  (info['x-cortex-relationships'] ?? []).forEach((relationship, i) => {
    const base = ['info', 'x-cortex-relationships', i];
    if (relationship.tag !== undefined) add('entity', relationship.tag, [...base, 'tag'], true);
    (relationship.destinations ?? []).forEach((end, j) => {
      add('entity', end.tag, [...base, 'destinations', j, 'tag'], true);
    });
    (relationship.sources ?? []).forEach((end, j) => {
      add('entity', end.tag, [...base, 'sources', j, 'tag'], false);
    });
  });
  return refs;
};
