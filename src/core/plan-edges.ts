/**
 * The ordering edges of a plan (pure): every `ordering: true` reference of a desired object, plus
 * each live object's type (`manifest.typedBy`: the only reference readable from live state). A referenced object's
 * update goes first unless its kind's `write.updateOrder` says it must wait for the referrer's write
 * (an entity type that tightens its schema goes after the entities that satisfy it once
 * rewritten); then the edge is turned round, and so are the edges of the object's referrers for
 * which either order works. Also reports desired objects that reference an object the plan removes.
 */
import type { KindModel, ObjectReference, UpdateOrder } from './kind-contract.js';
import { type Change, type DesiredObject, type Diagnostic, type KindName, type ObjectKey, objectKey } from './model.js';
import type { OrderingEdge } from './order.js';
import { referencesOf } from './references.js';

interface PlanEdges {
  edges: OrderingEdge[];
  /** Objects whose update was turned round to wait for a referrer. */
  turned: ObjectKey[];
  diagnostics: Diagnostic[];
}

interface Pair {
  from: ObjectKey;
  to: ObjectKey;
  at?: { obj: DesiredObject; ref: ObjectReference };
}

const isWrite = (c: Change): boolean => c.action === 'create' || c.action === 'update';

/**
 * The edges of the plan (see the module comment). `turnRound: false` keeps every update first
 * (the fallback when turning one round would close a cycle).
 */
export function collectEdges(
  desired: ReadonlyMap<ObjectKey, DesiredObject>,
  changes: ReadonlyMap<ObjectKey, Change>,
  handlerOf: (kind: KindName) => KindModel,
  options: { turnRound: boolean },
): PlanEdges {
  const diagnostics: Diagnostic[] = [];
  const pairs: Pair[] = [];
  const seen = new Set<string>();
  const addPair = (pair: Pair): void => {
    const id = `${pair.from}|${pair.to}`;
    if (seen.has(id)) return;
    seen.add(id);
    pairs.push(pair);
  };
  for (const [from, obj] of desired) {
    for (const ref of referencesOf(handlerOf(obj.kind), obj)) {
      const to = objectKey(ref.kind, ref.id);
      if (ref.ordering) addPair({ from, to, at: { obj, ref } });
      const target = changes.get(to);
      if (target && (target.action === 'delete' || target.action === 'archive')) {
        diagnostics.push(referenceToRemoved(obj, ref, target.action, handlerOf));
      }
    }
  }
  for (const [from, change] of changes) {
    const l = change.live;
    if (!l || change.action === 'noop') continue;
    const typedBy = handlerOf(l.kind).manifest.typedBy;
    const type = typedBy?.typeOf(l);
    if (typedBy !== undefined && type !== undefined) addPair({ from, to: objectKey(typedBy.kind, type) });
  }

  const orders = new Map<Pair, UpdateOrder>();
  const needsAfter = new Set<ObjectKey>();
  for (const pair of pairs) {
    const order = updateOrderOf(pair, changes, handlerOf);
    if (!order) continue;
    orders.set(pair, order);
    if (order.order === 'after') needsAfter.add(pair.to);
    if (order.conflict) diagnostics.push(conflictWarning(pair, order.conflict, changes));
  }
  const edges: OrderingEdge[] = [];
  for (const pair of pairs) {
    const order = orders.get(pair)?.order;
    const turn = options.turnRound && (order === 'after' || (order === 'either' && needsAfter.has(pair.to)));
    edges.push(turn ? { from: pair.to, to: pair.from } : { from: pair.from, to: pair.to });
  }
  return { edges, turned: options.turnRound ? [...needsAfter].sort() : [], diagnostics };
}

/** What the referenced object's kind says about an update of it and a write of the referrer. */
const updateOrderOf = (
  pair: Pair,
  changes: ReadonlyMap<ObjectKey, Change>,
  handlerOf: (kind: KindName) => KindModel,
): UpdateOrder | undefined => {
  const source = changes.get(pair.from);
  const target = changes.get(pair.to);
  if (target?.action !== 'update' || !target.desired || !target.live) return undefined;
  if (!source?.desired || !isWrite(source)) return undefined;
  return handlerOf(target.kind).write?.updateOrder?.(
    { desired: target.desired, live: target.live },
    { desired: source.desired, ...(source.live ? { live: source.live } : {}) },
  );
};

const conflictWarning = (pair: Pair, message: string, changes: ReadonlyMap<ObjectKey, Change>): Diagnostic => {
  const source = changes.get(pair.from)!;
  const where = source.desired!.source;
  const pos = pair.at ? pair.at.obj.doc.locate(pair.at.ref.path) : where;
  return {
    severity: 'warning',
    code: 'write-order-conflict',
    message,
    file: where.file,
    line: pos.line,
    column: pos.column,
    ...(pair.at ? { field: pair.at.ref.field } : {}),
    kind: source.kind,
    id: source.id,
  };
};

/** The warning when an update had to go first after all (waiting would close a cycle). */
export const firstAnyway = (key: ObjectKey): Diagnostic => ({
  severity: 'warning',
  code: 'write-order-conflict',
  message: `${key} is updated before the objects that reference it: writing it after them would close a cycle with their other references, so the API may refuse it (for an entity type: --force-entity-type-schema, or two commits)`,
});

function referenceToRemoved(
  obj: DesiredObject,
  ref: ObjectReference,
  action: 'delete' | 'archive',
  handlerOf: (kind: KindName) => KindModel,
): Diagnostic {
  const title = handlerOf(ref.kind).title;
  const pos = obj.doc.locate(ref.path);
  return {
    severity: action === 'delete' ? 'error' : 'warning',
    code: 'reference-to-pruned',
    message: `${ref.field} references ${title} \`${ref.id}\`, whose manifest was removed; this plan would ${action} it`,
    file: obj.source.file,
    line: pos.line,
    column: pos.column,
    field: ref.field,
    kind: obj.kind,
    id: obj.id,
  };
}
