/**
 * Live Scaffolder templates → manifests under `.cortex/scaffolders/` (`export`). Pure.
 *
 * Left out: the server's `id`/`cid` and dates, fields the manifest schema does not know, an empty
 * description and empty labels (apply always sends `labels`, `[]` when the manifest has none).
 * The flags are written as the server answers them, `false` too: a POST replaces the template and
 * the server gives an omitted flag a default of its own (not documented), so a flag left out
 * would not be compared and the next write could turn a chosen `false` into that default.
 */
import { manifestPath } from '../shared/file-name.js';
import type { JsonObject, LiveObject } from '../../core/model.js';
import type { ManifestFile } from '../types.js';
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
const scaffolderManifestDocument = (obj: LiveObject<LiveScaffolderTemplate>): JsonObject => {
  const t = obj.state;
  const document: JsonObject = { tag: t.tag, name: t.name || t.tag };
  if (t.description) document.description = t.description;
  if (t.type) document.type = t.type;
  if (t.labels && t.labels.length > 0) document.labels = [...t.labels];
  document.repoLocator = locatorOf(t.repoLocator);
  for (const flag of FLAGS) {
    const value = t[flag];
    if (typeof value === 'boolean') document[flag] = value;
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
