/**
 * Reference checks over desired objects: every named target exists (in the repository, or live
 * when planning), entity references have the required entity type, and ordering edges form no
 * cycle. Pure; every problem is located at the reference in its manifest.
 *
 * Offline (no live objects: `validate`), a target that is not in the repository cannot be judged:
 * a service's `cortex.yaml` names its domain or owner team, which usually lives in the workspace or
 * in another repository. That is a warning saying `plan` checks it; `plan` makes it an error only
 * when the live workspace lacks it too.
 */
import { distance } from 'fastest-levenshtein';
import type { KindModel, ObjectReference, ReferenceTargetKind } from './kind-contract.js';
import {
  BUILT_IN_ENTITY_TYPES,
  type DesiredObject,
  type Diagnostic,
  KIND_NAMES,
  type LiveObject,
  type ObjectKey,
  objectKey,
} from './model.js';

export { BUILT_IN_ENTITY_TYPES };

export interface ReferenceCheckInput {
  desired: readonly DesiredObject[];
  /** Live objects (plan); absent for offline validation. */
  live?: readonly LiveObject[];
  handlers: readonly KindModel[];
  /** Scorecard tags known to exist; references to scorecards are checked only when given. */
  scorecards?: readonly string[];
}

type Target = { desired?: DesiredObject; live?: LiveObject };

/**
 * Checks every reference of every desired object; returns errors, and offline the warnings for
 * targets outside the repository (empty when all is well).
 */
export function checkReferences(input: ReferenceCheckInput): Diagnostic[] {
  const handlers = new Map(input.handlers.map((h) => [h.kind, h]));
  const titleOf = (kind: ReferenceTargetKind): string =>
    kind === 'scorecard' ? 'scorecard' : (handlers.get(kind)?.title ?? kind);

  const targets = new Map<ObjectKey, Target>();
  for (const d of input.desired) {
    const key = objectKey(d.kind, d.id);
    const t = targets.get(key) ?? {};
    t.desired ??= d;
    targets.set(key, t);
  }
  for (const l of input.live ?? []) {
    const key = objectKey(l.kind, l.id);
    const t = targets.get(key) ?? {};
    t.live ??= l;
    targets.set(key, t);
  }
  const scorecards = input.scorecards ? new Set(input.scorecards) : undefined;
  const idsByKind = new Map<ReferenceTargetKind, string[]>();
  const candidatesFor = (kind: ReferenceTargetKind): string[] => {
    let ids = idsByKind.get(kind);
    if (!ids) {
      const set = new Set<string>();
      if (kind === 'scorecard') for (const s of input.scorecards ?? []) set.add(s);
      else for (const [key] of targets) if (key.startsWith(`${kind}/`)) set.add(key.slice(kind.length + 1));
      if (kind === 'entity-type') for (const t of BUILT_IN_ENTITY_TYPES) set.add(t);
      ids = [...set].sort();
      idsByKind.set(kind, ids);
    }
    return ids;
  };

  const offline = input.live === undefined;
  const diagnostics: Diagnostic[] = [];
  const edges = new Map<ObjectKey, { to: ObjectKey; ref: ObjectReference }[]>();
  for (const obj of input.desired) {
    const handler = handlers.get(obj.kind);
    if (!handler) continue;
    const from = objectKey(obj.kind, obj.id);
    for (const ref of handler.references(obj)) {
      const problem = checkOne(ref, targets, scorecards, handlers, titleOf, candidatesFor, offline);
      if (problem) diagnostics.push(locate(obj, ref, problem));
      if (ref.ordering && ref.kind !== 'scorecard') {
        const to = objectKey(ref.kind, ref.id);
        if (targets.get(to)?.desired) {
          const list = edges.get(from) ?? [];
          list.push({ to, ref });
          edges.set(from, list);
        }
      }
    }
  }
  diagnostics.push(...findCycles(input.desired, edges));
  for (const handler of handlers.values()) diagnostics.push(...(handler.checkDesiredSet?.(input.desired) ?? []));
  return diagnostics;
}

function checkOne(
  ref: ObjectReference,
  targets: ReadonlyMap<ObjectKey, Target>,
  scorecards: ReadonlySet<string> | undefined,
  handlers: ReadonlyMap<string, KindModel>,
  titleOf: (kind: ReferenceTargetKind) => string,
  candidatesFor: (kind: ReferenceTargetKind) => string[],
  offline: boolean,
): Problem | undefined {
  const unknown = (): Problem => {
    const hint = suggest(ref.id, candidatesFor(ref.kind));
    const meant = hint ? ` (did you mean \`${hint}\`?)` : '';
    const what = ref.kind === 'entity' && ref.entityType ? `${ref.entityType} entity` : titleOf(ref.kind);
    // Offline, a target outside the repository may well exist in the workspace: `plan` decides.
    if (offline && ref.kind !== 'scorecard') {
      return {
        code: 'unknown-reference',
        severity: 'warning',
        message: `${what} \`${ref.id}\` is not in this repository${meant}; \`plan\` checks it against the workspace`,
      };
    }
    return { code: 'unknown-reference', message: `unknown ${what} \`${ref.id}\`${meant}` };
  };
  if (ref.kind === 'scorecard') {
    if (!scorecards || scorecards.has(ref.id)) return undefined;
    return unknown();
  }
  if (ref.kind === 'entity-type' && BUILT_IN_ENTITY_TYPES.includes(ref.id)) return undefined;
  const target = targets.get(objectKey(ref.kind, ref.id));
  if (!target) return unknown();

  if (ref.entityType !== undefined && ref.kind === 'entity') {
    const handler = handlers.get('entity');
    const obj = target.desired ?? target.live;
    const actual = obj && handler?.entityTypeOf ? handler.entityTypeOf(obj) : undefined;
    if (actual !== undefined && actual !== ref.entityType) {
      return {
        code: 'wrong-entity-type',
        message: `\`${ref.id}\` is a \`${actual}\` entity, but ${ref.field} must name a \`${ref.entityType}\` entity`,
      };
    }
  }
  return undefined;
}

