/**
 * Small fake kinds for planner and renderer tests: plain objects implementing `KindHandler`, whose
 * manifests are `{state, refs?, type?}` and whose live objects carry `{state, type?}`.
 */
import type { DesiredObject, JsonObject, KindName, LiveObject, ParsedDocument } from '../../src/core/model.js';
import { reservedEntity, reservedEntityType } from '../../src/kinds/entity/records/names.js';
import { entityTypeModel } from '../../src/kinds/entity-type/model.js';
import type { KindHandler, ObjectReference } from '../../src/kinds/types.js';

export interface FakeSpec {
  state: JsonObject;
  refs?: ObjectReference[];
  /** Entity type (entities only). */
  type?: string;
}
export interface FakeLive {
  state: JsonObject;
  type?: string;
}

const TITLES: Record<KindName, string> = {
  'entity-type': 'entity type',
  entity: 'entity',
  dependency: 'dependency',
  'catalog-page': 'catalog page',
  initiative: 'Initiative',
  'scaffolder-template': 'Scaffolder template',
};

export function fakeHandler(kind: KindName, pruneAction: 'delete' | 'archive' = 'delete'): KindHandler {
  const handler: KindHandler<FakeSpec, FakeLive> = {
    kind,
    title: TITLES[kind] ?? kind,
    // What the real kinds say about built-in ids, types, reserved names and holds, on these fakes' shapes.
    ...(kind === 'entity-type' ? { builtInIds: entityTypeModel.builtInIds } : {}),
    layout: { ownsFile: () => false },
    manifest: {
      schema: undefined as never,
      parse: () => ({ objects: [], diagnostics: [] }),
      references: (obj) => obj.spec.refs ?? [],
      canonical: (obj) => obj.spec.state,
      ...(kind === 'entity'
        ? {
            typedBy: { kind: 'entity-type', typeOf: (obj) => ('spec' in obj ? obj.spec.type : obj.state.type) },
            reservedFor: (obj) => reservedEntity(obj.id, obj.spec.type),
          }
        : {}),
      ...(kind === 'entity-type' ? { reservedFor: (obj) => reservedEntityType(obj.id) } : {}),
    },
    live: { fetch: async () => [], canonical: (obj) => obj.state.state },
    write: { apply: async () => {} },
    prune: {
      action: pruneAction,
      ...(kind === 'entity-type' ? { keptWhileHeld: entityTypeModel.prune.keptWhileHeld } : {}),
    },
  };
  return handler as KindHandler;
}

export const allHandlers = (entityPrune: 'delete' | 'archive' = 'archive'): KindHandler[] => [
  fakeHandler('entity-type'),
  fakeHandler('entity', entityPrune),
  fakeHandler('dependency'),
  fakeHandler('catalog-page'),
  fakeHandler('initiative'),
  fakeHandler('scaffolder-template'),
];

/** A document whose `locate(path)` answers from `positions` (keyed by the path joined with `.`), else its start. */
export function fakeDoc(file: string, line: number, positions: Record<string, [number, number]> = {}): ParsedDocument {
  return {
    file,
    index: 0,
    line,
    column: 1,
    value: {},
    locate: (path) => {
      const hit = positions[path.map(String).join('.')];
      return hit ? { line: hit[0], column: hit[1] } : { line, column: 1 };
    },
  };
}

export function desired(
  kind: KindName,
  id: string,
  spec: FakeSpec,
  where: { file?: string; line?: number; positions?: Record<string, [number, number]> } = {},
): DesiredObject {
  const file = where.file ?? `.cortex/${kind}/${id}.yaml`;
  const line = where.line ?? 1;
  return { kind, id, source: { file, line, column: 1 }, spec, doc: fakeDoc(file, line, where.positions) };
}

export function live(
  kind: KindName,
  id: string,
  state: JsonObject,
  extra: Partial<Omit<LiveObject, 'kind' | 'id' | 'state'>> & { type?: string } = {},
): LiveObject {
  const { type, ...rest } = extra;
  const value: FakeLive = type === undefined ? { state } : { state, type };
  return { kind, id, state: value, ...rest };
}

/** An ordering reference from a manifest field. */
export const ref = (
  kind: ObjectReference['kind'],
  id: string,
  field: string,
  extra: Partial<ObjectReference> = {},
): ObjectReference => ({
  kind,
  id,
  field,
  path: field.split('.'),
  ordering: true,
  ...extra,
});
