/**
 * The plan as the steps an apply takes, for every renderer: the ownership-record write that
 * grows it, the changes, the write that shrinks it. Ownership-record writes show under their own
 * kind, `inventory`, with the keys they add (`+`) and drop (`-`) as fields.
 */
import type { Change, Diagnostic, InventoryWrite, Plan, StepKind } from '../core/model.js';

export type ShownChange = Pick<Change, 'id' | 'action' | 'source' | 'line' | 'diff' | 'reason' | 'waitsFor'> & {
  kind: StepKind;
  /** Ownership-record writes only: before or after the changes. */
  phase?: InventoryWrite['phase'];
};

/** An ownership-record write as a change; `limit` caps the keys listed (the rest are counted in the reason). */
const inventoryChange = (write: InventoryWrite, limit = Number.POSITIVE_INFINITY): ShownChange => {
  const fields = [
    ...write.add.map((key) => ({ path: key, after: 'managed' })),
    ...write.remove.map((key) => ({ path: key, before: 'managed' })),
  ];
  const hidden = Math.max(0, fields.length - limit);
  return {
    kind: 'inventory',
    id: write.id,
    action: write.action,
    phase: write.phase,
    reason: `${write.reason}${hidden > 0 ? ` (${hidden} more not listed here; the JSON plan (--output json) lists all ${fields.length})` : ''}`,
    waitsFor: [],
    diff: hidden > 0 ? fields.slice(0, limit) : fields,
  };
};

/** Every step of the plan in apply order (noops included; renderers filter them). */
export const planSteps = (plan: Plan, limit?: number): ShownChange[] => {
  const writes = plan.inventory ?? [];
  const shown = (phase: InventoryWrite['phase']) =>
    writes.filter((w) => w.phase === phase).map((w) => inventoryChange(w, limit));
  return [...shown('before'), ...plan.changes, ...shown('after')];
};

/** Diagnostics that say an id looks like another one: shown beside the change they name. */
const LOOKALIKE_CODES = new Set(['lookalike-change', 'lookalike-id', 'case-only-id']);

/** The look-alike warnings of each change, by `kind/id`. */
export const lookalikeFlags = (diagnostics: readonly Diagnostic[]): Map<string, string[]> => {
  const flags = new Map<string, string[]>();
  for (const d of diagnostics) {
    if (!LOOKALIKE_CODES.has(d.code) || d.kind === undefined || d.id === undefined) continue;
    const key = `${d.kind}/${d.id}`;
    flags.set(key, [...(flags.get(key) ?? []), d.message]);
  }
  return flags;
};

/** The look-alike warnings of one change. */
export const flagsFor = (flags: ReadonlyMap<string, string[]>, c: Pick<ShownChange, 'kind' | 'id'>): string[] =>
  flags.get(`${c.kind}/${c.id}`) ?? [];
