/**
 * Is this the reviewed plan, and what of it remains (pure). The plan's digest: a stable hash of
 * everything the apply would write — each non-noop change with every action and flag it carries
 * (kind, id, action, field diff, reason, `adopt`, `unarchive`, any flag added later) and each
 * write of the ownership record. Each step's fingerprint, so a drift can say what differs, with a
 * hash of what the step leaves live (`after`), so a reviewed step that is no longer planned is
 * accepted only when what it would have written is live now. `judgeMerges` judges the plan at the
 * head of the default branch against the reviewed plans of the merges it carries, in merge order.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, sortKeys } from './diff.js';
import type { Change, InventoryWrite, JsonValue, Plan } from './model.js';
import { stepsDigest, stepsOf } from './plan-steps.js';

const pendingChanges = (plan: Plan): Change[] => plan.changes.filter((c) => c.action !== 'noop');

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * `sha256:<hex>` of the ordered steps (`plan-steps.ts`, the saved plan's rule); equal plans ⇔
 * equal digests. What the plan comment carries, and what `apply FILE`'s steps come to.
 */
export const planDigest = (plan: Plan): string => stepsDigest(stepsOf(plan));

/**
 * One step as `action key hash [after]`: `key` is `kind/id` (`inventory/<tag>@before` for an
 * ownership-record write), `hash` the first 20 hex digits (80 bits) of the step's digest
 * (`plan-steps.ts`) — long enough that nobody can make a different step with the same
 * fingerprint — and `after` 20 hex digits of what the step leaves live: the object as declared
 * (its kind, id and spec), or its absence.
 */
export interface ChangeFingerprint {
  key: string;
  action: string;
  hash: string;
  /** Absent for ownership-record writes, and in comments written before it was recorded. */
  after?: string;
}

export const FINGERPRINT_HEX = 20;

const short = (shape: JsonValue): string => sha256(canonicalJson(shape)).slice(0, FINGERPRINT_HEX);

const keyOf = (c: Pick<Change, 'kind' | 'id'>): string => `${c.kind}/${c.id}`;

/** What a change leaves live: the declared object, or (an archive, a delete) its absence; undefined when unknown. */
const afterOf = (c: Change): string | undefined => {
  if (c.action === 'archive' || c.action === 'delete') return short({ kind: c.kind, id: c.id, gone: true });
  if (c.desired === undefined) return undefined;
  return short(sortKeys({ kind: c.kind, id: c.id, spec: c.desired.spec as JsonValue }));
};

/** Each step's fingerprint, in the steps' order: the changes' (with what each leaves live), then the record writes'. */
export const fingerprints = (plan: Plan): ChangeFingerprint[] => {
  const afters = pendingChanges(plan).map(afterOf);
  return stepsOf(plan).map((step, i) => {
    const after = afters[i];
    const hash = step.digest.slice('sha256:'.length, 'sha256:'.length + FINGERPRINT_HEX);
    return { key: step.key, action: step.action, hash, ...(after ? { after } : {}) };
  });
};

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

/** A merged pull request's reviewed plan, as its plan comment recorded it. */
export interface Review {
  pullRequest: number;
  digest: string;
  /** Absent when they did not fit in the comment. */
  changes?: readonly ChangeFingerprint[];
}

/** Why a merge's reviewed plan is not what the plan at the head applies. */
export type ReviewProblem =
  /** Planned now, reviewed on none of the merges. */
  | { kind: 'unreviewed'; now: ChangeFingerprint }
  /** Planned now, reviewed otherwise on `pullRequest`. */
  | { kind: 'changed'; pullRequest: number; reviewed: ChangeFingerprint; now: ChangeFingerprint }
  /** Reviewed on `pullRequest`, no longer planned, and what it writes is not live. */
  | { kind: 'dropped'; pullRequest: number; reviewed: ChangeFingerprint }
  /** The comment recorded only the digest, and the plan is not that one. */
  | { kind: 'unrecorded'; pullRequest: number }
  /** The same steps as reviewed, in another order. */
  | { kind: 'reordered'; pullRequest: number };

export interface ReviewOutcome {
  pullRequest: number;
  /** Its steps the apply takes, of the steps it reviewed (superseded ones not counted). */
  remaining: number;
  reviewed: number;
  /** Objects it reviewed that a later merge's reviewed plan changes instead. */
  superseded: { key: string; by: number }[];
}

export type MergeJudgement =
  | { verdict: 'apply'; reviews: ReviewOutcome[] }
  | { verdict: 'refuse'; problems: ReviewProblem[]; difference?: PlanDifference };

/** What the plan says is live now for each object it declares with nothing to write: its `after`. */
const liveAsDeclared = (plan: Plan): Map<string, string | undefined> =>
  new Map(plan.changes.filter((c) => c.action === 'noop').map((c) => [keyOf(c), afterOf(c)]));

