/**
 * Live dependency edges → manifests under `.cortex/dependencies/` (`export`). Pure.
 *
 * One file per caller, named by its tag, holding every edge given: `{callerTag, dependencies:
 * [{tag, method, path, description, metadata}]}`, edges sorted by callee, method and path. An
 * empty description and empty metadata are left out (they read the same as none); `method` and
 * `path` are written only together, as the manifest schema requires.
 *
 * Edges a caller's descriptor declares (`x-cortex-dependency`) are listed by the API like the
 * others; leaving those out is the caller's job (`export` does, with `descriptorEdgeKeys`).
 */
import { manifestPath } from '../shared/file-name.js';
import type { JsonObject, JsonValue, LiveObject } from '../../core/model.js';
import type { ManifestFile } from '../types.js';
import { dependencyId } from './edges.js';
import type { LiveDependency } from './schema.js';

const FOLDER = '.cortex/dependencies';

const isEmptyObject = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;

/** One edge as a manifest writes it, with the edge's plan id. */
const edgeEntry = (edge: LiveDependency): { id: string; entry: JsonObject } => {
  const endpoint = edge.method && edge.path ? { method: edge.method.toUpperCase(), path: edge.path } : undefined;
  const entry: JsonObject = { tag: edge.calleeTag, ...(endpoint ?? {}) };
  if (edge.description) entry.description = edge.description;
  if (edge.metadata !== undefined && edge.metadata !== null && !isEmptyObject(edge.metadata)) {
    entry.metadata = JSON.parse(JSON.stringify(edge.metadata)) as JsonValue;
  }
  const id = dependencyId({ callerTag: edge.callerTag, calleeTag: edge.calleeTag, ...(endpoint ?? {}) });
  return { id, entry };
};

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The edge keys (callee, METHOD, path) a descriptor's `x-cortex-dependency` declares, for filtering. */
export const descriptorEdgeKeys = (descriptor: unknown): Set<string> => {
  const info = (descriptor as { info?: { 'x-cortex-dependency'?: unknown } } | null)?.info;
  const declared = info?.['x-cortex-dependency'];
  const keys = new Set<string>();
  if (!Array.isArray(declared)) return keys;
  for (const item of declared) {
    const d = item as { tag?: unknown; method?: unknown; path?: unknown } | null;
    if (typeof d?.tag !== 'string') continue;
    keys.add(
      edgeKeyOf(d.tag, typeof d.method === 'string' ? d.method : null, typeof d.path === 'string' ? d.path : null),
    );
  }
  return keys;
};

/** The key `descriptorEdgeKeys` uses for one edge. */
export const edgeKeyOf = (
  calleeTag: string,
  method: string | null | undefined,
  path: string | null | undefined,
): string => JSON.stringify([calleeTag, method ? method.toUpperCase() : null, path ?? null]);

/** One file per caller (see the module comment). */
export const toManifestFiles = (live: readonly LiveObject<LiveDependency>[]): ManifestFile[] => {
  const byCaller = new Map<string, { id: string; entry: JsonObject; sortKey: string }[]>();
  for (const obj of live) {
    const { id, entry } = edgeEntry(obj.state);
    const sortKey = JSON.stringify([entry.tag, entry.method ?? '', entry.path ?? '']);
    const edges = byCaller.get(obj.state.callerTag) ?? [];
    if (!edges.some((e) => e.id === id)) edges.push({ id, entry, sortKey });
    byCaller.set(obj.state.callerTag, edges);
  }
  return [...byCaller.keys()].sort(compareText).map((callerTag) => {
    const edges = (byCaller.get(callerTag) ?? []).sort((a, b) => compareText(a.sortKey, b.sortKey));
    return {
      path: manifestPath(FOLDER, callerTag),
      document: { callerTag, dependencies: edges.map((e) => e.entry) },
      ids: edges.map((e) => e.id),
    };
  });
};
