/**
 * Planning an object of a kind whose objects several sources share key by key
 * (`KindWriteModel.sharedWrites`: entities with `entityWrites: merge`, docs/adr-0004-co-ownership.md).
 * Pure. What differs from a whole-object write:
 * - only the keys the manifest declares are compared and written; the keys this source declared at
 *   its last apply (its record) and declares no more are shown going away and removed;
 * - existence stays its owner's: an object another source owns is written (these keys only), never
 *   refused as another's, never adopted, never unarchived; an unowned one is not adopted either
 *   (adopting would make this source the one that archives it on prune);
 * - a key another source's record declares too is a `field-conflict`, unless the operator forces
 *   it (`--force-conflicts`: the plan says which keys are taken over from whom). A source that
 *   holds the object (its record lists it, or its marker is on it) but whose record does not say
 *   which keys is taken to declare every key: fail closed.
 */
import { diffValues } from './diff.js';
import type { KindModel, SharedWrites } from './kind-contract.js';
import {
  type Change,
  type DesiredObject,
  type Diagnostic,
  type LiveObject,
  type ObjectKey,
  objectKey,
} from './model.js';
import { printable } from './printable.js';
import type { Declaration } from './record-meta.js';

/** Another source's claim on an object: the keys its record says it declares (undefined: it does not say). */
export interface OtherClaim {
  source: string;
  keys?: readonly string[];
}

/** What planning shared writes needs from the run (all optional: without them nothing is dropped or in conflict). */
export interface SharedWriteOptions {
  sourceId?: string;
  /** This source's record's declarations (the keys of its last apply). */
  declaredBefore?: ReadonlyMap<ObjectKey, Declaration>;
  /** Every other source whose record lists the object, with its keys. */
  otherClaims?(key: ObjectKey): readonly OtherClaim[];
  /** Take over keys other sources declare (the operator's `--force-conflicts`). */
  forceConflicts?: boolean;
}

const MAX_KEYS_NAMED = 5;

const listed = (keys: readonly string[]): string => {
  const named = keys.slice(0, MAX_KEYS_NAMED).map((k) => `\`${printable(k)}\``);
  const more = keys.length > MAX_KEYS_NAMED ? ` and ${keys.length - MAX_KEYS_NAMED} more` : '';
  return `${named.join(', ')}${more}`;
};

/** The keys of `mine` each other source also declares (every key of `mine` when its record does not say). */
const conflictsOf = (
  mine: readonly string[],
  claims: readonly OtherClaim[],
  shared: SharedWrites<unknown>,
): { source: string; keys: string[]; unknown: boolean; whole?: boolean }[] =>
  claims
    .map((claim) => {
      const theirs = claim.keys;
      if (theirs === undefined) return { source: claim.source, keys: [...mine], unknown: true };
      if (shared.claimsWhole(theirs)) return { source: claim.source, keys: [...mine], unknown: false, whole: true };
      return {
        source: claim.source,
        keys: mine.filter((k) => theirs.some((t) => shared.overlap(k, t))),
        unknown: false,
      };
    })
    .filter((c) => c.keys.length > 0);

/** The other sources' claims on an object, and its owner's when its record does not list it. */
const claimsOn = (obj: DesiredObject, live: LiveObject | undefined, options: SharedWriteOptions): OtherClaim[] => {
  const key = objectKey(obj.kind, obj.id);
  const claims = (options.otherClaims?.(key) ?? []).filter((c) => c.source !== options.sourceId);
  const owner = live?.owner;
  if (owner !== undefined && owner !== options.sourceId && !claims.some((c) => c.source === owner))
    claims.push({ source: owner });
  return claims;
};

/** The conflict errors, or with --force-conflicts the reasons saying what is taken over. */
const judgeConflicts = (
  obj: DesiredObject,
  live: LiveObject | undefined,
  handler: KindModel,
  shared: SharedWrites<unknown>,
  options: SharedWriteOptions,
): { reasons: string[]; diagnostics: Diagnostic[] } => {
  const mine = handler.manifest.managedKeys?.(obj) ?? [];
  const conflicts = conflictsOf(mine, claimsOn(obj, live, options), shared);
  const me = options.sourceId === undefined ? 'this run' : `source \`${printable(options.sourceId)}\``;
  const reasons: string[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const c of conflicts) {
    const them = `source \`${printable(c.source)}\``;
    const which = c.unknown
      ? `${them} holds it and its ownership record does not say which keys it manages (unreadable, or written by an older version), so every key counts as its own`
      : c.whole === true
        ? `${them} writes its whole descriptor (replace), so ${listed(c.keys)} declared by ${me} would be removed by its next apply; co-owned entities need merge in every source`
        : `${listed(c.keys)} ${c.keys.length === 1 ? 'is' : 'are'} declared by ${me} and by ${them}`;
    if (options.forceConflicts === true) {
      reasons.push(`take over ${c.unknown ? 'every declared key' : listed(c.keys)} from ${them} (--force-conflicts)`);
      continue;
    }
    diagnostics.push({
      severity: 'error',
      code: 'field-conflict',
      message: `${handler.title} \`${printable(obj.id)}\`: ${which}; remove ${c.keys.length === 1 && !c.unknown ? 'it' : 'them'} from one source, or pass --force-conflicts to take ${c.keys.length === 1 && !c.unknown ? 'it' : 'them'} over`,
      file: obj.source.file,
      line: obj.source.line,
      column: obj.source.column,
      kind: obj.kind,
      id: obj.id,
    });
  }
  return { reasons, diagnostics };
};

