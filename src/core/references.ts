/**
 * Reference checks over desired objects: every named target exists (in the repository, or live
 * when planning), references that require a type name an object of that type (a `team` entity),
 * and ordering edges form no
 * cycle. Pure; every problem is located at the reference in its manifest.
 *
 * Offline (no live objects: `validate`), a target that is not in the repository cannot be judged:
 * a service's `cortex.yaml` names its domain or owner team, which usually lives in the workspace or
 * in another repository. That is a warning saying `plan` checks it; `plan` makes it an error only
 * when the live workspace lacks it too.
 */
import { distance } from 'fastest-levenshtein';
import { isReadOnly, type KindModel, type ObjectReference, type ReadOnlyKindModel } from './kind-contract.js';
import {
  type DesiredObject,
  type Diagnostic,
  type KindName,
  type LiveObject,
  type ObjectKey,
  objectKey,
} from './model.js';

interface ReferenceCheckInput {
  desired: readonly DesiredObject[];
  /** Live objects (plan), those of the kinds only read included; absent for offline validation. */
  live?: readonly LiveObject[];
  /**
   * The managed kinds, in apply order, and the kinds only read (a reference to one of those is
   * checked only against the live objects, and only when they could be read).
   */
  handlers: readonly (KindModel | ReadOnlyKindModel)[];
  /**
   * Kinds whose objects could not be read (permission, feature): references to them are not
   * checked. Kinds only read, and managed kinds whose read said so.
   */
  unreadable?: ReadonlySet<KindName>;
}

type Target = { desired?: DesiredObject; live?: LiveObject };

/**
 * Checks every reference of every desired object; returns errors, and offline the warnings for
 * targets outside the repository (empty when all is well).
 */
export function checkReferences(input: ReferenceCheckInput): Diagnostic[] {
  const handlers = new Map<KindName, KindModel>();
  const readOnly = new Map<KindName, ReadOnlyKindModel>();
  for (const h of input.handlers) {
    if (isReadOnly(h)) readOnly.set(h.kind, h);
    else handlers.set(h.kind, h);
  }
  const titleOf = (kind: KindName): string => handlers.get(kind)?.title ?? readOnly.get(kind)?.title ?? kind;
  const builtInOf = (kind: KindName): readonly string[] =>
    handlers.get(kind)?.builtInIds ?? readOnly.get(kind)?.builtInIds ?? [];

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
  const idsByKind = new Map<KindName, string[]>();
  const candidatesFor = (kind: KindName): string[] => {
    let ids = idsByKind.get(kind);
    if (!ids) {
      const set = new Set<string>();
      for (const [key] of targets) if (key.startsWith(`${kind}/`)) set.add(key.slice(kind.length + 1));
      for (const id of builtInOf(kind)) set.add(id);
      ids = [...set].sort();
      idsByKind.set(kind, ids);
    }
    return ids;
  };

  const offline = input.live === undefined;
  /**
   * A reference to a kind whose objects could not be read is not judged; one to a kind only read
   * is judged against what was read, so never offline.
   */
  const judged = (kind: KindName): boolean => !input.unreadable?.has(kind) && (!readOnly.has(kind) || !offline);
  const context: CheckContext = { targets, handlers, titleOf, builtInOf, candidatesFor, offline };
  const diagnostics: Diagnostic[] = [];
  const edges = new Map<ObjectKey, { to: ObjectKey; ref: ObjectReference }[]>();
  for (const obj of input.desired) {
    const handler = handlers.get(obj.kind);
    if (!handler) continue;
    const from = objectKey(obj.kind, obj.id);
    for (const ref of referencesOf(handler, obj)) {
      const problem = judged(ref.kind) ? checkOne(ref, context) : undefined;
      if (problem) diagnostics.push(locate(obj, ref, problem));
      if (ref.ordering) {
        const to = objectKey(ref.kind, ref.id);
        if (targets.get(to)?.desired) {
          const list = edges.get(from) ?? [];
          list.push({ to, ref });
          edges.set(from, list);
        }
      }
    }
  }
  const rank = new Map(input.handlers.map((h, i) => [h.kind, i]));
  const firstDeclared = (key: ObjectKey): DesiredObject | undefined => targets.get(key)?.desired;
  diagnostics.push(...findCycles(firstDeclared, edges, compareKeysBy(rank)));
  for (const handler of handlers.values())
    diagnostics.push(...(handler.manifest.checkDesiredSet?.(input.desired) ?? []));
  return diagnostics;
}

