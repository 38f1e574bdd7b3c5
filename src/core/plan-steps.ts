/**
 * The steps an apply of a plan takes, as saved and as reviewed (pure): one rule for what a step
 * is, shared by the saved plan (`saved-plan.ts`, `apply FILE`) and the Action's review
 * (`review-judgement.ts`: the plan comment's digest is `stepsDigest` of these steps, and each
 * fingerprint is its step's digest, shortened). A step is an object's change or a write of the
 * ownership record, with the digest of its whole shape.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, sortKeys } from './diff.js';
import type { Change, InventoryWrite, JsonValue, Plan } from './model.js';

/**
 * Fields of a change that are not what is written: the executor's inputs (`desired`, `live`: the
 * live value has its own digest), where it was declared (`source`, `line`) and its ordering edges
 * (`waitsFor`, which shrink when an earlier change is already done). Every other field (a flag
 * added to `Change` later included) is part of the step, so it is saved and reviewed without a
 * change here.
 */
const NOT_THE_STEP: ReadonlySet<string> = new Set(['desired', 'live', 'source', 'line', 'waitsFor']);

/** One step of an apply: `kind/id` (or `inventory/<record>@before|after`), its action, its shape and digest. */
export interface PlanStep {
  key: string;
  action: string;
  /** `sha256:<64 hex>` of `change`. */
  digest: string;
  /** The change as the plan shows it (the field diff, the reason, its flags). */
  change: Record<string, JsonValue>;
  /** Where it was declared (not part of the step's digest). */
  source?: string;
  line?: number;
}

const sha256 = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

const changeShape = (c: Change): Record<string, JsonValue> =>
  sortKeys(
    Object.fromEntries(Object.entries(c).filter(([key, v]) => !NOT_THE_STEP.has(key) && v !== undefined)),
  ) as Record<string, JsonValue>;

const inventoryShape = (w: InventoryWrite): Record<string, JsonValue> =>
  sortKeys({ kind: 'inventory', ...w }) as Record<string, JsonValue>;

/** A step's digest: of its whole shape (so a saved file whose shown change was edited does not verify). */
export const stepDigest = (change: Record<string, JsonValue>): string => sha256(canonicalJson(change));

/** The steps an apply of `plan` takes, in order: the object changes, then the ownership-record writes. */
export const stepsOf = (plan: Plan): PlanStep[] => [
  ...plan.changes
    .filter((c) => c.action !== 'noop')
    .map((c) => {
      const change = changeShape(c);
      return {
        key: `${c.kind}/${c.id}`,
        action: c.action,
        digest: stepDigest(change),
        change,
        ...(c.source !== undefined ? { source: c.source } : {}),
        ...(c.line !== undefined ? { line: c.line } : {}),
      };
    }),
  ...(plan.inventory ?? []).map((w) => {
    const change = inventoryShape(w);
    return { key: `inventory/${w.id}@${w.phase}`, action: w.action, digest: stepDigest(change), change };
  }),
];

/**
 * The digest of a plan's steps in order (`sha256:<hex>`; equal steps ⇔ equal digests): what a
 * plan comment says was reviewed, and what a saved plan's steps come to (`stepsDigest(saved.steps)`).
 */
export const stepsDigest = (steps: readonly Pick<PlanStep, 'change'>[]): string =>
  sha256(canonicalJson(steps.map((s) => s.change)));
