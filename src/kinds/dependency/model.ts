/**
 * The pure half of the `dependency` kind: API-managed dependency edges. One document under
 * `.cortex/dependencies/` names a caller and its edges; each edge is one object.
 */
import type { KindModel, ObjectReference, ParseResult } from '../../core/kind-contract.js';
import type { DesiredObject, ParsedDocument } from '../../core/model.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import { canonicalEdge, dependencyId } from './edges.js';
import { type DependencySpec, dependencyManifestSchema, type LiveDependency } from './schema.js';
import { toManifestFiles } from './to-manifest.js';

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

/** The pure half of the `dependency` kind. */
export const dependencyModel: KindModel<DependencySpec, LiveDependency> = {
  kind: KIND,
  title: 'dependency',
  manifestSchema: dependencyManifestSchema,
  ownsFile: (relPath) => relPath.startsWith('.cortex/dependencies/') && /\.(ya?ml|json)$/i.test(relPath),
  parse,
  references,
  desiredState: (obj) => canonicalEdge(obj.spec),
  liveState: (obj) => canonicalEdge(liveKeyWithFields(obj.state)),
  pruneAction: 'delete',
  toManifestFiles,
};
