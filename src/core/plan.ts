/**
 * The planner: desired objects + live objects + ownership → ordered changes, field diffs, reasons
 * and diagnostics. Pure: no IO, no clock.
 *
 * Deletes and archives come after every create/update and among themselves in reverse kind
 * order (the order of `handlers`, see `order.ts`); a live object carries no references we can
 * read back, except its type (`handler.manifest.typedBy`: an entity's entity type), so that is the only
 * reverse edge derived from live state. A desired object that still references an object this
 * plan removes is an error.
 */
import type { KindModel } from './kind-contract.js';
import { diffValues } from './diff.js';
import {
  type Action,
  type Change,
  type DesiredObject,
  type Diagnostic,
  type HandOver,
  type KindName,
  type LiveObject,
  type ObjectKey,
  objectKey,
  type Plan,
  type PlanSummary,
} from './model.js';
import { orderChanges } from './order.js';
import { countOf } from './plural.js';
import { printable } from './printable.js';
import { collectEdges, firstAnyway } from './plan-edges.js';
import { withoutCaseTwins, withoutHeldTypes } from './prune-holds.js';
import { reservedObjectProblem } from './reserved.js';
import { planSharedDesired, type SharedWriteOptions } from './shared-writes.js';
import { bindingDiagnostics, removalsAllowed, type SourceBinding } from './source-binding.js';

export interface PlanOptions {
  /**
   * Identifies this repository; objects whose `owner` is this id are managed (and prunable) here.
   * Without one nothing is adopted or marked, and `prune` is refused.
   */
  sourceId?: string;
  /**
   * The keys this source's own inventory record lists. When given, an object is pruned only when
   * its owner (marker) is this source AND the inventory lists it: a hand-copied marker on a
   * foreign entity, or a forged record, alone never makes anything prunable.
   */
  ownInventory?: ReadonlySet<ObjectKey>;
  /** Remove live objects managed by this source whose manifest is gone. */
  prune: boolean;
  /** Take over objects managed by another source id instead of failing. */
  allowTakeover: boolean;
  /** Allow prunes beyond `maxDeleteShare` / `maxDeleteCount`. */
  allowMassDelete: boolean;
  /** No manifest is a deliberate empty repository (`--allow-empty`): its prunes go to the mass-delete guard. */
  allowEmpty?: boolean;
  /** Largest share of this source's live objects one plan may prune (default 0.25). */
  maxDeleteShare?: number;
  /** Largest number of objects one plan may prune. */
  maxDeleteCount?: number;
  /** `kind/id` patterns (`*` matches any run of characters) never pruned. */
  protect: readonly string[];
  /** `false` when any manifest failed to load: nothing is pruned. */
  manifestsComplete: boolean;
  /** The run's time (milliseconds since the epoch), for checks against live state that depend on it. */
  now?: number;
  /**
   * The source id's binding to the origin that first applied it. `claimed` (another origin) is a
   * plan error and removes nothing; `unbound` (a record from before origins) removes nothing yet.
   */
  binding?: SourceBinding;
  /** This source's record's declarations: the keys of its last apply (kinds with `sharedWrites`). */
  declaredBefore?: SharedWriteOptions['declaredBefore'];
  /** Other sources' claims on an object, from their records (kinds with `sharedWrites`). */
  otherClaims?: SharedWriteOptions['otherClaims'];
  /** Take over keys other sources declare (`--force-conflicts`, the operator's). */
  forceConflicts?: boolean;
  /** Why another source's record could not be read by its id (kinds with `sharedWrites`). */
  recordUnreadable?: SharedWriteOptions['recordUnreadable'];
}

interface PlanInput {
  desired: readonly DesiredObject[];
  live: readonly LiveObject[];
  /** The managed kinds, in apply order (the registry's): writes in this order, removals in reverse. */
  handlers: readonly KindModel[];
  options: PlanOptions;
}

export const DEFAULT_MAX_DELETE_SHARE = 0.25;

/**
 * Whether the glob `pattern` matches all of `text`: `*` matches any run of characters (newlines,
 * line separators and any other Unicode included), every other character only itself, so no
 * character of a pattern or an identity is ever special. No regular expression is built.
 */
