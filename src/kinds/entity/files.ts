/**
 * Which manifest files hold entity descriptors (the README, "The repository layout"):
 * every `cortex.yaml` / `cortex.yml` anywhere, and every `*.yaml` / `*.yml` under the root's
 * `.cortex/catalog/`, `.cortex/domains/` or `.cortex/teams/` at any depth. Like the other kinds'
 * folders (`.cortex/entity-types/`, ...), `.cortex/` is the one at the manifest root.
 */

const DESCRIPTOR_NAMES = new Set(['cortex.yaml', 'cortex.yml']);
/** The folders of `.cortex/` whose YAML files are entity descriptors. */
export const ENTITY_FOLDERS: readonly string[] = ['catalog', 'domains', 'teams'];
const YAML_EXTENSION = /\.ya?ml$/;

/** Does the file at `relPath` (relative to the manifest root, `/` separators) hold entity descriptors? */
export const ownsEntityFile = (relPath: string): boolean => {
  const segments = relPath.split('/');
  const name = segments[segments.length - 1] ?? '';
  if (segments.includes('.git') || segments.includes('node_modules')) return false;
  if (DESCRIPTOR_NAMES.has(name)) return true;
  if (!YAML_EXTENSION.test(name)) return false;
  return segments.length >= 3 && segments[0] === '.cortex' && ENTITY_FOLDERS.includes(segments[1] ?? '');
};
