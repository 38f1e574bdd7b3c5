/**
 * The apply order of the kinds, derived from what each kind references (`KindMeta.refersTo`):
 * every kind after the kinds it names, so the writes of one phase never wait for a later one and
 * removals, in reverse, go before what they reference. Ties keep the registry's order. Pure.
 */
import type { KindMeta } from '../core/kind-contract.js';
import type { KindName } from '../core/model.js';

/**
 * `kinds` in apply order (see the module comment). A reference to a kind not in `kinds` (one that
 * is only read) or to itself orders nothing. Throws when kinds reference each other in a cycle:
 * no order would let every write follow what it references (a bug of the registry).
 */
export const applyOrder = <K extends KindMeta>(kinds: readonly K[]): K[] => {
  const names = new Set<KindName>(kinds.map((k) => k.kind));
  const placed = new Set<KindName>();
  const ordered: K[] = [];
  const waiting = [...kinds];
  while (waiting.length > 0) {
    const next = waiting.findIndex((k) =>
      (k.refersTo ?? []).every((target) => target === k.kind || !names.has(target) || placed.has(target)),
    );
    if (next < 0) {
      throw new Error(`kinds reference each other in a cycle: ${waiting.map((k) => k.kind).join(', ')}`);
    }
    const [kind] = waiting.splice(next, 1) as [K];
    ordered.push(kind);
    placed.add(kind.kind);
  }
  return ordered;
};