/**
 * What an object references, kept per object: a long-lived caller (the watcher) hands the same
 * unchanged objects to every run, and their references are the same for as long as they live.
 * Every walk over the references of all manifests (this check, the kinds only read that a run
 * reads, the plan's ordering edges) goes through here, so each is computed once per object.
 */
const referencesKept = new WeakMap<DesiredObject, { kind: KindName; refs: readonly ObjectReference[] }>();
export const referencesOf = (
  handler: Pick<KindModel, 'kind'> & { manifest: Pick<KindModel['manifest'], 'references'> },
  obj: DesiredObject,
): readonly ObjectReference[] => {
  const kept = referencesKept.get(obj);
  // A function of the object alone (the kind contract), so a kind configured per run may share it.
  if (kept !== undefined && kept.kind === handler.kind) return kept.refs;
  const refs = handler.manifest.references(obj);
  // Only a frozen object (the manifest cache's) cannot change under its kept references.
  if (Object.isFrozen(obj) && Object.isFrozen(obj.spec)) referencesKept.set(obj, { kind: handler.kind, refs });
  return refs;
};

interface CheckContext {
  targets: ReadonlyMap<ObjectKey, Target>;
  /** The managed kinds. */
  handlers: ReadonlyMap<KindName, KindModel>;
  titleOf: (kind: KindName) => string;
  builtInOf: (kind: KindName) => readonly string[];
  candidatesFor: (kind: KindName) => string[];
  offline: boolean;
}