/**
 * The change of a desired object whose kind shares its objects key by key (see the module
 * comment); diagnostics are pushed to `diagnostics`.
 */
export const planSharedDesired = (
  obj: DesiredObject,
  live: LiveObject | undefined,
  handler: KindModel,
  shared: SharedWrites<unknown>,
  options: SharedWriteOptions,
  diagnostics: Diagnostic[],
): Change => {
  const base = { kind: obj.kind, id: obj.id, source: obj.source.file, line: obj.source.line, desired: obj };
  const judged = judgeConflicts(obj, live, handler, shared, options);
  diagnostics.push(...judged.diagnostics);
  const desiredState = handler.manifest.canonical(obj);
  if (!live) {
    const change: Change = { ...base, action: 'create', diff: diffValues(undefined, desiredState), waitsFor: [] };
    if (judged.reasons.length > 0) change.reason = judged.reasons.join('; ');
    return change;
  }
  const ownsExistence = live.owner !== undefined && live.owner === options.sourceId;
  if (live.archived === true && !ownsExistence) {
    diagnostics.push({
      severity: 'warning',
      code: 'archived-elsewhere',
      message: `${handler.title} \`${printable(obj.id)}\` is archived and ${live.owner === undefined ? 'no source manages it' : `source \`${printable(live.owner)}\` manages it`}: only its owner brings it back; its keys are written once it is`,
      file: obj.source.file,
      line: obj.source.line,
      column: obj.source.column,
      kind: obj.kind,
      id: obj.id,
    });
    return { ...base, action: 'noop', diff: [], waitsFor: [], live };
  }
  const unreadable = live.archived === true ? shared.archivedUnreadable?.(live) : undefined;
  if (unreadable !== undefined) {
    diagnostics.push({
      severity: 'error',
      code: 'merge-archived-unreadable',
      message: `${handler.title} \`${printable(obj.id)}\` is archived and reading it by its id failed (${printable(unreadable)}): the plan cannot show what bringing it back with the keys declared here would change, so it is neither unarchived nor written; run again when the API answers`,
      file: obj.source.file,
      line: obj.source.line,
      column: obj.source.column,
      kind: obj.kind,
      id: obj.id,
    });
    return { ...base, action: 'noop', diff: [], waitsFor: [], live };
  }
  const recorded = options.declaredBefore?.get(objectKey(obj.kind, obj.id))?.keys ?? [];
  // A record written in replace mode claims the whole descriptor: switched to merge, none of its
  // keys counts as dropped (the keys the manifest declares no more stay live; nothing removed is
  // the safe direction), or the first merge would remove maps other writers and the marker share.
  const before = shared.claimsWhole(recorded) ? [] : recorded;
  const dropped = shared.dropped(obj, before);
  const diff = diffValues(handler.live.canonical(live, obj, dropped), desiredState);
  const unarchive = live.archived === true;
  if (!unarchive && diff.length === 0) return { ...base, action: 'noop', diff: [], waitsFor: [], live };
  const reasons = [...judged.reasons];
  if (unarchive) reasons.unshift('archived live; the manifest is back');
  if (!ownsExistence)
    reasons.push(
      live.owner === undefined
        ? 'merge: only the keys declared here are written; the entity stays unmanaged (never adopted, never pruned from here)'
        : `merge: exists as source \`${printable(live.owner)}\`'s; only the keys declared here are written`,
    );
  const change: Change = { ...base, action: 'update', diff, waitsFor: [], live };
  const removed = diff.length > 0 ? dropped : [];
  if (removed.length > 0) change.dropsKeys = removed;
  if (reasons.length > 0) change.reason = reasons.join('; ');
  if (unarchive) change.unarchive = true;
  return change;
};
