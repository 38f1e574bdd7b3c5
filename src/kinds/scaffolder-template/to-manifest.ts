/**
 * Live Scaffolder templates → manifests under `.cortex/scaffolders/` (`export`). Pure.
 *
 * Left out: the server's `id`/`cid` and dates, fields the manifest schema does not know, and
 * every field that holds its server default (`SCAFFOLDER_DEFAULTS`: no description, no labels,
 * the flags `false`), since a manifest without them gets the same defaults.
 */
import { manifestPath } from '../../export/file-name.js';
import type { JsonObject, LiveObject } from '../../core/model.js';
import type { ManifestFile } from '../types.js';
import { SCAFFOLDER_DEFAULTS } from './normalize.js';
import type { LiveScaffolderTemplate } from './schema.js';

const FOLDER = '.cortex/scaffolders';

const FLAGS = ['requireNewService', 'requirePullRequest', 'createYamlFile', 'showReadme', 'strictAliasUsage'] as const;
/** GitHub locators take only these fields (the manifest schema is strict for them). */
const GITHUB_LOCATOR_FIELDS = ['org', 'repoName', 'url'];

const locatorOf = (locator: LiveScaffolderTemplate['repoLocator']): JsonObject => {
  const out: JsonObject = {};
  if (!locator) return out;
  const type = locator.type;
  if (typeof type === 'string') out.type = type;
  const fields = Object.keys(locator).filter((k) => k !== 'type');
  const allowed = type === 'GITHUB' ? GITHUB_LOCATOR_FIELDS.filter((k) => fields.includes(k)) : fields.sort();
  for (const key of allowed) {
    const value = locator[key];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = value;
  }
  return out;
};

/** The manifest document of one live template, keys in the order of the API's payload. */
export const scaffolderManifestDocument = (obj: LiveObject<LiveScaffolderTemplate>): JsonObject => {
  const t = obj.state;
  const document: JsonObject = { tag: t.tag, name: t.name || t.tag };
  if (t.description) document.description = t.description;
  if (t.type) document.type = t.type;
  const labels = t.labels ?? SCAFFOLDER_DEFAULTS.labels;
  if (labels.length > 0) document.labels = [...labels];
  document.repoLocator = locatorOf(t.repoLocator);
  for (const flag of FLAGS) {
    const value = t[flag] ?? SCAFFOLDER_DEFAULTS[flag];
    if (value !== SCAFFOLDER_DEFAULTS[flag]) document[flag] = value;
  }
  return document;
};

/** One file per template, named by its tag. */
export const toManifestFiles = (live: readonly LiveObject<LiveScaffolderTemplate>[]): ManifestFile[] =>
  live.map((obj) => ({
    path: manifestPath(FOLDER, obj.id),
    document: scaffolderManifestDocument(obj),
    ids: [obj.id],
  }));
