/**
 * Orders a plan's changes as a DAG (Kahn's algorithm), deterministically. Pure.
 *
 * The order has two phases:
 * 1. creates, updates (and the noops listed for completeness), in kind order, then id; a change
 *    waits for the creates/updates of the objects it references with an ordering edge;
 * 2. deletes and archives, after every create/update, in REVERSE kind order, then id; a delete
 *    waits for every change of an object that references the deleted one (reverse edge).
 *
 * The kind order is a parameter (core knows no kind): the registry's (`src/kinds/registry.ts`),
 * where every kind comes after the kinds it references.
 *
 * `waitsFor` holds only the direct edges (it is what a concurrent executor must respect between
 * changes of the same phase); the phase rule itself is expressed by `changePhase` — an executor
 * running changes concurrently starts a change of phase p only when every change of a lower phase
 * has finished.
 */
import { type Change, type KindName, type ObjectKey, objectKey } from './model.js';

/** `from` references `to` with an ordering edge (entity → its entity type, entity → owner team, ...). */
export interface OrderingEdge {
  from: ObjectKey;
  to: ObjectKey;
}

interface OrderedChanges {
  /** Every change, each with its `waitsFor`, in a valid execution order. */
  changes: Change[];
  /** Keys left over by a cycle (appended at the end, in tie order); empty when the graph is a DAG. */
  cyclic: ObjectKey[];
}

/** The kinds in apply order: each kind's writes form its place, its removals run in reverse. */
export type KindOrder = readonly KindName[];

/** A kind's place in `order`; a kind missing from it goes last (never happens with the registry's order). */
const kindIndex = (order: KindOrder, kind: KindName): number => {
  const index = order.indexOf(kind);
  return index < 0 ? order.length : index;
};

const isRemoval = (c: Change): boolean => c.action === 'delete' || c.action === 'archive';
const isWrite = (c: Change): boolean => c.action === 'create' || c.action === 'update';

/**
 * Execution phase of a change: 0 for creates, updates and noops; 1 + (reverse kind index) for
 * deletes and archives, so the last kind's deletes (1) run before the first kind's (its length):
 * with the registry's order, scaffolder-template deletes before entity deletes before entity-type
 * deletes.
 */
export function changePhase(change: Pick<Change, 'kind' | 'action'>, order: KindOrder): number {
  if (change.action === 'delete' || change.action === 'archive') {
    return 1 + Math.max(0, order.length - 1 - kindIndex(order, change.kind));
  }
  return 0;
}

/** Total tie order: phase, then kind order (already inside the phase), then id. */
const compareChangesIn =
  (order: KindOrder) =>
  (a: Change, b: Change): number => {
    const pa = changePhase(a, order);
    const pb = changePhase(b, order);
    if (pa !== pb) return pa - pb;
    const ka = kindIndex(order, a.kind);
    const kb = kindIndex(order, b.kind);
    if (ka !== kb) return ka - kb;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };

/**
 * Sets `waitsFor` on copies of `changes` from the ordering edges and returns them in execution
 * order. Edges to or from an object without a change, or to a noop, are ignored:
 * - `to` is a create/update and `from` a create/update → `from` waits for `to`;
 * - `to` is a delete/archive and `from` any non-noop change → `to` waits for `from`
 *   (an object is removed after everything that references it is applied or removed).
 */
export function orderChanges(
  changes: readonly Change[],
  edges: readonly OrderingEdge[],
  order: KindOrder,
): OrderedChanges {
  const compareChanges = compareChangesIn(order);
  const byKey = new Map<ObjectKey, Change>();
  for (const c of changes) byKey.set(objectKey(c.kind, c.id), { ...c, waitsFor: [] });

  const waits = new Map<ObjectKey, Set<ObjectKey>>();
  const addWait = (waiter: ObjectKey, target: ObjectKey): void => {
    if (waiter === target) return;
    let set = waits.get(waiter);
    if (!set) {
      set = new Set();
      waits.set(waiter, set);
    }
    set.add(target);
  };
  for (const { from, to } of edges) {
    const f = byKey.get(from);
    const t = byKey.get(to);
    if (!f || !t || f.action === 'noop' || t.action === 'noop') continue;
    if (isRemoval(t)) addWait(to, from);
    else if (isWrite(t) && isWrite(f)) addWait(from, to);
  }

  // Kahn's algorithm with a priority queue on the tie order.
  const indegree = new Map<ObjectKey, number>();
  const dependents = new Map<ObjectKey, ObjectKey[]>();
  for (const [key, change] of byKey) {
    const targets = [...(waits.get(key) ?? [])].sort((a, b) => compareChanges(byKey.get(a)!, byKey.get(b)!));
    change.waitsFor = targets;
    indegree.set(key, targets.length);
    for (const t of targets) {
      const list = dependents.get(t) ?? [];
      list.push(key);
      dependents.set(t, list);
    }
  }

  const heap = new ChangeHeap(compareChanges);
  for (const [key, n] of indegree) if (n === 0) heap.push(byKey.get(key)!);
  const ordered: Change[] = [];
  while (heap.size > 0) {
    const next = heap.pop()!;
    ordered.push(next);
    for (const dep of dependents.get(objectKey(next.kind, next.id)) ?? []) {
      const n = indegree.get(dep)! - 1;
      indegree.set(dep, n);
      if (n === 0) heap.push(byKey.get(dep)!);
    }
  }

  const leftover = [...byKey.values()].filter((c) => indegree.get(objectKey(c.kind, c.id))! > 0).sort(compareChanges);
  ordered.push(...leftover);
  return { changes: ordered, cyclic: leftover.map((c) => objectKey(c.kind, c.id)) };
}

/** A small binary min-heap. */
class ChangeHeap {
  private readonly items: Change[] = [];
  constructor(private readonly compare: (a: Change, b: Change) => number) {}

  get size(): number {
    return this.items.length;
  }

  push(item: Change): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(items[i]!, items[parent]!) >= 0) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): Change | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let smallest = i;
        if (l < items.length && this.compare(items[l]!, items[smallest]!) < 0) smallest = l;
        if (r < items.length && this.compare(items[r]!, items[smallest]!) < 0) smallest = r;
        if (smallest === i) break;
        [items[i], items[smallest]] = [items[smallest]!, items[i]!];
        i = smallest;
      }
    }
    return top;
  }
}
