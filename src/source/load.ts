/**
 * Loads every manifest under a root: discover, read, parse YAML with
 * positions, hand each document to the kind that owns the file, then check ids are unique per kind.
 * Never throws for bad input: every problem becomes a diagnostic, and callers fail closed on errors.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { type DesiredObject, type Diagnostic, hasErrors } from '../core/model.js';
import type { AnyKindModel, ParseContext } from '../core/kind-contract.js';
import { type DiscoveredFile, discoverManifests } from './discover.js';
import { keyTypos } from './key-typos.js';
import { lookalikeIdWarnings } from './lookalike-ids.js';
import { folderHint, unownedYamlDiagnostics } from './unowned.js';
import { layoutFolderProblems } from './layout-folders.js';
import { capQuotedValues } from './excerpt.js';
import { readRegularFile } from './regular-file.js';
import type { FileLoadResult, ManifestCache } from './manifest-cache.js';
import { listingAfterNotedChanges, type NotedListing } from './noted-changes.js';
import { DEFAULT_PARSE_LIMITS, fileTooLarge, type ParseLimits, parseManifestFile } from './yaml.js';

interface LoadOptions {
  /** Size and alias limits for each file. */
  limits?: Partial<ParseLimits>;
  /** The time parsers judge dates against (milliseconds since the epoch); defaults to now. */
  now?: number;
  /**
   * Results kept from earlier loads of the same root (owned by the caller, e.g. a watcher): files
   * unchanged since are not read again, and files gone are forgotten. See `manifest-cache.ts`.
   */
  cache?: ManifestCache;
  /**
   * With `cache`: trust the changes noted to it (`ManifestCache.noteChanges`): the root is not
   * walked and files not named are not looked at, unless only a walk can tell (`noted-changes.ts`).
   */
  onlyNotedChanges?: boolean;
  /** A root with no manifest is a warning, not an error (`--allow-empty`; `unowned.ts`). */
  allowEmpty?: boolean;
}

export interface LoadResult {
  /** Valid objects, in file order; of duplicated ids only the first declaration is kept. */
  objects: DesiredObject[];
  /** Every problem found, errors and warnings, in file order (duplicate-id errors last). */
  diagnostics: Diagnostic[];
  /** The manifest files read, relative to the root, sorted. */
  files: string[];
  /**
   * The paths found where manifests would be that could not be read as manifests or folders of
   * them (a FIFO, a dangling symlink, a `.cortex/catalog` that is a file), relative (`''`: the
   * root), sorted; each has an error among `diagnostics`.
   */
  unreadable: string[];
}

interface FileResult {
  objects: DesiredObject[];
  diagnostics: Diagnostic[];
}

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads, parses and validates one file with the handler that owns it. Reads are synchronous: for
 * thousands of small files that is several times faster than the thread pool, and the loader
 * yields to the event loop between batches.
 */
const loadFile = (
  realRoot: string,
  found: DiscoveredFile,
  handler: AnyKindModel,
  limits: ParseLimits,
  ctx: ParseContext,
): FileResult => {
  const file = found.relPath;
  const fail = (code: string, message: string): FileResult => ({
    objects: [],
    diagnostics: [{ severity: 'error', code, message, file, line: 1, column: 1, kind: handler.kind }],
  });
  const read = readRegularFile(found.realPath, { maxBytes: limits.maxFileBytes, inside: realRoot, resolved: true });
  if (!read.ok) {
    if (read.code === 'too-large')
      return {
        objects: [],
        diagnostics: [
          { ...fileTooLarge(file, read.size ?? limits.maxFileBytes + 1, limits.maxFileBytes), kind: handler.kind },
        ],
      };
    return fail(
      read.code === 'not-regular' || read.code === 'outside-root' ? 'unreadable-manifest' : 'read-failed',
      `${file} ${read.reason}; it is not read (a manifest that cannot be read must never look deleted)`,
    );
  }
  let text: string;
  try {
    text = utf8.decode(read.bytes);
  } catch {
    return fail('encoding', `${file} is not valid UTF-8 text`);
  }

  const parsed = parseManifestFile(file, text, limits);
  const result: FileResult = {
    objects: [],
    diagnostics: parsed.diagnostics.map((d) => ({ ...d, kind: handler.kind, ...emptyIsAnError(d) })),
  };
  for (const doc of parsed.documents) {
    try {
      const parsed = handler.manifest.parse(doc, ctx);
      const { objects, diagnostics } = withKeyTypos(parsed, keyTypos(handler.manifest.schema, doc), handler);
      result.objects.push(...objects);
      result.diagnostics.push(...diagnostics);
    } catch (error) {
      result.diagnostics.push({
        severity: 'error',
        code: 'internal',
        message: `the ${handler.title} parser failed on document ${doc.index + 1}: ${errorMessage(error)}`,
        file,
        line: doc.line,
        column: doc.column,
        kind: handler.kind,
      });
    }
  }
  result.diagnostics.sort(byPosition);
  return result;
};

