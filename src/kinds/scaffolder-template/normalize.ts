/**
 * Canonical comparable form of a Scaffolder template. A POST replaces the whole template and
 * resets every omitted field to its server default, so both sides are compared with the defaults
 * filled in: a manifest without `labels` equals a live template with `labels: []`.
 *
 * Ignored: the server's identifiers (`id`, `cid`), dates, and any field this schema does not know.
 */
import type { JsonObject, JsonValue } from '../../core/model.js';
import type { LiveScaffolderTemplate, ScaffolderTemplateManifest } from './schema.js';

/** What the server stores for a field the payload leaves out. */
export const SCAFFOLDER_DEFAULTS = {
  description: null,
  labels: [] as string[],
  requireNewService: false,
  requirePullRequest: false,
  createYamlFile: false,
  showReadme: false,
  strictAliasUsage: false,
} as const;

const BOOLEAN_FIELDS = [
  'requireNewService',
  'requirePullRequest',
  'createYamlFile',
  'showReadme',
  'strictAliasUsage',
] as const;

type ComparableTemplate = Pick<LiveScaffolderTemplate, 'tag' | 'name' | 'description' | 'type' | 'labels'> &
  Partial<Record<(typeof BOOLEAN_FIELDS)[number], boolean | null>> & {
    repoLocator?: Readonly<Record<string, unknown>> | null;
  };

/** Locator fields with sorted keys; null and absent fields are the same. */
const canonicalLocator = (locator: Readonly<Record<string, unknown>> | null | undefined): JsonObject | null => {
  if (!locator) return null;
  const out: JsonObject = {};
  for (const key of Object.keys(locator).sort()) {
    const value = locator[key];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = value;
  }
  return out;
};

const canonicalTemplate = (t: ComparableTemplate): JsonValue => {
  const out: JsonObject = {
    tag: t.tag,
    name: t.name ?? null,
    description: t.description ? t.description : SCAFFOLDER_DEFAULTS.description,
    type: t.type ?? null,
    labels: [...new Set(t.labels ?? SCAFFOLDER_DEFAULTS.labels)].sort(),
    repoLocator: canonicalLocator(t.repoLocator),
  };
  for (const field of BOOLEAN_FIELDS) out[field] = t[field] ?? SCAFFOLDER_DEFAULTS[field];
  return out;
};

/** Canonical form of a manifest. */
export const canonicalDesiredTemplate = (spec: ScaffolderTemplateManifest): JsonValue => canonicalTemplate(spec);

/** Canonical form of an API response. */
export const canonicalLiveTemplate = (state: LiveScaffolderTemplate): JsonValue => canonicalTemplate(state);

/** The body of `POST /api/v1/scaffolders`: the manifest as written, `labels` always sent (the API requires it). */
export const scaffolderRequestBody = (spec: ScaffolderTemplateManifest): JsonObject => {
  const body = JSON.parse(JSON.stringify(spec)) as JsonObject;
  body.labels = spec.labels ?? [];
  return body;
};