interface Problem {
  code: string;
  message: string;
  severity?: Diagnostic['severity'];
}

function locate(obj: DesiredObject, ref: ObjectReference, problem: Problem): Diagnostic {
  const pos = obj.doc.locate(ref.path);
  return {
    severity: problem.severity ?? 'error',
    code: problem.code,
    message: problem.message,
    file: obj.source.file,
    line: pos.line,
    column: pos.column,
    field: ref.field,
    kind: obj.kind,
    id: obj.id,
  };
}

/**
 * The closest known id, when one is close enough to be a likely typo: Levenshtein distance ≤ 2
 * (and less than the id's length), compared case-insensitively; otherwise one id that starts with
 * the other (at least 3 characters in common). Ties go to the alphabetically first.
 */
export function suggest(id: string, candidates: readonly string[]): string | undefined {
  const wanted = id.toLowerCase();
  let best: { id: string; score: number } | undefined;
  for (const c of candidates) {
    if (c === id) continue;
    const lower = c.toLowerCase();
    const d = distance(wanted, lower);
    let score = Number.POSITIVE_INFINITY;
    if (d <= 2 && d < Math.min(wanted.length, lower.length)) score = d;
    else if (Math.min(wanted.length, lower.length) >= 3 && (lower.startsWith(wanted) || wanted.startsWith(lower))) {
      score = 3 + Math.abs(lower.length - wanted.length) / 1000;
    }
    if (score === Number.POSITIVE_INFINITY) continue;
    if (!best || score < best.score || (score === best.score && c < best.id)) best = { id: c, score };
  }
  return best?.id;
}

const kindRank = (key: ObjectKey): number => (KIND_NAMES as readonly string[]).indexOf(key.slice(0, key.indexOf('/')));
const compareKeys = (a: ObjectKey, b: ObjectKey): number => kindRank(a) - kindRank(b) || (a < b ? -1 : a > b ? 1 : 0);

/**
 * One error per strongly connected component of the ordering graph that holds a cycle (Tarjan),
 * naming a shortest cycle through its first object (kind order, then id) and located at that
 * object's reference to the next one.
 */
function findCycles(
  desired: readonly DesiredObject[],
  edges: ReadonlyMap<ObjectKey, { to: ObjectKey; ref: ObjectReference }[]>,
): Diagnostic[] {
  const objects = new Map<ObjectKey, DesiredObject>();
  for (const d of desired) if (!objects.has(objectKey(d.kind, d.id))) objects.set(objectKey(d.kind, d.id), d);
  const nodes = [...objects.keys()].sort(compareKeys);
  const next = (k: ObjectKey): ObjectKey[] => (edges.get(k) ?? []).map((e) => e.to).sort(compareKeys);

  // Iterative Tarjan.
  const index = new Map<ObjectKey, number>();
  const low = new Map<ObjectKey, number>();
  const onStack = new Set<ObjectKey>();
  const stack: ObjectKey[] = [];
  const components: ObjectKey[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: ObjectKey; children: ObjectKey[]; i: number }[] = [];
    const visit = (node: ObjectKey): void => {
      index.set(node, counter);
      low.set(node, counter);
      counter += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, children: next(node), i: 0 });
    };
    visit(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.i < frame.children.length) {
        const child = frame.children[frame.i]!;
        frame.i += 1;
        if (!index.has(child)) visit(child);
        else if (onStack.has(child)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: ObjectKey[] = [];
        for (;;) {
          const n = stack.pop()!;
          onStack.delete(n);
          component.push(n);
          if (n === frame.node) break;
        }
        const selfLoop = component.length === 1 && next(frame.node).includes(frame.node);
        if (component.length > 1 || selfLoop) components.push(component.sort(compareKeys));
      }
    }
  }

  return components
    .sort((a, b) => compareKeys(a[0]!, b[0]!))
    .map((component) => {
      const members = new Set(component);
      const start = component[0]!;
      const cycle = shortestCycle(start, members, next);
      const first = objects.get(start)!;
      const ref = edges.get(start)?.find((e) => e.to === cycle[1])?.ref;
      const pos = ref ? first.doc.locate(ref.path) : { line: first.source.line, column: first.source.column };
      const diag: Diagnostic = {
        severity: 'error',
        code: 'reference-cycle',
        message: `reference cycle: ${cycle.join(' → ')}`,
        file: first.source.file,
        line: pos.line,
        column: pos.column,
        kind: first.kind,
        id: first.id,
      };
      if (ref) diag.field = ref.field;
      return diag;
    });
}

/** Breadth-first: the shortest path start → … → start inside `members`, as keys (start repeated at the end). */
function shortestCycle(
  start: ObjectKey,
  members: ReadonlySet<ObjectKey>,
  next: (k: ObjectKey) => ObjectKey[],
): ObjectKey[] {
  const parent = new Map<ObjectKey, ObjectKey>();
  const queue: ObjectKey[] = [start];
  for (let i = 0; i < queue.length; i += 1) {
    const node = queue[i]!;
    for (const child of next(node)) {
      if (!members.has(child)) continue;
      if (child === start) {
        const path: ObjectKey[] = [start];
        for (let n: ObjectKey | undefined = node; n !== undefined && n !== start; n = parent.get(n)) path.push(n);
        return [start, ...path.slice(1).reverse(), start];
      }
      if (!parent.has(child) && child !== start) {
        parent.set(child, node);
        queue.push(child);
      }
    }
  }
  return [start, start];
}