function checkOne(ref: ObjectReference, context: CheckContext): Problem | undefined {
  const { targets, handlers, titleOf, candidatesFor, offline } = context;
  const unknown = (): Problem => {
    const hint = suggest(ref.id, candidatesFor(ref.kind));
    const meant = hint ? ` (did you mean \`${hint}\`?)` : '';
    const what = ref.type ? `${ref.type} ${titleOf(ref.kind)}` : titleOf(ref.kind);
    // Offline, a target outside the repository may well exist in the workspace: `plan` decides.
    if (offline) {
      return {
        code: 'unknown-reference',
        severity: 'warning',
        message: `${what} \`${ref.id}\` is not in this repository${meant}; \`plan\` checks it against the workspace`,
      };
    }
    return { code: 'unknown-reference', message: `unknown ${what} \`${ref.id}\`${meant}` };
  };
  if (context.builtInOf(ref.kind).includes(ref.id)) return undefined;
  const target = targets.get(objectKey(ref.kind, ref.id));
  if (!target) return unknown();

  const typedBy = handlers.get(ref.kind)?.manifest.typedBy;
  if (ref.type !== undefined && typedBy !== undefined) {
    const obj = target.desired ?? target.live;
    const actual = obj ? typedBy.typeOf(obj) : undefined;
    if (actual !== undefined && actual !== ref.type) {
      const title = titleOf(ref.kind);
      return {
        code: 'wrong-entity-type',
        message: `\`${ref.id}\` is a \`${actual}\` ${title}, but ${ref.field} must name a \`${ref.type}\` ${title}`,
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

/** The did-you-mean distance: a name this close to a known one (case aside) is taken for a typo of it. */
const TYPO_DISTANCE = 2;

/** Levenshtein distance case aside, when it is within the did-you-mean distance (and less than either length). */
const typoDistance = (wanted: string, lower: string): number | undefined => {
  const d = distance(wanted, lower);
  return d <= TYPO_DISTANCE && d < Math.min(wanted.length, lower.length) ? d : undefined;
};

/**
 * The known name `name` is most likely a typo of: the closest candidate within the did-you-mean
 * distance (`TYPO_DISTANCE`, compared case-insensitively, so `isdraft` is a typo of `isDraft`),
 * never `name` itself; ties go to the alphabetically first. Undefined when none is that close.
 */
export function nearMiss(name: string, candidates: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const c of candidates) {
    if (c === name) continue;
    const d = typoDistance(wanted, c.toLowerCase());
    if (d === undefined) continue;
    if (!best || d < best.d || (d === best.d && c < best.name)) best = { name: c, d };
  }
  return best?.name;
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
    const d = typoDistance(wanted, lower);
    let score = Number.POSITIVE_INFINITY;
    if (d !== undefined) score = d;
    else if (Math.min(wanted.length, lower.length) >= 3 && (lower.startsWith(wanted) || wanted.startsWith(lower))) {
      score = 3 + Math.abs(lower.length - wanted.length) / 1000;
    }
    if (score === Number.POSITIVE_INFINITY) continue;
    if (!best || score < best.score || (score === best.score && c < best.id)) best = { id: c, score };
  }
  return best?.id;
}

type CompareKeys = (a: ObjectKey, b: ObjectKey) => number;

/** Kind order (the handlers' order), then id. */
const compareKeysBy = (rank: ReadonlyMap<KindName, number>): CompareKeys => {
  const ranks = new Map<ObjectKey, number>();
  const kindRank = (key: ObjectKey): number => {
    let found = ranks.get(key);
    if (found === undefined) {
      found = rank.get(key.slice(0, key.indexOf('/'))) ?? rank.size;
      ranks.set(key, found);
    }
    return found;
  };
  return (a, b) => kindRank(a) - kindRank(b) || (a < b ? -1 : a > b ? 1 : 0);
};

/**
 * One error per strongly connected component of the ordering graph that holds a cycle (Tarjan),
 * naming a shortest cycle through its first object (kind order, then id) and located at that
 * object's reference to the next one. `edges` has an entry only for a desired object with an
 * ordering edge (`objectOf` gives the first declared with its key): only those can be on a cycle.
 *
 * The walk takes nodes and edges in the order they come: the components are the same whatever the
 * order, and only those with a cycle are sorted (as are the edges the shortest cycle is looked for
 * along), so what is found and said does not depend on it. Sorting every node and every edge list
 * on each check made most of what a large repository's check allocated.
 */
function findCycles(
  objectOf: (key: ObjectKey) => DesiredObject | undefined,
  edges: ReadonlyMap<ObjectKey, { to: ObjectKey; ref: ObjectReference }[]>,
  compareKeys: CompareKeys,
): Diagnostic[] {
  const sortedNext = new Map<ObjectKey, ObjectKey[]>();
  const next = (k: ObjectKey): ObjectKey[] => {
    let found = sortedNext.get(k);
    if (found === undefined) {
      found = (edges.get(k) ?? []).map((e) => e.to).sort(compareKeys);
      sortedNext.set(k, found);
    }
    return found;
  };
  const noEdges: readonly { to: ObjectKey }[] = [];

  // Iterative Tarjan; a node's low link and whether it is on the stack are kept by its index.
  const index = new Map<ObjectKey, number>();
  const low: number[] = [];
  const onStack: boolean[] = [];
  const stack: ObjectKey[] = [];
  const components: ObjectKey[][] = [];
  // Empty again after each root's walk; one closure and array for all of them.
  const work: { node: ObjectKey; at: number; children: readonly { to: ObjectKey }[]; i: number }[] = [];
  const visit = (node: ObjectKey): void => {
    const at = low.length;
    index.set(node, at);
    low.push(at);
    onStack.push(true);
    stack.push(node);
    work.push({ node, at, children: edges.get(node) ?? noEdges, i: 0 });
  };
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    visit(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.i < frame.children.length) {
        const child = frame.children[frame.i]!.to;
        frame.i += 1;
        const seen = index.get(child);
        if (seen === undefined) visit(child);
        else if (onStack[seen]) low[frame.at] = Math.min(low[frame.at]!, seen);
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low[parent.at] = Math.min(low[parent.at]!, low[frame.at]!);
      if (low[frame.at] === frame.at) {
        const component: ObjectKey[] = [];
        for (;;) {
          const n = stack.pop()!;
          onStack[index.get(n)!] = false;
          component.push(n);
          if (n === frame.node) break;
        }
        const selfLoop = component.length === 1 && frame.children.some((e) => e.to === frame.node);
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
      const first = objectOf(start)!;
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