/** An ownership-record write is reviewed when every object it adds or removes is one a merge reviewed. */
const recordWriteReviewed = (w: InventoryWrite, reviewedKeys: ReadonlySet<string>): boolean =>
  [...w.add, ...w.remove].every((k) => reviewedKeys.has(k));

/**
 * The plan at the head against the reviewed plans of the merges it carries, oldest first. For one
 * merge: the same digest applies; otherwise every step planned now must be a step it reviewed,
 * unchanged. With several, a later merge's step on an object replaces an earlier one's
 * (`superseded`), and an ownership-record write is accepted when every object it names was
 * reviewed. A reviewed step no longer planned is accepted only when what it writes is live: the
 * object is declared as reviewed with nothing left to write, or (an archive, a delete) the plan
 * no longer has it at all. Ownership-record writes no longer planned are not checked (they follow
 * from the objects). Anything else is a problem, named with the pull request it concerns.
 */
export const judgeMerges = (reviews: readonly Review[], plan: Plan): MergeJudgement => {
  const [single] = reviews;
  const digest = planDigest(plan);
  if (reviews.length === 1 && single && single.digest === digest)
    return {
      verdict: 'apply',
      reviews: [
        {
          pullRequest: single.pullRequest,
          remaining: single.changes?.length ?? 0,
          reviewed: single.changes?.length ?? 0,
          superseded: [],
        },
      ],
    };
  const problems: ReviewProblem[] = [];
  const latest = new Map<string, { print: ChangeFingerprint; pullRequest: number }>();
  const superseded = new Map<number, { key: string; by: number }[]>();
  for (const review of reviews) {
    if (review.changes === undefined) {
      problems.push({ kind: 'unrecorded', pullRequest: review.pullRequest });
      continue;
    }
    for (const print of review.changes) {
      const earlier = latest.get(print.key);
      if (earlier && earlier.pullRequest !== review.pullRequest)
        superseded.set(earlier.pullRequest, [
          ...(superseded.get(earlier.pullRequest) ?? []),
          { key: print.key, by: review.pullRequest },
        ]);
      latest.set(print.key, { print, pullRequest: review.pullRequest });
    }
  }
  const reviewedKeys = new Set(latest.keys());
  const now = fingerprints(plan);
  const nowKeys = new Set(now.map((f) => f.key));
  const records = new Map((plan.inventory ?? []).map((w) => [`inventory/${w.id}@${w.phase}`, w]));
  for (const f of now) {
    const reviewed = latest.get(f.key);
    if (reviewed && reviewed.print.hash === f.hash && reviewed.print.action === f.action) continue;
    const record = records.get(f.key);
    if (reviews.length > 1 && record && recordWriteReviewed(record, reviewedKeys)) continue;
    problems.push(
      reviewed
        ? { kind: 'changed', pullRequest: reviewed.pullRequest, reviewed: reviewed.print, now: f }
        : { kind: 'unreviewed', now: f },
    );
  }
  const declared = liveAsDeclared(plan);
  const remaining = new Map<number, number>();
  const counted = new Map<number, number>();
  for (const [key, { print, pullRequest }] of latest) {
    counted.set(pullRequest, (counted.get(pullRequest) ?? 0) + 1);
    if (nowKeys.has(key)) {
      remaining.set(pullRequest, (remaining.get(pullRequest) ?? 0) + 1);
      continue;
    }
    if (key.startsWith('inventory/')) continue;
    const gone = print.action === 'archive' || print.action === 'delete';
    const live = gone ? !declared.has(key) : print.after !== undefined && declared.get(key) === print.after;
    if (!live) problems.push({ kind: 'dropped', pullRequest, reviewed: print });
  }
  if (problems.length === 0 && single && reviews.length === 1 && single.changes !== undefined) {
    const sameSteps = (remaining.get(single.pullRequest) ?? 0) === single.changes.length;
    if (sameSteps && now.length === single.changes.length)
      problems.push({ kind: 'reordered', pullRequest: single.pullRequest });
  }
  if (problems.length > 0) {
    const difference =
      reviews.length === 1 && single?.changes !== undefined ? comparePlans(single.changes, now) : undefined;
    return { verdict: 'refuse', problems, ...(difference ? { difference } : {}) };
  }
  return {
    verdict: 'apply',
    reviews: reviews.map((r) => ({
      pullRequest: r.pullRequest,
      remaining: remaining.get(r.pullRequest) ?? 0,
      reviewed: counted.get(r.pullRequest) ?? 0,
      superseded: superseded.get(r.pullRequest) ?? [],
    })),
  };
};
