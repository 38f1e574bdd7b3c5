/**
 * Files that look meant as manifests but that no kind reads, said out loud. Errors, because
 * `--prune` would otherwise delete the objects they were meant to declare: a YAML file under
 * `.cortex/` (a typo'd folder such as `.cortex/scaffolder/`, with the folder it probably meant), a
 * descriptor named in another case (`Cortex.yaml`), a `.json` file where the layout reads YAML
 * (`cortex.json`, `.cortex/catalog/x.json`). Warnings: YAML under a `cortex/` folder without the
 * dot (`cortex/catalog/`: a folder of that name may be something else), and a root where no
 * manifest was found at all, naming what was looked for and where.
 */
import { closest, distance } from 'fastest-levenshtein';
import type { KindModel } from '../core/kind-contract.js';
import type { Diagnostic } from '../core/model.js';
import { countOf, pluralOf } from '../core/plural.js';

/** The settings file at the manifest root (`engine/config-file.ts` reads it): no manifest, and no stray YAML either. */
export const SETTINGS_FILE = 'cortex-sync.yaml';

/** What the layout messages need of a kind: the files and folders it reads, and its name. */
type LayoutOf = Pick<KindModel, 'kind' | 'title' | 'layout'>;

/** A `cortex.yaml` at the root: the kind that reads it reads descriptors anywhere. */
const DESCRIPTOR = 'cortex.yaml';

/**
 * The `.cortex/` folders of the layout, as the kinds declare them: those of the kind that reads
 * `cortex.yaml` descriptors first (messages name the descriptors first), then the others in the
 * kinds' order.
 */
const layoutFoldersOf = (kinds: readonly LayoutOf[]): string[] => {
  const first = kinds.filter((k) => k.layout.ownsFile(DESCRIPTOR));
  const rest = kinds.filter((k) => !k.layout.ownsFile(DESCRIPTOR));
  return [...new Set([...first, ...rest].flatMap((k) => k.layout.folders ?? []))];
};

/** How many stray files outside `.cortex/` one warning names. */
const NAMED = 5;

/** Where the layout was looked for, and the JSON files found where manifests would be. */
interface UnownedContext {
  /** The manifest root as the user gave it, named in the warning for a root that holds nothing. */
  root?: string;
  /** JSON files where a manifest would be (`cortex.json`, `.json` under `.cortex/`) that no kind reads. */
  json?: readonly string[];
  /** Some path could not be read (reported elsewhere): "no manifests found" would say less than that does. */
  unreadable?: boolean;
  /**
   * A root with no manifest is a deliberate empty repository (`--allow-empty`): a warning. Else it
   * is an error, as Terraform's "No configuration files": a mistyped folder must never look like
   * a repository that declares nothing (which an apply with prune would act on).
   */
  allowEmpty?: boolean;
}

/** What follows "no manifests found …" when that is an error. */
const EMPTY_ON_PURPOSE =
  'applying no manifests would prune everything this source manages; if the repository is empty on purpose, pass --allow-empty';

const DESCRIPTOR_NAME = /^cortex\.ya?ml$/i;
const baseName = (file: string): string => file.slice(file.lastIndexOf('/') + 1);

/** The layout, for messages: `cortex.yaml / cortex.yml files at any depth and YAML files in .cortex/catalog/, …`. */
const layoutText = (folders: readonly string[]): string =>
  `cortex.yaml / cortex.yml files at any depth, and YAML files in ${folders.map((f) => `.cortex/${f}/`).join(', ')}`;

