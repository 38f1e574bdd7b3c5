/**
 * Prunes that must not be sent (pure): an object of a kind kept while it is held
 * (`prune.keptWhileHeld`) that objects will still hold after the plan, by having it as their
 * type (`manifest.typedBy`: an entity and its entity type) or by naming it (`manifest.names`: an Initiative and its
 * scorecard). Cortex refuses to delete an entity type in use, archived entities included (and
 * prune archives entities by default), so such a delete would fail on every run; a scorecard that
 * Initiatives name (another source's, one made in the UI) would leave them naming nothing, and
 * their sources' plans refused from then on. The object is kept instead, and the plan says which
 * objects hold it. Holders are every object desired or live, whoever manages it; objects the plan
 * deletes, or rewrites to hold another, do not hold it.
 */
import type { KindModel } from './kind-contract.js';
import {
  type Change,
  type DesiredObject,
  type Diagnostic,
  type KindName,
  type LiveObject,
  type ObjectKey,
  objectKey,
} from './model.js';
import { countOf } from './plural.js';
import { printable } from './printable.js';

/** How many holders a `prune-kept` message names before it counts the rest. */
const HOLDERS_NAMED = 5;

/** The prunes without the types still held (see the module comment), each with a warning. */
export function withoutHeldTypes(
  prunes: readonly Change[],
  desired: ReadonlyMap<ObjectKey, DesiredObject>,
  live: ReadonlyMap<ObjectKey, LiveObject>,
  handlerOf: (kind: KindName) => KindModel,
  diagnostics: Diagnostic[],
): Change[] {
  const removedTypes = new Set(
    prunes.filter((p) => handlerOf(p.kind).prune.keptWhileHeld !== undefined).map((p) => objectKey(p.kind, p.id)),
  );
  if (removedTypes.size === 0) return [...prunes];
  const deleted = new Set(prunes.filter((p) => p.action === 'delete').map((p) => objectKey(p.kind, p.id)));
  const holders = new Map<ObjectKey, Holders>();
  for (const key of new Set([...desired.keys(), ...live.keys()])) {
    if (deleted.has(key)) continue;
    const after = desired.get(key) ?? live.get(key);
    if (after === undefined) continue;
    for (const { heldKey, verb } of heldBy(handlerOf(after.kind), after)) {
      if (!removedTypes.has(heldKey)) continue;
      const entry = holders.get(heldKey) ?? {
        title: handlerOf(after.kind).title,
        verb,
        archived: [],
        archivedNow: [],
        active: [],
      };
      if (!desired.has(key) && live.get(key)?.archived === true) entry.archived.push(after.id);
      else if (isArchivedBy(prunes, key)) entry.archivedNow.push(after.id);
      else entry.active.push(after.id);
      holders.set(heldKey, entry);
    }
  }
  const kept: Change[] = [];
  for (const prune of prunes) {
    const held = holders.get(objectKey(prune.kind, prune.id));
    const rule = handlerOf(prune.kind).prune.keptWhileHeld;
    if (!held || !rule) {
      kept.push(prune);
      continue;
    }
    diagnostics.push({
      severity: 'warning',
      code: 'prune-kept',
      message: `${handlerOf(prune.kind).title} \`${prune.id}\` has no manifest, but it is kept: ${rule.refusal}, and ${describeHolders(held)}; once none ${held.verb === 'type' ? 'has it' : 'names it'} (${rule.remedy}), prune deletes ${held.verb === 'type' ? 'the type' : 'it'}`,
      kind: prune.kind,
      id: prune.id,
    });
  }
  return kept;
}

/** What `obj` holds after the plan: its type, the object it names (each key with how it holds it). */
const heldBy = (handler: KindModel, obj: DesiredObject | LiveObject): { heldKey: ObjectKey; verb: HoldVerb }[] => {
  const out: { heldKey: ObjectKey; verb: HoldVerb }[] = [];
  const type = handler.manifest.typedBy?.typeOf(obj);
  if (handler.manifest.typedBy !== undefined && type !== undefined)
    out.push({ heldKey: objectKey(handler.manifest.typedBy.kind, type), verb: 'type' });
  const named = handler.manifest.names?.idOf(obj);
  if (handler.manifest.names !== undefined && named !== undefined)
    out.push({ heldKey: objectKey(handler.manifest.names.kind, named), verb: 'name' });
  return out;
};

