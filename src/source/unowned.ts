/**
 * YAML files no kind reads, said out loud. Under `.cortex/` such a file is an error (a typo'd
 * folder such as `.cortex/scaffolder/` would otherwise drop its manifests silently, and `--prune`
 * would delete their objects), with the folder it probably meant. Elsewhere, when no manifest was
 * found at all, a warning names the layout (a `--dir` pointing at plain YAML files finds nothing).
 */
import { closest, distance } from 'fastest-levenshtein';
import type { Diagnostic } from '../core/model.js';
import { countOf } from '../core/plural.js';

/** The `.cortex/` folders of the layout; only those some kind owns are suggested. */
const LAYOUT_FOLDERS = [
  'catalog',
  'domains',
  'teams',
  'entity-types',
  'dependencies',
  'catalog-pages',
  'initiatives',
  'scaffolders',
] as const;

/** How many stray files outside `.cortex/` one warning names. */
const NAMED = 5;

export const unownedYamlDiagnostics = (
  unowned: readonly string[],
  manifestsFound: number,
  ownsFile: (relPath: string) => boolean,
): Diagnostic[] => {
  const folders = LAYOUT_FOLDERS.filter((f) => ownsFile(`.cortex/${f}/x.yaml`));
  const diagnostics: Diagnostic[] = [];
  const elsewhere: string[] = [];
  for (const file of unowned) {
    const inCortex = /^(?:.*\/)?\.cortex\/(.*)$/.exec(file);
    if (!inCortex) {
      elsewhere.push(file);
      continue;
    }
    const rest = inCortex[1] ?? '';
    const folder = rest.includes('/') ? rest.slice(0, rest.indexOf('/')) : undefined;
    const guess = folder !== undefined && folders.length > 0 ? closest(folder, folders) : undefined;
    const hint =
      folder === undefined
        ? `manifests go in a folder of .cortex/ (${folders.map((f) => `.cortex/${f}/`).join(', ')})`
        : guess !== undefined && distance(folder, guess) <= 3
          ? `did you mean \`.cortex/${guess}/\`?`
          : `the folders read are ${folders.map((f) => `.cortex/${f}/`).join(', ')}`;
    diagnostics.push({
      severity: 'error',
      code: 'unowned-manifest',
      message: `${file} is under .cortex/ but no kind reads it: ${hint} (nothing is applied or pruned until it is moved or removed)`,
      file,
      line: 1,
      column: 1,
    });
  }
  if (manifestsFound === 0 && elsewhere.length > 0) {
    const named = elsewhere.slice(0, NAMED).join(', ');
    const more = elsewhere.length > NAMED ? ` and ${elsewhere.length - NAMED} more` : '';
    diagnostics.push({
      severity: 'warning',
      code: 'no-manifests',
      message: `no manifests found, but ${countOf(elsewhere.length, 'YAML file')} no kind reads: ${named}${more}. Entities are read from cortex.yaml files and ${folders
        .slice(0, 3)
        .map((f) => `.cortex/${f}/`)
        .join(', ')}; other kinds from their .cortex/ folders (see the repository layout in the README)`,
    });
  }
  return diagnostics;
};

/** Where a kind's manifests go: its `.cortex/` folder(s) of the layout, or `cortex.yaml` files. */
export const folderHint = (handler: { kind: string; ownsFile: (relPath: string) => boolean }): string => {
  const folders = LAYOUT_FOLDERS.filter((f) => handler.ownsFile(`.cortex/${f}/x.yaml`)).map((f) => `.cortex/${f}/`);
  if (handler.ownsFile('cortex.yaml')) folders.unshift('a cortex.yaml file');
  return folders.length > 0 ? folders.join(' or ') : `the ${handler.kind} folder of the layout`;
};