export function globMatches(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  const first = parts[0] ?? '';
  if (parts.length === 1) return text === pattern;
  const last = parts[parts.length - 1] ?? '';
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  const end = text.length - last.length;
  let at = first.length;
  for (const middle of parts.slice(1, -1)) {
    const found = text.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/**
 * Compiles `kind/id` glob patterns (`*` = any characters) into one matcher of whole keys. A key
 * also matches when its NFC form matches the pattern's (an identity written with combining
 * accents is protected by a pattern typed with precomposed ones): protection only ever widens.
 */
export function protectMatcher(patterns: readonly string[]): (key: ObjectKey) => boolean {
  const compiled = patterns.map((p) => ({ raw: p, nfc: p.normalize('NFC') }));
  return (key) => {
    const nfc = key.normalize('NFC');
    return compiled.some((p) => globMatches(p.raw, key) || globMatches(p.nfc, nfc));
  };
}

/** Builds the plan. Never throws for bad data; throws only when a kind has no handler (a bug). */
export function buildPlan(input: PlanInput): Plan {
  const { options } = input;
  const handlers = new Map<KindName, KindModel>();
  for (const h of input.handlers) handlers.set(h.kind, h);
  const handlerOf = (kind: KindName): KindModel => {
    const h = handlers.get(kind);
    if (!h) throw new Error(`no handler for kind ${kind}`);
    return h;
  };

  const diagnostics: Diagnostic[] = [];
  const desired = new Map<ObjectKey, DesiredObject>();
  for (const obj of input.desired) {
    const key = objectKey(obj.kind, obj.id);
    const first = desired.get(key);
    if (first) {
      diagnostics.push({
        severity: 'error',
        code: 'duplicate-id',
        message: `${handlerOf(obj.kind).title} \`${obj.id}\` is also declared at ${first.source.file}:${first.source.line}`,
        file: obj.source.file,
        line: obj.source.line,
        column: obj.source.column,
        kind: obj.kind,
        id: obj.id,
      });
      continue;
    }
    desired.set(key, obj);
  }
  diagnostics.push(...sharedWritesNeedSourceId(desired.values(), handlerOf, options.sourceId));
  const live = new Map<ObjectKey, LiveObject>();
  for (const obj of input.live) {
    const key = objectKey(obj.kind, obj.id);
    if (!live.has(key)) live.set(key, obj);
  }

  const changes: Change[] = [];
  for (const [key, obj] of desired) {
    const handler = handlerOf(obj.kind);
    const reserved = handler.manifest.reservedFor?.(obj);
    if (reserved !== undefined) {
      diagnostics.push(reservedObjectProblem(obj, reserved));
      continue;
    }
    const change = planDesired(obj, live.get(key), handler, options, diagnostics);
    changes.push(change);
  }

  if (options.sourceId === undefined) diagnostics.push(...managedElsewhereNotes(changes));
  const handOvers = planHandOvers(input, desired, live, handlerOf, diagnostics);
  const held: ObjectKey[] = [];
  // Another origin claiming this source id (or a first binding of an old record) removes nothing:
  // its prunes, and what their guards said, are left out; the binding says why.
  const pruneDiagnostics: Diagnostic[] = [];
  const prunes = planPrunes(input, desired, live, handOvers, handlerOf, pruneDiagnostics, held);
  const removing = removalsAllowed(options.binding);
  if (removing) changes.push(...prunes);
  diagnostics.push(
    ...(removing ? pruneDiagnostics : []),
    ...bindingDiagnostics(options.binding, removing ? 0 : prunes.length),
  );

  const byKey = new Map<ObjectKey, Change>(changes.map((c) => [objectKey(c.kind, c.id), c]));
  const kindOrder = input.handlers.map((h) => h.kind);
  let planned = collectEdges(desired, byKey, handlerOf, { turnRound: true });
  let { changes: ordered, cyclic } = orderChanges(changes, planned.edges, kindOrder);
  if (cyclic.length > 0 && planned.turned.length > 0) {
    // Turning an update round closed a cycle with other references: every update first, said so.
    const plain = collectEdges(desired, byKey, handlerOf, { turnRound: false });
    const retry = orderChanges(changes, plain.edges, kindOrder);
    if (retry.cyclic.length === 0) {
      ({ changes: ordered, cyclic } = retry);
      planned = { ...plain, diagnostics: [...plain.diagnostics, ...planned.turned.map((key) => firstAnyway(key))] };
    }
  }
  diagnostics.push(...planned.diagnostics);
  if (cyclic.length > 0) {
    diagnostics.push({
      severity: 'error',
      code: 'reference-cycle',
      message: `these changes reference each other in a cycle and cannot be ordered: ${cyclic.join(', ')}`,
    });
  }

  return {
    changes: ordered,
    diagnostics,
    summary: summarize(ordered),
    ...(handOvers.length > 0 ? { handOvers } : {}),
    ...(held.length > 0 ? { held } : {}),
  };
}

/** Live objects managed here: marked as this source's and, when the record is known, listed in it. */
const managedHere = (options: PlanOptions, l: LiveObject): boolean =>
  options.sourceId !== undefined &&
  l.owner === options.sourceId &&
  (options.ownInventory === undefined || options.ownInventory.has(objectKey(l.kind, l.id)));

/**
 * Objects of this source without a manifest of their own that another desired object declares
 * inside itself now (`prune.declaredWithin`): handed over, never removed, with or without
 * prune (the API would refuse the removal anyway), and said so.
 */
function planHandOvers(
  input: PlanInput,
  desired: ReadonlyMap<ObjectKey, DesiredObject>,
  live: ReadonlyMap<ObjectKey, LiveObject>,
  handlerOf: (kind: KindName) => KindModel,
  diagnostics: Diagnostic[],
): HandOver[] {
  const handOvers: HandOver[] = [];
  for (const [key, l] of live) {
    if (desired.has(key) || l.archived || !managedHere(input.options, l)) continue;
    const handler = handlerOf(l.kind);
    const within = handler.prune.declaredWithin?.(l, (k) => desired.get(k));
    if (!within) continue;
    const to = objectKey(within.by.kind, within.by.id);
    handOvers.push({ kind: l.kind, id: l.id, to });
    const at = within.by.doc.locate(within.path);
    diagnostics.push({
      severity: 'warning',
      code: 'handed-over',
      message: `${handler.title} \`${l.id}\` is now declared in ${within.field} of ${handlerOf(within.by.kind).title} \`${within.by.id}\`: it is handed over to that manifest, not deleted, and leaves the ownership record of source \`${input.options.sourceId ?? ''}\``,
      file: within.by.source.file,
      line: at.line,
      column: at.column,
      field: within.field,
      kind: l.kind,
      id: l.id,
    });
  }
  return handOvers;
}

function planDesired(
  obj: DesiredObject,
  liveObj: LiveObject | undefined,
  handler: KindModel,
  options: PlanOptions,
  diagnostics: Diagnostic[],
): Change {
  const base = {
    kind: obj.kind,
    id: obj.id,
    source: obj.source.file,
    line: obj.source.line,
    desired: obj,
  };
  diagnostics.push(
    ...(handler.live.checkAgainstLive?.(obj, liveObj, options.now !== undefined ? { now: options.now } : {}) ?? []),
  );
  const sharedWrites = handler.write?.sharedWrites;
  if (sharedWrites !== undefined) return planSharedDesired(obj, liveObj, handler, sharedWrites, options, diagnostics);
  const desiredState = handler.manifest.canonical(obj);
  if (!liveObj) {
    return { ...base, action: 'create', diff: diffValues(undefined, desiredState), waitsFor: [] };
  }

  const liveState = handler.live.canonical(liveObj, obj);
  const diff = diffValues(liveState, desiredState);
  const reasons: string[] = [];
  let adopt = false;
  if (liveObj.owner === undefined) {
    // Without a source id nothing is marked, so nothing is adopted (a later run with an id does it).
    if (options.sourceId !== undefined) {
      adopt = true;
      reasons.push('adopt: exists live, not yet managed by any repository');
    }
  } else if (liveObj.owner !== options.sourceId) {
    // A run without a source id marks, records and prunes nothing: an object another source
    // manages that its manifest matches is left alone (nothing to write, so nothing to refuse);
    // `buildPlan` says which sources manage such objects.
    if (options.sourceId === undefined && !options.allowTakeover && liveObj.archived !== true && diff.length === 0)
      return { ...base, action: 'noop', diff: [], waitsFor: [], live: liveObj };
    adopt = true;
    if (options.allowTakeover) {
      reasons.push(`take over from \`${liveObj.owner}\``);
    } else {
      reasons.push(`managed by source \`${liveObj.owner}\`; needs --allow-takeover`);
      diagnostics.push({
        severity: 'error',
        code: 'ownership-conflict',
        message: `${handler.title} \`${obj.id}\` is managed by source \`${liveObj.owner}\`; pass --allow-takeover to hand it over`,
        file: obj.source.file,
        line: obj.source.line,
        column: obj.source.column,
        kind: obj.kind,
        id: obj.id,
      });
    }
  }
  const unarchive = liveObj.archived === true;
  if (unarchive) reasons.unshift('archived live; the manifest is back');
  const kept = diff.length > 0 ? handler.write?.keptOnWrite?.(obj, liveObj) : undefined;
  if (kept !== undefined) reasons.push(kept);

  // No field differs ⇔ the states are equal (`diffValues` compares them first).
  if (!adopt && !unarchive && diff.length === 0) {
    return { ...base, action: 'noop', diff: [], waitsFor: [], live: liveObj };
  }
  const change: Change = { ...base, action: 'update', diff, waitsFor: [], live: liveObj };
  if (reasons.length > 0) change.reason = reasons.join('; ');
  if (adopt) change.adopt = true;
  if (unarchive) change.unarchive = true;
  return change;
}

/**
 * Without a source id, the unchanged objects other sources manage: one warning per source, so the
 * plan says whose they are and why it leaves them alone (a change to them would be refused).
 */
function managedElsewhereNotes(changes: readonly Change[]): Diagnostic[] {
  const bySource = new Map<string, number>();
  for (const c of changes) {
    const owner = c.action === 'noop' ? c.live?.owner : undefined;
    if (owner !== undefined) bySource.set(owner, (bySource.get(owner) ?? 0) + 1);
  }
  return [...bySource].map(([owner, count]) => ({
    severity: 'warning',
    code: 'managed-elsewhere',
    message: `${countOf(count, 'object')} declared here ${count === 1 ? 'is' : 'are'} managed by source \`${printable(owner)}\` and match${count === 1 ? 'es' : ''} ${count === 1 ? 'its manifest' : 'their manifests'}: with no source id this run leaves ${count === 1 ? 'it' : 'them'} alone; a change to ${count === 1 ? 'it' : 'them'} here would be refused (ownership-conflict) unless run as that source from its origin, or with --allow-takeover`,
  }));
}

/**
 * Keys written into objects others share (merge mode) are judged against every source's record,
 * and a source is seen by the others only through its own record and claims. A run without a
 * source id has neither, so the keys it writes would be invisible to every other source, which
 * could then write over them with no conflict: such a run is refused.
 */
function sharedWritesNeedSourceId(
  desired: Iterable<DesiredObject>,
  handlerOf: (kind: KindName) => KindModel,
  sourceId: string | undefined,
): Diagnostic[] {
  if (sourceId !== undefined) return [];
  const kinds = new Set<KindName>();
  for (const obj of desired) if (handlerOf(obj.kind).write?.sharedWrites !== undefined) kinds.add(obj.kind);
  return [...kinds].map((kind) => ({
    severity: 'error' as const,
    code: 'merge-needs-source-id',
    kind,
    message: `${handlerOf(kind).title} writes are in merge mode (entityWrites: merge), which needs a source id so that other sources see the keys this repository writes: set \`sourceId\` in cortex-sync.yaml, CORTEX_SYNC_SOURCE_ID or --source-id (none could be derived from a git remote)`,
  }));
}

function planPrunes(
  input: PlanInput,
  desired: ReadonlyMap<ObjectKey, DesiredObject>,
  live: ReadonlyMap<ObjectKey, LiveObject>,
  handOvers: readonly HandOver[],
  handlerOf: (kind: KindName) => KindModel,
  diagnostics: Diagnostic[],
  held: ObjectKey[],
): Change[] {
  const { options } = input;
  const sourceId = options.sourceId;
  if (!options.prune && sourceId === undefined) return [];
  if (sourceId === undefined) {
    diagnostics.push({
      severity: 'error',
      code: 'prune-needs-source-id',
      message:
        '--prune needs a source id to know which objects this repository manages: set `sourceId` in cortex-sync.yaml, CORTEX_SYNC_SOURCE_ID or --source-id (none could be derived from a git remote)',
    });
    return [];
  }
  const inventory = options.ownInventory;
  const ownedLive = [...live.values()].filter(
    (l) => l.owner === sourceId && (inventory === undefined || inventory.has(objectKey(l.kind, l.id))),
  );

  const isProtected = protectMatcher(options.protect);
  const handedOver = new Set(handOvers.map((h) => objectKey(h.kind, h.id)));
  const candidates: Change[] = [];
  for (const l of ownedLive) {
    const key = objectKey(l.kind, l.id);
    if (desired.has(key) || l.protected || l.archived || isProtected(key) || handedOver.has(key)) continue;
    const action: Action = handlerOf(l.kind).prune.action;
    candidates.push({
      kind: l.kind,
      id: l.id,
      action,
      diff: [],
      reason: `manifest removed; managed by source \`${sourceId}\``,
      waitsFor: [],
      live: l,
    });
  }
  // Without --prune this is what a prune would do: the objects it would keep are not leftovers.
  const untwinned = withoutCaseTwins(candidates, desired, handlerOf, diagnostics);
  const prunes = withoutHeldTypes(untwinned, desired, live, handlerOf, options.prune ? diagnostics : []);
  const removable = new Set(prunes.map((p) => objectKey(p.kind, p.id)));
  held.push(...candidates.map((c) => objectKey(c.kind, c.id)).filter((key) => !removable.has(key)));
  if (!options.prune || prunes.length === 0) return [];

  if (desired.size === 0 && options.allowEmpty !== true) {
    diagnostics.push({
      severity: 'error',
      code: 'prune-empty',
      message: `no manifests were found, so --prune would remove all ${countOf(prunes.length, 'object')} managed by source \`${sourceId}\`; nothing will be pruned (check --dir; --allow-empty if the repository is empty on purpose)`,
    });
    return [];
  }
  if (!options.manifestsComplete) {
    diagnostics.push({
      severity: 'error',
      code: 'prune-incomplete',
      message: `some manifests failed to load, so nothing will be pruned (${countOf(prunes.length, 'object')} would have been removed); fix the manifests first`,
    });
    return [];
  }

  if (!options.allowMassDelete) diagnostics.push(...wholeKindPrunes(prunes, ownedLive, handlerOf, sourceId));
  const share = options.maxDeleteShare ?? DEFAULT_MAX_DELETE_SHARE;
  const overShare = prunes.length > share * ownedLive.length;
  const overCount = options.maxDeleteCount !== undefined && prunes.length > options.maxDeleteCount;
  if ((overShare || overCount) && !options.allowMassDelete) {
    const limit = overCount
      ? `the limit of ${options.maxDeleteCount}`
      : `${formatPercent(share)} of the ${countOf(ownedLive.length, 'object')} managed by source \`${sourceId}\``;
    diagnostics.push({
      severity: 'error',
      code: 'mass-delete',
      message: `this plan prunes ${countOf(prunes.length, 'object')}, more than ${limit}; pass --allow-mass-delete if that is intended`,
    });
  }
  return prunes;
}

/**
 * The per-kind guard: a plan that removes every managed object of one kind (at least
 * `MIN_WHOLE_KIND_PRUNE` of them) looks like a lost folder, not an edit, even when it is a small
 * share of all managed objects (3 Initiatives among 21 objects). One error per such kind.
 */
const MIN_WHOLE_KIND_PRUNE = 2;

function wholeKindPrunes(
  prunes: readonly Change[],
  ownedLive: readonly LiveObject[],
  handlerOf: (kind: KindName) => KindModel,
  sourceId: string,
): Diagnostic[] {
  const count = (objects: readonly { kind: KindName }[]): Map<KindName, number> => {
    const counts = new Map<KindName, number>();
    for (const o of objects) counts.set(o.kind, (counts.get(o.kind) ?? 0) + 1);
    return counts;
  };
  const managed = count(ownedLive.filter((l) => !l.archived));
  const diagnostics: Diagnostic[] = [];
  for (const [kind, n] of count(prunes)) {
    if (n < MIN_WHOLE_KIND_PRUNE || n < (managed.get(kind) ?? 0)) continue;
    diagnostics.push({
      severity: 'error',
      code: 'mass-delete',
      message: `this plan prunes every ${handlerOf(kind).title} managed by source \`${sourceId}\` (${n} of ${n}); pass --allow-mass-delete if that is intended`,
      kind,
    });
  }
  return diagnostics;
}

const formatPercent = (share: number): string => `${Math.round(share * 1000) / 10} %`;

/** Counts changes per action. */
function summarize(changes: readonly Change[]): PlanSummary {
  const summary: PlanSummary = { create: 0, update: 0, delete: 0, archive: 0, noop: 0 };
  for (const c of changes) summary[c.action] += 1;
  return summary;
}