/**
 * A document with keys that are typos of known ones (`key-typos.ts`) declares nothing: each typo is
 * an error, in place of what the kind said about the same key (a strict schema's "unknown key", an
 * entity's warning that the API drops it).
 */
const withKeyTypos = (parsed: FileResult, typos: readonly Diagnostic[], handler: AnyKindModel): FileResult => {
  if (typos.length === 0) return parsed;
  const at = (d: Diagnostic): string => `${d.line ?? 0}:${d.column ?? 0}:${d.field ?? ''}`;
  const typoAt = new Set(typos.map(at));
  const sameKey = (d: Diagnostic): boolean => (d.code === 'schema' || d.code === 'unknown-key') && typoAt.has(at(d));
  const id = parsed.objects[0]?.id ?? parsed.diagnostics.find((d) => d.id !== undefined)?.id;
  return {
    objects: [],
    diagnostics: [
      ...parsed.diagnostics.filter((d) => !sameKey(d)),
      ...typos.map((d) => ({ ...d, kind: handler.kind, ...(id !== undefined ? { id } : {}) })),
    ],
  };
};

/** Why listing failed: the error code only (an OS message may quote the path it resolved). */
const readFailure = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return code ?? errorMessage(error);
};

/**
 * A manifest location holding nothing (0 bytes, only comments, `---\n~`) is an error, not a
 * warning: a truncated or emptied file must not read as "this object was removed".
 */
const emptyIsAnError = (d: Diagnostic): Partial<Diagnostic> =>
  d.code === 'empty-manifest'
    ? {
        severity: 'error',
        message: `${d.file ?? 'the file'} is in a manifest location but declares nothing (empty, only comments, or an empty document); delete it or declare an object`,
      }
    : {};

/** Orders a file's diagnostics by line, then column (stable: same place keeps its order). */
const byPosition = (a: Diagnostic, b: Diagnostic): number =>
  (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);

/**
 * The longest the loader holds the event loop before it yields (keeps a long-lived process
 * responsive: a watcher of many sources runs the others' requests and timers in between; a count
 * of files would let a slow disk or a loaded machine stretch a turn to seconds).
 */
const TURN_MS = 10;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One error per id declared more than once in a kind, naming every declaration; keeps the first. */
const checkDuplicateIds = (objects: readonly DesiredObject[]): { kept: DesiredObject[]; diagnostics: Diagnostic[] } => {
  const byKey = new Map<string, DesiredObject[]>();
  for (const object of objects) {
    const key = `${object.kind}/${object.id}`;
    const group = byKey.get(key);
    if (group) group.push(object);
    else byKey.set(key, [object]);
  }
  const kept: DesiredObject[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const object of objects) {
    const group = byKey.get(`${object.kind}/${object.id}`) ?? [];
    if (group[0] === object) kept.push(object);
    if (group.length < 2 || group[1] !== object) continue;
    const places = group.map((o) => `${o.source.file}:${o.source.line}`);
    diagnostics.push({
      severity: 'error',
      code: 'duplicate-id',
      message: `${object.kind} \`${object.id}\` is declared ${group.length} times: ${places.join(', ')}`,
      file: object.source.file,
      line: object.source.line,
      column: object.source.column,
      kind: object.kind,
      id: object.id,
    });
  }
  return { kept, diagnostics };
};

/** What the load found under the root: the files, the real root, the YAML and JSON no kind owns, what was in the way. */
interface Found {
  discovered: DiscoveredFile[];
  realRoot: string;
  unownedYaml: string[];
  unownedJson: string[];
  /** The paths the walk could not read, relative to the root. */
  walkProblems: string[];
  /** Their errors (and, once listed, the unowned files' diagnostics first). */
  unreadable: Diagnostic[];
}

type Since = ReturnType<ManifestCache['changesSinceListing']>;