/** How an object holds another: as its type, or by naming it. */
type HoldVerb = 'type' | 'name';

const isArchivedBy = (prunes: readonly Change[], key: ObjectKey): boolean =>
  prunes.some((p) => p.action === 'archive' && objectKey(p.kind, p.id) === key);

/** Who holds a type after the plan (objects of the kind titled `title`): archived already, archived by this plan, not archived. */
interface Holders {
  title: string;
  verb: HoldVerb;
  archived: string[];
  archivedNow: string[];
  active: string[];
}

/** `1 entity has it (archived: `wa`)`, `3 entities have it (archived by this plan: `wa`, `wb`; not archived: `wc`)`. */
const describeHolders = (held: Holders): string => {
  const named = (ids: string[]): string => {
    const sorted = [...ids].sort();
    const shown = sorted.slice(0, HOLDERS_NAMED).map((id) => `\`${printable(id)}\``);
    return sorted.length > HOLDERS_NAMED
      ? `${shown.join(', ')} and ${sorted.length - HOLDERS_NAMED} more`
      : shown.join(', ');
  };
  const groups: [string, string[]][] = [
    ['archived', held.archived],
    ['archived by this plan', held.archivedNow],
    ['not archived', held.active],
  ];
  const total = held.archived.length + held.archivedNow.length + held.active.length;
  const present = groups.filter(([, ids]) => ids.length > 0);
  const parts = present.map(([label, ids]) => `${present.length > 1 ? `${ids.length} ` : ''}${label}: ${named(ids)}`);
  const verb = held.verb === 'type' ? (total === 1 ? 'has' : 'have') : total === 1 ? 'names' : 'name';
  if (held.verb === 'name' && present.length === 1 && held.active.length === total)
    return `${countOf(total, held.title)} ${verb} it: ${named(held.active)}`;
  return `${countOf(total, held.title)} ${verb} it (${parts.join('; ')})`;
};

/**
 * The prunes without an object whose id a desired object of its kind now spells in another letter
 * case (`payments` → `Payments`): the API may treat the two as one object, so removing the old one
 * in the run that creates the new one could remove what was just written. It is kept, with a
 * warning saying why, until it is removed by hand. Kinds whose ids may differ only in case
 * (`manifest.idsMayLookAlike`) are not held.
 */
export function withoutCaseTwins(
  prunes: readonly Change[],
  desired: ReadonlyMap<ObjectKey, DesiredObject>,
  handlerOf: (kind: KindName) => KindModel,
  diagnostics: Diagnostic[],
): Change[] {
  const desiredByCase = new Map<string, DesiredObject>();
  for (const obj of desired.values()) desiredByCase.set(`${obj.kind}\u0000${obj.id.toLowerCase()}`, obj);
  const kept: Change[] = [];
  for (const prune of prunes) {
    const twin = desiredByCase.get(`${prune.kind}\u0000${prune.id.toLowerCase()}`);
    if (twin === undefined || twin.id === prune.id || handlerOf(prune.kind).manifest.idsMayLookAlike === true) {
      kept.push(prune);
      continue;
    }
    const title = handlerOf(prune.kind).title;
    diagnostics.push({
      severity: 'warning',
      code: 'case-renamed',
      message: `${title} \`${printable(prune.id)}\` has no manifest, but \`${printable(twin.id)}\` (${twin.source.file}:${twin.source.line}) differs from it only in letter case, and the API may treat the two as one: it is kept out of the prune, so that removing it cannot remove \`${printable(twin.id)}\`; once \`${printable(twin.id)}\` is applied, remove \`${printable(prune.id)}\` by hand if it is still there`,
      file: twin.source.file,
      line: twin.source.line,
      column: twin.source.column,
      kind: prune.kind,
      id: prune.id,
    });
  }
  return kept;
}
