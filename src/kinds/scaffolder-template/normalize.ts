/**
 * Canonical comparable form of a Scaffolder template. A POST replaces the whole template and the
 * server gives every omitted optional field a default of its own (not documented), so only what
 * the manifest states is compared: a manifest without `labels` equals a live template whatever
 * its labels are.
 *
 * Ignored: the server's identifiers (`id`, `cid`), dates, and any field this schema does not know.
 */
import type { JsonObject, JsonValue } from '../../core/model.js';
import { byCodeUnit, sortedSet, textOrNull } from '../shared/canonical.js';
import type { LiveScaffolderTemplate, ScaffolderTemplateManifest } from './schema.js';

const BOOLEAN_FIELDS = [
  'requireNewService',
  'requirePullRequest',
  'createYamlFile',
  'showReadme',
  'strictAliasUsage',
] as const;

/** The optional fields: compared only when the manifest states them. */
const OPTIONAL_FIELDS = ['description', 'labels', ...BOOLEAN_FIELDS] as const;

type OptionalField = (typeof OPTIONAL_FIELDS)[number];

type ComparableTemplate = Pick<LiveScaffolderTemplate, 'tag' | 'name' | 'description' | 'type' | 'labels'> &
  Partial<Record<(typeof BOOLEAN_FIELDS)[number], boolean | null>> & {
    repoLocator?: Readonly<Record<string, unknown>> | null;
  };

/** Locator fields with sorted keys; null and absent fields are the same. */
const canonicalLocator = (locator: Readonly<Record<string, unknown>> | null | undefined): JsonObject | null => {
  if (!locator) return null;
  const out: JsonObject = {};
  for (const key of Object.keys(locator).sort(byCodeUnit)) {
    const value = locator[key];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = value;
  }
  return out;
};

const canonicalTemplate = (t: ComparableTemplate, stated: ReadonlySet<OptionalField>): JsonValue => {
  const out: JsonObject = {
    tag: t.tag,
    name: t.name ?? null,
    type: t.type ?? null,
    repoLocator: canonicalLocator(t.repoLocator),
  };
  if (stated.has('description')) out.description = textOrNull(t.description);
  if (stated.has('labels')) out.labels = sortedSet(t.labels);
  for (const field of BOOLEAN_FIELDS) if (stated.has(field)) out[field] = t[field] ?? null;
  return out;
};

/** The optional fields a manifest states. */
const statedIn = (spec: ScaffolderTemplateManifest | undefined): Set<OptionalField> =>
  new Set(spec ? OPTIONAL_FIELDS.filter((field) => spec[field] !== undefined) : []);

/** Canonical form of a manifest. */
export const canonicalDesiredTemplate = (spec: ScaffolderTemplateManifest): JsonValue =>
  canonicalTemplate(spec, statedIn(spec));

/** Canonical form of an API response, compared with the manifest `declared` (when there is one). */
export const canonicalLiveTemplate = (
  state: LiveScaffolderTemplate,
  declared?: ScaffolderTemplateManifest,
): JsonValue => canonicalTemplate(state, statedIn(declared));

/** The body of `POST /api/v1/scaffolders`: the manifest as written, `labels` always sent (the API requires it). */
export const scaffolderRequestBody = (spec: ScaffolderTemplateManifest): JsonObject => {
  const body = JSON.parse(JSON.stringify(spec)) as JsonObject;
  body.labels = spec.labels ?? [];
  return body;
};
