/**
 * The pure half of the `dependency` kind: API-managed dependency edges. One document under
 * `.cortex/dependencies/` names a caller and its edges; each edge is one object.
 */
import type {
  DeclaredWithin,
  KindExportModel,
  KindModel,
  ObjectReference,
  ParseResult,
} from '../../core/kind-contract.js';
import {
  type DesiredObject,
  type Diagnostic,
  objectKey,
  type ObjectKey,
  type ParsedDocument,
} from '../../core/model.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import { ownsFilesIn, YAML_OR_JSON_FILE } from '../shared/layout.js';
import { canonicalEdge, dependencyId, type EdgeKey } from './edges.js';
import { type DependencySpec, dependencyManifestSchema, type LiveDependency } from './schema.js';
import { edgeKeyOf, toManifestFiles } from './to-manifest.js';

export const KIND = 'dependency';

const parse = (doc: ParsedDocument): ParseResult<DependencySpec> => {
  const result = dependencyManifestSchema.safeParse(doc.value);
  if (!result.success) {
    return { objects: [], diagnostics: zodIssuesToDiagnostics(result.error.issues, doc, { kind: KIND }) };
  }
  const { callerTag, dependencies } = result.data;
  const objects = dependencies.map((edge, index): DesiredObject<DependencySpec> => {
    const spec: DependencySpec = {
      callerTag,
      calleeTag: edge.tag,
      ...(edge.method !== undefined ? { method: edge.method } : {}),
      ...(edge.path !== undefined ? { path: edge.path } : {}),
      ...(edge.description !== undefined ? { description: edge.description } : {}),
      ...(edge.metadata !== undefined ? { metadata: edge.metadata } : {}),
      index,
    };
    const at = doc.locate(['dependencies', index]);
    return { kind: KIND, id: dependencyId(spec), source: { file: doc.file, ...at }, spec, doc };
  });
  return { objects, diagnostics: [] };
};

const references = (obj: DesiredObject<DependencySpec>): ObjectReference[] => [
  { kind: 'entity', id: obj.spec.callerTag, field: 'callerTag', path: ['callerTag'], ordering: true },
  {
    kind: 'entity',
    id: obj.spec.calleeTag,
    field: `dependencies[${obj.spec.index}].tag`,
    path: ['dependencies', obj.spec.index, 'tag'],
    ordering: true,
  },
];

/** The identifying fields of a live edge (the method upper-cased, as manifests are). */
export const liveKey = (edge: LiveDependency) => ({
  callerTag: edge.callerTag,
  calleeTag: edge.calleeTag,
  ...(edge.method ? { method: edge.method.toUpperCase() } : {}),
  ...(edge.path ? { path: edge.path } : {}),
});

const liveKeyWithFields = (edge: LiveDependency) => ({
  ...liveKey(edge),
  description: edge.description,
  metadata: edge.metadata,
});

/**
 * Where the caller's descriptor (a desired entity) lists this edge in `x-cortex-dependency`, if it
 * does: Cortex then treats the edge as the descriptor's and refuses every API change to it.
 */
const inCallerDescriptor = (
  edge: EdgeKey,
  desiredOf: (key: ObjectKey) => DesiredObject | undefined,
): DeclaredWithin | undefined => {
  const caller = desiredOf(objectKey('entity', edge.callerTag));
  const info = (caller?.spec as { info?: { 'x-cortex-dependency'?: unknown } } | undefined)?.info;
  const declared = info?.['x-cortex-dependency'];
  if (caller === undefined || !Array.isArray(declared)) return undefined;
  const wanted = edgeKeyOf(edge.calleeTag, edge.method, edge.path);
  const index = declared.findIndex((item: unknown) => {
    const d = item as { tag?: unknown; method?: unknown; path?: unknown } | null;
    if (typeof d?.tag !== 'string') return false;
    return (
      edgeKeyOf(d.tag, typeof d.method === 'string' ? d.method : null, typeof d.path === 'string' ? d.path : null) ===
      wanted
    );
  });
  if (index < 0) return undefined;
  return { by: caller, field: `info.x-cortex-dependency[${index}]`, path: ['info', 'x-cortex-dependency', index] };
};

/**
 * An edge declared both under `.cortex/dependencies/` and in its caller's `x-cortex-dependency`:
 * Cortex refuses every API write to an edge a descriptor declares, so the apply would fail on
 * every run. One error per such edge, at the dependency manifest.
 */
const declaredTwice = (desired: readonly DesiredObject[]): Diagnostic[] => {
  const byKey = new Map<ObjectKey, DesiredObject>(desired.map((o) => [objectKey(o.kind, o.id), o]));
  const diagnostics: Diagnostic[] = [];
  for (const obj of desired) {
    if (obj.kind !== KIND) continue;
    const within = inCallerDescriptor((obj as DesiredObject<DependencySpec>).spec, (key) => byKey.get(key));
    if (!within) continue;
    const at = within.by.doc.locate(within.path);
    diagnostics.push({
      severity: 'error',
      code: 'dependency-declared-twice',
      message: `dependency \`${obj.id}\` is also declared in ${within.field} of entity \`${within.by.id}\` (${within.by.source.file}:${at.line}); Cortex refuses API changes to an edge a descriptor declares: keep it in one place`,
      file: obj.source.file,
      line: obj.source.line,
      column: obj.source.column,
      kind: KIND,
      id: obj.id,
    });
  }
  return diagnostics;
};

const LAYOUT_FOLDERS = ['dependencies'];

/** The pure half of the `dependency` kind. */
export const dependencyModel: KindModel<DependencySpec, LiveDependency> & {
  readonly export: KindExportModel<LiveDependency>;
} = {
  kind: KIND,
  title: 'dependency',
  refersTo: ['entity'],
  layout: {
    identity: 'caller, callee, method, path',
    folders: LAYOUT_FOLDERS,
    ownsFile: ownsFilesIn(LAYOUT_FOLDERS, YAML_OR_JSON_FILE),
  },
  manifest: {
    schema: dependencyManifestSchema,
    parse,
    references,
    canonical: (obj) => canonicalEdge(obj.spec),
    checkDesiredSet: declaredTwice,
    // An edge's id holds its API path, whose case matters.
    idsMayLookAlike: true,
  },
  live: { canonical: (obj) => canonicalEdge(liveKeyWithFields(obj.state)) },
  prune: {
    action: 'delete',
    declaredWithin: (live, desiredOf) => inCallerDescriptor(liveKey(live.state), desiredOf),
  },
  export: { toManifestFiles },
};
