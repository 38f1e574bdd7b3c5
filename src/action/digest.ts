/**
 * The plan's digest: a stable hash of everything the apply would write — each non-noop change with
 * every action and flag it carries (kind, id, action, field diff, reason, `adopt`, `unarchive`, any
 * flag added later) and each write of the ownership record — shown in the pull request's plan
 * comment and compared on merge, so the apply only runs the plan that was reviewed. Also each
 * step's fingerprint, so a drift can say what differs and a rerun of an interrupted apply can be
 * recognised as the rest of the reviewed plan. Pure.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, sortKeys } from '../core/diff.js';
import type { Change, InventoryWrite, JsonValue, Plan } from '../core/model.js';

/**
 * Fields of a change that are not part of what is written: the executor's inputs (`desired`,
 * `live`), where it was declared (`source`, `line`) and its ordering edges (`waitsFor`, which
 * shrink when an earlier change is already done). Every other field is in the digest, so a flag
 * added to `Change` later is reviewed without a change here.
 */
const NOT_REVIEWED: ReadonlySet<string> = new Set(['desired', 'live', 'source', 'line', 'waitsFor']);

const pendingChanges = (plan: Plan): Change[] => plan.changes.filter((c) => c.action !== 'noop');

const changeShape = (c: Change): JsonValue =>
  sortKeys(Object.fromEntries(Object.entries(c).filter(([key, v]) => !NOT_REVIEWED.has(key) && v !== undefined)));

const inventoryShape = (w: InventoryWrite): JsonValue => sortKeys({ kind: 'inventory', ...w });

/** Every step the apply would take, in order: the object changes, then the ownership-record writes. */
const reviewedSteps = (plan: Plan): JsonValue[] => [
  ...pendingChanges(plan).map(changeShape),
  ...(plan.inventory ?? []).map(inventoryShape),
];

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** `sha256:<hex>` of the ordered steps; equal plans ⇔ equal digests. */
export const planDigest = (plan: Plan): string => `sha256:${sha256(canonicalJson(reviewedSteps(plan)))}`;

/**
 * One step as `action key hash`: `key` is `kind/id` (`inventory/<tag>@before` for an
 * ownership-record write), `hash` 20 hex digits (80 bits) of the step's whole shape — long enough
 * that nobody can make a different step with the same fingerprint.
 */
export interface ChangeFingerprint {
  key: string;
  action: string;
  hash: string;
}

export const FINGERPRINT_HEX = 20;

const fingerprintOf = (key: string, action: string, shape: JsonValue): ChangeFingerprint => ({
  key,
  action,
  hash: sha256(canonicalJson(shape)).slice(0, FINGERPRINT_HEX),
});

export const fingerprints = (plan: Plan): ChangeFingerprint[] => [
  ...pendingChanges(plan).map((c) => fingerprintOf(`${c.kind}/${c.id}`, c.action, changeShape(c))),
  ...(plan.inventory ?? []).map((w) => fingerprintOf(`inventory/${w.id}@${w.phase}`, w.action, inventoryShape(w))),
];

export interface PlanDifference {
  /** In the plan now, not in the reviewed one. */
  added: ChangeFingerprint[];
  /** In the reviewed plan, not in the plan now. */
  removed: ChangeFingerprint[];
  /** In both, with another action, diff or flag: [reviewed, now]. */
  changed: [ChangeFingerprint, ChangeFingerprint][];
}

export const comparePlans = (
  reviewed: readonly ChangeFingerprint[],
  now: readonly ChangeFingerprint[],
): PlanDifference => {
  const before = new Map(reviewed.map((f) => [f.key, f]));
  const after = new Map(now.map((f) => [f.key, f]));
  const changed: [ChangeFingerprint, ChangeFingerprint][] = [];
  for (const f of now) {
    const old = before.get(f.key);
    if (old && (old.action !== f.action || old.hash !== f.hash)) changed.push([old, f]);
  }
  return {
    added: now.filter((f) => !before.has(f.key)),
    removed: reviewed.filter((f) => !after.has(f.key)),
    changed,
  };
};

/**
 * How the plan now relates to the reviewed one: `same` (equal digests); `rest` — every step now
 * is a reviewed step, unchanged, and some reviewed steps are no longer planned (an interrupted
 * apply did them, or the workspace already matches): applying the rest applies nothing that was
 * not reviewed; `drift` — anything new or different, or no fingerprints to tell.
 */
export type ReviewVerdict =
  | { verdict: 'same' }
  | { verdict: 'rest'; remaining: number; reviewed: number }
  | { verdict: 'drift'; difference?: PlanDifference };

export const judgePlan = (
  reviewed: { digest: string; changes?: readonly ChangeFingerprint[] },
  plan: Plan,
): ReviewVerdict => {
  if (reviewed.digest === planDigest(plan)) return { verdict: 'same' };
  if (reviewed.changes === undefined) return { verdict: 'drift' };
  const now = fingerprints(plan);
  const difference = comparePlans(reviewed.changes, now);
  const keys = new Set(now.map((f) => f.key));
  const onlyLess = difference.added.length === 0 && difference.changed.length === 0 && difference.removed.length > 0;
  if (onlyLess && keys.size === now.length)
    return { verdict: 'rest', remaining: now.length, reviewed: reviewed.changes.length };
  return { verdict: 'drift', difference };
};