/** Every manifest file under the root, from the noted changes when they tell, else by a walk. */
const findFiles = async (
  root: string,
  handlers: readonly AnyKindModel[],
  owns: (file: string) => boolean,
  last: { since: Since; noted: NotedListing | undefined },
): Promise<Found> => {
  const { since, noted } = last;
  if (since !== undefined && noted !== undefined) {
    const { files: discovered, unownedYaml, unownedJson } = noted;
    return { discovered, realRoot: since.listing.realRoot, unownedYaml, unownedJson, walkProblems: [], unreadable: [] };
  }
  const discovery = await discoverManifests(root, owns);
  const folders = handlers.flatMap((h) => h.layout.folders ?? []);
  const problems = [...discovery.problems, ...(await layoutFolderProblems(discovery.realRoot, folders))];
  const unreadable = problems.map((problem): Diagnostic => ({
    severity: 'error',
    code: 'unreadable-manifest',
    message: `${problem.message}; fix or remove it (a manifest that cannot be read must never look deleted)`,
    ...(problem.relPath !== '' ? { file: problem.relPath, line: 1, column: 1 } : {}),
  }));
  return {
    discovered: discovery.files,
    realRoot: discovery.realRoot,
    unownedYaml: discovery.unownedYaml,
    unownedJson: discovery.unownedJson,
    walkProblems: problems.map((p) => p.relPath),
    unreadable,
  };
};

/** What reading the files of one load needs. */
interface Reading {
  realRoot: string;
  handlers: readonly AnyKindModel[];
  limits: ParseLimits;
  parseContext: ParseContext;
  cache: ManifestCache | undefined;
  since: Since;
  noted: NotedListing | undefined;
}

const ownersOf = (at: Reading, file: string): AnyKindModel[] => at.handlers.filter((h) => h.layout.ownsFile(file));

/** One file read by the one kind that owns it (through the cache when there is one). */
const routeFile = (at: Reading, found: DiscoveredFile): FileLoadResult => {
  const { realRoot, limits, parseContext, cache } = at;
  const file = found.relPath;
  const [handler, ...others] = ownersOf(at, file);
  if (handler === undefined) return { objects: [], diagnostics: [] };
  if (others.length > 0) {
    const kinds = [handler, ...others].map((h) => h.kind).join(', ');
    return {
      objects: [],
      diagnostics: [
        { severity: 'error', code: 'ambiguous-kind', message: `${file} is claimed by several kinds: ${kinds}`, file },
      ],
    };
  }
  if (!cache) return loadFile(realRoot, found, handler, limits, parseContext);
  const key = `${handler.kind} ${limits.maxFileBytes} ${limits.maxAliasCount}`;
  return cache.resolve(file, found.realPath, key, parseContext, (ctx) =>
    loadFile(realRoot, found, handler, limits, ctx),
  );
};

/** A manifest of another kind in this kind's folder fails to load: say where it belongs. */
const withKindHint = (at: Reading, found: DiscoveredFile, loaded: FileLoadResult): FileLoadResult => {
  const owners = ownersOf(at, found.relPath);
  const handler = owners[0];
  if (handler === undefined || owners.length > 1 || !hasErrors(loaded.diagnostics)) return loaded;
  if (loaded.diagnostics.some((d) => d.code.startsWith('yaml') || d.code === 'unreadable-manifest')) return loaded;
  const fits = at.handlers.find(
    (h) => h !== handler && !hasErrors(loadFile(at.realRoot, found, h, at.limits, at.parseContext).diagnostics),
  );
  if (fits === undefined) return loaded;
  const hint: Diagnostic = {
    severity: 'error',
    code: 'wrong-kind-folder',
    message: `${found.relPath} reads as a valid ${fits.kind} manifest, but no ${handler.kind} manifest: move it to ${folderHint(fits)}`,
    file: found.relPath,
    line: 1,
    column: 1,
  };
  return { ...loaded, diagnostics: [...loaded.diagnostics, hint] };
};

/** A file the noted changes did not name, as the last load returned it (undefined: read it). */
const unchanged = (at: Reading, found: DiscoveredFile): FileLoadResult | undefined => {
  const { since, noted, cache } = at;
  if (since === undefined || noted === undefined || noted.reread.has(found.relPath)) return undefined;
  const previous = since.listing.results.get(found.relPath);
  // Only a result the cache keeps: one that read the clock, or too fresh to trust, is read again.
  return previous !== undefined && cache?.keptResult(found.relPath) !== undefined ? previous : undefined;
};

