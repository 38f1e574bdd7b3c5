/**
 * Which files `export` writes, from what was read. Pure.
 *
 * Each kind turns its live objects into manifest files (its `export.toManifestFiles`, in
 * `<kind>/to-manifest.ts`), in the registry's order. What is left out: objects of kinds not
 * asked for, objects a repository manages with `--only unmanaged`, objects another source id
 * manages unless `--include-other-sources` (another repository's objects are not this one's to
 * declare: applying them would be refused as an ownership conflict, or take them over),
 * archived entities unless asked for, and objects the output directory already declares (in a
 * file of its own: writing them again would declare them twice). An object whose manifest could
 * not be written, or would not pass `validate` (each file is parsed back by its kind, as `validate`
 * does), is skipped with the reason: one such object never fails the export whole.
 */
import { CortexSyncError } from '../core/errors.js';
import type { KindName, LiveObject } from '../core/model.js';
import type { AnyKindHandler, ManifestFile } from '../kinds/types.js';
import { parseManifestFile } from '../source/yaml.js';
import { manifestText } from './render.js';
import { type SchemaBase, SCHEMAS_BESIDE, schemaReference } from './schema-ref.js';

export type ExportScope = 'unmanaged' | 'all';

interface ExportSelection {
  /** The kinds, in the order their files are made; a kind without `export.toManifestFiles` exports nothing. */
  handlers: readonly AnyKindHandler[];
  kinds: ReadonlySet<KindName>;
  only: ExportScope;
  includeArchived: boolean;
  /** `kind/id` → the file of the output directory that already declares it. */
  declared: ReadonlyMap<string, string>;
  /** The source id the output directory is for; objects it manages are exported. */
  sourceId?: string;
  /** Export objects other source ids manage too (asked for explicitly). */
  includeOtherSources?: boolean;
  /** The run's time, for the kinds' checks of what is written (an Initiative's target date). */
  now: number;
  /** Where each file's schema line points (default: the schemas written beside the export). */
  schemaBase?: SchemaBase;
}

/** An object left out because its manifest could not be written as one `validate` accepts. */
interface Skipped {
  kind: KindName;
  id: string;
  reason: string;
}

export interface ExportFile {
  kind: KindName;
  /** Relative to the output directory, `/` separators. */
  path: string;
  text: string;
  ids: string[];
}

interface ExportFiles {
  files: ExportFile[];
  /** Objects left out because the output directory already declares them: `kind/id` → file. */
  alreadyDeclared: { key: string; file: string }[];
  /** Objects left out because a repository manages them (`--only unmanaged`). */
  managedElsewhere: number;
  /** Objects left out because another source id manages them, and those source ids (sorted). */
  otherSources: { count: number; sourceIds: string[] };
  /** Objects left out because their manifest would not be valid (see the module comment). */
  skipped: Skipped[];
}

/** An identity of dots only: every request about it would name another endpoint (`.`, `..`). */
const DOTS_ONLY = /^\.+$/;
const DOTS_ONLY_REASON =
  'its identity is dots only, which no request path can hold (`..` names another endpoint once the URL is resolved): a manifest of it could never be applied';

/** The files of `objects`; an object whose file cannot be made is skipped (each tried alone, then). */
const filesOf = (handler: AnyKindHandler, objects: readonly LiveObject[], skipped: Skipped[]): ManifestFile[] => {
  if (handler.export?.toManifestFiles === undefined) return [];
  const make = (some: readonly LiveObject[]): ManifestFile[] => handler.export?.toManifestFiles?.(some) ?? [];
  try {
    return make(objects);
  } catch {
    return objects.flatMap((o) => {
      try {
        return make([o]);
      } catch (error) {
        skipped.push({ kind: handler.kind, id: o.id, reason: (error as Error).message });
        return [];
      }
    });
  }
};

/** The first error `validate` would report for `text`, read back as `path`; undefined when none. */
const invalidReason = (handler: AnyKindHandler, path: string, text: string, now: number): string | undefined => {
  const parsed = parseManifestFile(path, text);
  const errors = [
    ...parsed.diagnostics,
    ...parsed.documents.flatMap((doc) => handler.manifest.parse(doc, { now }).diagnostics),
  ].filter((d) => d.severity === 'error');
  const first = errors[0];
  if (first === undefined) return undefined;
  return `${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}: its manifest would not pass validate`;
};

/** The files to write (see the module comment). Throws if two objects would share a file (a bug). */
export const exportFiles = (live: readonly LiveObject[], selection: ExportSelection): ExportFiles => {
  const alreadyDeclared: { key: string; file: string }[] = [];
  let managedElsewhere = 0;
  let otherCount = 0;
  const otherIds = new Set<string>();
  const files: ExportFile[] = [];
  const skipped: Skipped[] = [];
  for (const handler of selection.handlers) {
    const kind = handler.kind;
    if (!selection.kinds.has(kind) || !handler.export?.toManifestFiles) continue;
    const chosen = live.filter((o) => {
      if (o.kind !== kind) return false;
      if (o.archived && !selection.includeArchived) return false;
      if (selection.only === 'unmanaged' && o.owner !== undefined) {
        managedElsewhere++;
        return false;
      }
      if (o.owner !== undefined && o.owner !== selection.sourceId && !selection.includeOtherSources) {
        otherCount++;
        otherIds.add(o.owner);
        return false;
      }
      const file = selection.declared.get(`${kind}/${o.id}`);
      if (file !== undefined) alreadyDeclared.push({ key: `${kind}/${o.id}`, file });
      return file === undefined;
    });
    const sorted = [...chosen]
      .filter((o) => {
        if (!DOTS_ONLY.test(o.id)) return true;
        skipped.push({ kind, id: o.id, reason: DOTS_ONLY_REASON });
        return false;
      })
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const file of filesOf(handler, sorted, skipped)) {
      const ref = schemaReference(selection.schemaBase ?? SCHEMAS_BESIDE, kind, file.path);
      const text = manifestText(kind, file.document, ref);
      const invalid = invalidReason(handler, file.path, text, selection.now);
      if (invalid !== undefined) skipped.push(...file.ids.map((id) => ({ kind, id, reason: invalid })));
      else files.push({ kind, path: file.path, text, ids: file.ids });
    }
  }
  const seen = new Map<string, string>();
  for (const file of files) {
    const key = file.path.toLowerCase();
    const other = seen.get(key);
    if (other !== undefined) {
      throw new CortexSyncError('INTERNAL', `export would write ${file.path} twice (also for ${other})`);
    }
    seen.set(key, `${file.kind} ${file.ids.join(', ')}`);
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    files,
    alreadyDeclared,
    managedElsewhere,
    otherSources: { count: otherCount, sourceIds: [...otherIds].sort() },
    skipped,
  };
};
