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
  type JsonValue,
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
  /**
   * Why a source's record, which the list of records left out, could not be read by its id either
   * (`OwnershipIndex.unreadable`); undefined when it was read, or is confirmed absent.
   */
  recordUnreadable?(source: string): string | undefined;
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

/**
 * The other sources' claims on an object: their records', its owner's when its record does not
 * list it (every key), and `unconfirmed` the sources the object names (its owner, its claimants)
 * whose record the list left out and a read by its id could not read either. A claimant whose
 * record was read (or is confirmed absent) and does not list the object claims nothing.
 */
const claimsOn = (
  obj: DesiredObject,
  live: LiveObject | undefined,
  shared: SharedWrites<unknown>,
  options: SharedWriteOptions,
): { claims: OtherClaim[]; unconfirmed: { source: string; reason: string }[] } => {
  const key = objectKey(obj.kind, obj.id);
  const claims = (options.otherClaims?.(key) ?? []).filter((c) => c.source !== options.sourceId);
  const unconfirmed: { source: string; reason: string }[] = [];
  const named = live === undefined ? [] : (shared.claimants?.(live) ?? []);
  const owner = live?.owner;
  for (const source of new Set([...(owner !== undefined ? [owner] : []), ...named])) {
    if (source === options.sourceId || claims.some((c) => c.source === source)) continue;
    const reason = options.recordUnreadable?.(source);
    if (reason !== undefined) unconfirmed.push({ source, reason });
    else if (source === owner) claims.push({ source });
  }
  return { claims, unconfirmed };
};

/** The refusal of an object that names a source whose record could not be read. */
const unconfirmedClaim = (
  obj: DesiredObject,
  handler: KindModel,
  c: { source: string; reason: string },
): Diagnostic => ({
  severity: 'error',
  code: 'claim-unconfirmed',
  message: `${handler.title} \`${printable(obj.id)}\` names source \`${printable(c.source)}\` as writing keys into it, whose ownership record is missing from the list of records and could not be read by its id either, so which keys it declares is unknown and this run writes nothing to it: ${printable(c.reason)}`,
  file: obj.source.file,
  line: obj.source.line,
  column: obj.source.column,
  kind: obj.kind,
  id: obj.id,
});

/** The conflict errors, or with --force-conflicts the reasons saying what is taken over. */
const judgeConflicts = (
  obj: DesiredObject,
  live: LiveObject | undefined,
  handler: KindModel,
  shared: SharedWrites<unknown>,
  options: SharedWriteOptions,
): { reasons: string[]; diagnostics: Diagnostic[] } => {
  const mine = handler.manifest.managedKeys?.(obj) ?? [];
  const { claims, unconfirmed } = claimsOn(obj, live, shared, options);
  const conflicts = conflictsOf(mine, claims, shared);
  const me = options.sourceId === undefined ? 'this run' : `source \`${printable(options.sourceId)}\``;
  const reasons: string[] = [];
  // Not the operator's to force: what the other source declares is unknown until its record is read.
  const diagnostics: Diagnostic[] = unconfirmed.map((c) => unconfirmedClaim(obj, handler, c));
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

/** This source's claim on `live`, when it writes keys into it without owning it and the object does not name it yet. */
const claimMissing = (
  live: LiveObject,
  shared: SharedWrites<unknown>,
  options: SharedWriteOptions,
  ownsExistence: boolean,
): { key: string; value: JsonValue } | undefined => {
  const sourceId = options.sourceId;
  if (ownsExistence || sourceId === undefined || shared.claim === undefined) return undefined;
  if ((shared.claimants?.(live) ?? []).includes(sourceId)) return undefined;
  return shared.claim(sourceId);
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
  const declaresKeys = (handler.manifest.managedKeys?.(obj) ?? []).length > 0;
  const claim = declaresKeys ? claimMissing(live, shared, options, ownsExistence) : undefined;
  if (claim !== undefined) diff.push({ path: claim.key, after: claim.value });
  const unarchive = live.archived === true;
  if (!unarchive && diff.length === 0) return { ...base, action: 'noop', diff: [], waitsFor: [], live };
  const reasons = [...judged.reasons];
  if (unarchive) reasons.unshift('archived live; the manifest is back');
  if (claim !== undefined)
    reasons.push(`names this source on it (\`${printable(claim.key)}\`), so other sources read its record`);
  if (!ownsExistence)
    reasons.push(
      live.owner === undefined
        ? 'merge: only the keys declared here are written; the entity stays unmanaged (never adopted, never pruned from here)'
        : `merge: exists as source \`${printable(live.owner)}\`'s; only the keys declared here are written`,
    );
  const change: Change = { ...base, action: 'update', diff, waitsFor: [], live };
  if (declaresKeys && !ownsExistence && options.sourceId !== undefined && shared.claim !== undefined)
    change.writesClaim = true;
  const removed = diff.length > 0 ? dropped : [];
  if (removed.length > 0) change.dropsKeys = removed;
  if (reasons.length > 0) change.reason = reasons.join('; ');
  if (unarchive) change.unarchive = true;
  return change;
};