/** Every file's result, in order, yielding to the event loop between batches. */
const readFiles = async (at: Reading, discovered: readonly DiscoveredFile[]) => {
  const results: FileLoadResult[] = [];
  const byFile = new Map<string, FileLoadResult>();
  let turnStarted = performance.now();
  for (const found of discovered) {
    if (performance.now() - turnStarted >= TURN_MS) {
      await nextTurn();
      turnStarted = performance.now();
    }
    const result = unchanged(at, found) ?? withKindHint(at, found, routeFile(at, found));
    results.push(result);
    byFile.set(found.relPath, result);
  }
  return { results, byFile };
};

/**
 * Loads and validates every manifest under `root` with the given kind handlers. A missing root,
 * an unreadable folder or file, invalid YAML or an invalid manifest becomes an error diagnostic.
 */
export const loadManifests = async (
  root: string,
  handlers: readonly AnyKindModel[],
  options: LoadOptions = {},
): Promise<LoadResult> => {
  const limits: ParseLimits = { ...DEFAULT_PARSE_LIMITS, ...options.limits };
  const parseContext: ParseContext = { now: options.now ?? Date.now() };
  // Before anything is awaited: a change noted from here on is for the next load.
  options.cache?.beginLoad();
  const rootError = (message: string): LoadResult => ({
    objects: [],
    files: [],
    unreadable: [],
    diagnostics: [{ severity: 'error', code: 'manifest-root', message }],
  });
  const stat = await fs.stat(root).catch(() => undefined);
  if (stat === undefined) return rootError(`manifest directory ${root} does not exist`);
  if (!stat.isDirectory()) return rootError(`manifest directory ${root} is not a directory`);

  const owns = (file: string): boolean => handlers.some((h) => h.layout.ownsFile(file));
  const listingKey = `${handlers.map((h) => h.kind).join(',')} ${limits.maxFileBytes} ${limits.maxAliasCount}`;
  const cache = options.cache;
  // A caller told of every change (the watcher) starts from the last listing: see `noted-changes.ts`.
  const since = options.onlyNotedChanges ? cache?.changesSinceListing(listingKey) : undefined;
  const noted = since && (await listingAfterNotedChanges(since.listing, since.changed, root, owns));
  let found: Found;
  try {
    found = await findFiles(root, handlers, owns, { since, noted });
  } catch (error) {
    return rootError(`cannot list the manifests under ${root}: ${readFailure(error)}`);
  }
  const { discovered, realRoot, unownedYaml, unownedJson, walkProblems, unreadable } = found;
  unreadable.unshift(
    ...unownedYamlDiagnostics(unownedYaml, discovered.length, handlers, {
      root,
      json: unownedJson,
      unreadable: walkProblems.length > 0,
      ...(options.allowEmpty === true ? { allowEmpty: true } : {}),
    }),
  );
  const files = discovered.map((f) => f.relPath);
  const reading: Reading = { realRoot, handlers, limits, parseContext, cache, since, noted };
  const { results, byFile } = await readFiles(reading, discovered);
  cache?.retain(files);
  // The next load may start from this listing when nothing was in the way of the walk and every
  // file was read where it was found (a symlink's target can change without an event for its path).
  // A listing after noted changes is so by construction: it starts from a listing kept only when
  // so, under the same real root, and adds only paths whose real path is where they were found;
  // the look at every file is for a walk (it was a path join per file on every change).
  const throughSymlink = noted === undefined && discovered.some((f) => f.realPath !== path.join(realRoot, f.relPath));
  cache?.endLoad(
    walkProblems.length === 0 && !throughSymlink
      ? { key: listingKey, realRoot, files: discovered, unownedYaml, unownedJson, results: byFile }
      : undefined,
    noted === undefined,
  );
  const objects = results.flatMap((r) => r.objects);
  const { kept, diagnostics: duplicates } = checkDuplicateIds(objects);
  const lookalikes = await lookalikeIdWarnings(kept, handlers);
  const diagnostics = [...unreadable, ...results.flatMap((r) => r.diagnostics), ...duplicates, ...lookalikes].map(
    (d) => ({
      ...d,
      message: capQuotedValues(d.message),
    }),
  );
  return { objects: kept, diagnostics, files, unreadable: [...new Set(walkProblems)].sort() };
};
