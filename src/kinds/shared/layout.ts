/**
 * Which files of the repository layout a kind reads, from the folders it declares
 * (`layout.folders`): every file under `.cortex/<folder>/` at the manifest root, at any
 * depth, with one of the kind's extensions. The entity kind also reads `cortex.yaml` anywhere
 * (`entity/files.ts`).
 */

/** `.yaml` and `.yml`, in any case. */
export const YAML_FILE = /\.ya?ml$/i;
/** `.yaml`, `.yml` and `.json`, in any case. */
export const YAML_OR_JSON_FILE = /\.(ya?ml|json)$/i;

/** `layout.ownsFile` of a kind whose manifests live in `folders` of `.cortex/` (asked of every file, every run). */
export const ownsFilesIn = (folders: readonly string[], extension: RegExp) => {
  const prefixes = folders.map((folder) => `.cortex/${folder}/`);
  return (relPath: string): boolean => prefixes.some((prefix) => relPath.startsWith(prefix)) && extension.test(relPath);
};