export const unownedYamlDiagnostics = (
  unowned: readonly string[],
  manifestsFound: number,
  kinds: readonly LayoutOf[],
  context: UnownedContext = {},
): Diagnostic[] => {
  const ownsFile = (relPath: string): boolean => kinds.some((k) => k.layout.ownsFile(relPath));
  const folders = layoutFoldersOf(kinds).filter((f) => ownsFile(`.cortex/${f}/x.yaml`));
  const descriptorKind = kinds.find((k) => k.layout.ownsFile(DESCRIPTOR));
  const diagnostics: Diagnostic[] = [];
  const elsewhere: string[] = [];
  /** `cortex/catalog/` (no dot) → the YAML files found in it. */
  const undotted = new Map<string, number>();
  const notRead = (file: string, message: string, severity: Diagnostic['severity'] = 'error'): void => {
    diagnostics.push({ severity, code: 'unowned-manifest', message, file, line: 1, column: 1 });
  };
  const NOTHING_APPLIED = '(nothing is applied or pruned until it is renamed, moved or removed)';
  for (const file of unowned) {
    if (file === SETTINGS_FILE) continue;
    const name = baseName(file);
    if (DESCRIPTOR_NAME.test(name)) {
      notRead(
        file,
        `${file} is not read: an entity descriptor is named cortex.yaml or cortex.yml, in lower case ${NOTHING_APPLIED}`,
      );
      continue;
    }
    const inCortex = /^(.*\/)?\.cortex\/(.*)$/.exec(file);
    if (!inCortex) {
      const undottedFolder = /^((?:.*\/)?cortex\/([^/]+)\/)/.exec(file);
      if (undottedFolder?.[1] !== undefined && folders.includes(undottedFolder[2] ?? ''))
        undotted.set(undottedFolder[1], (undotted.get(undottedFolder[1]) ?? 0) + 1);
      else elsewhere.push(file);
      continue;
    }
    const below = inCortex[1];
    if (below !== undefined) {
      notRead(
        file,
        `${file} is in a .cortex/ folder below the manifest root, and only the root’s .cortex/ is read (is ${below.slice(0, -1)} the manifest root, for --dir?) (nothing is applied or pruned until it is moved or removed)`,
      );
      continue;
    }
    const rest = inCortex[2] ?? '';
    const folder = rest.includes('/') ? rest.slice(0, rest.indexOf('/')) : undefined;
    const guess = folder !== undefined && folders.length > 0 ? closest(folder, folders) : undefined;
    const hint =
      folder === undefined
        ? `manifests go in a folder of .cortex/ (${folders.map((f) => `.cortex/${f}/`).join(', ')})`
        : guess !== undefined && distance(folder, guess) <= 3
          ? `did you mean \`.cortex/${guess}/\`?`
          : `the folders read are ${folders.map((f) => `.cortex/${f}/`).join(', ')}`;
    notRead(
      file,
      `${file} is under .cortex/ but no kind reads it: ${hint} (nothing is applied or pruned until it is moved or removed)`,
    );
  }
  for (const file of context.json ?? []) {
    const inCortex = /(^|\/)\.cortex\//.test(file);
    notRead(
      file,
      inCortex
        ? `${file} is under .cortex/ but no kind reads .json there: manifests in ${folders
            .filter((f) => !ownsFile(`.cortex/${f}/x.json`))
            .map((f) => `.cortex/${f}/`)
            .join(', ')} are YAML (.yaml or .yml) ${NOTHING_APPLIED}`
        : `${file} is not read: an entity descriptor is YAML, named cortex.yaml or cortex.yml ${NOTHING_APPLIED}`,
    );
  }
  for (const [folder, count] of undotted) {
    const meant = `.cortex/${folder.slice(folder.lastIndexOf('cortex/') + 'cortex/'.length)}`;
    diagnostics.push({
      severity: 'warning',
      code: 'unowned-manifest',
      message: `${folder} holds ${countOf(count, 'YAML file')} that ${count === 1 ? 'is' : 'are'} not read: the layout's folders are under .cortex/, with a dot; did you mean ${meant}?`,
      file: folder.replace(/\/$/, ''),
    });
  }
  // A path that could not be read may hold the manifests: "no manifests found" would say more than is known.
  if (context.unreadable) return diagnostics;
  const severity: Diagnostic['severity'] = context.allowEmpty === true ? 'warning' : 'error';
  const ending = severity === 'error' ? `; ${EMPTY_ON_PURPOSE}` : '';
  if (manifestsFound === 0 && elsewhere.length > 0) {
    const named = elsewhere.slice(0, NAMED).join(', ');
    const more = elsewhere.length > NAMED ? ` and ${elsewhere.length - NAMED} more` : '';
    diagnostics.push({
      severity,
      code: 'no-manifests',
      message: `no manifests found, but ${countOf(elsewhere.length, 'YAML file')} no kind reads: ${named}${more}. ${descriptorsText(descriptorKind)}other kinds from their .cortex/ folders (see the repository layout in the README)${ending}`,
    });
  } else if (manifestsFound === 0 && !diagnostics.some((d) => d.severity === 'error')) {
    diagnostics.push({
      severity,
      code: 'no-manifests',
      message: `no manifests found${context.root !== undefined ? ` in ${context.root}` : ''}: looked for ${layoutText(folders)}. Is --dir (or the working directory) the repository's manifest root?${severity === 'error' ? ` ${EMPTY_ON_PURPOSE.charAt(0).toUpperCase()}${EMPTY_ON_PURPOSE.slice(1)}` : ''}`,
    });
  }
  return diagnostics;
};

/** `Entities are read from cortex.yaml files and .cortex/catalog/, …; ` for the kind that reads descriptors. */
const descriptorsText = (kind: LayoutOf | undefined): string => {
  if (kind === undefined) return '';
  const title = pluralOf(kind.title);
  const folders = (kind.layout.folders ?? []).map((f) => `.cortex/${f}/`).join(', ');
  return `${title.charAt(0).toUpperCase()}${title.slice(1)} are read from cortex.yaml files${folders ? ` and ${folders}` : ''}; `;
};

/** Where a kind's manifests go: its `.cortex/` folder(s) of the layout, or `cortex.yaml` files. */
export const folderHint = (handler: Pick<LayoutOf, 'kind' | 'layout'>): string => {
  const folders = (handler.layout.folders ?? [])
    .filter((f) => handler.layout.ownsFile(`.cortex/${f}/x.yaml`))
    .map((f) => `.cortex/${f}/`);
  if (handler.layout.ownsFile(DESCRIPTOR)) folders.unshift('a cortex.yaml file');
  return folders.length > 0 ? folders.join(' or ') : `the ${handler.kind} folder of the layout`;
};
