/**
 * Prunes that must not be sent (pure): an entity type that entities will still have after the
 * plan. Cortex refuses to delete a type in use, archived entities included (and prune archives
 * entities by default), so such a delete would fail on every run; the type is kept instead, and
 * the plan says which entities hold it. Entities the plan deletes, or rewrites to another type,
 * do not hold it.
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

/** How many holders a `prune-kept` message names before it counts the rest. */
const HOLDERS_NAMED = 5;

/** The prunes without the entity types still held (see the module comment), each with a warning. */
export function withoutHeldTypes(
  prunes: readonly Change[],
  desired: ReadonlyMap<ObjectKey, DesiredObject>,
  live: ReadonlyMap<ObjectKey, LiveObject>,
  handlerOf: (kind: KindName) => KindModel,
  diagnostics: Diagnostic[],
): Change[] {
  const removedTypes = new Set(prunes.filter((p) => p.kind === 'entity-type').map((p) => p.id));
  if (removedTypes.size === 0) return [...prunes];
  const deleted = new Set(prunes.filter((p) => p.action === 'delete').map((p) => objectKey(p.kind, p.id)));
  const holders = new Map<string, Holders>();
  for (const key of new Set([...desired.keys(), ...live.keys()])) {
    if (deleted.has(key)) continue;
    const after = desired.get(key) ?? live.get(key);
    if (after === undefined) continue;
    const type = handlerOf(after.kind).entityTypeOf?.(after);
    if (type === undefined || !removedTypes.has(type)) continue;
    const entry = holders.get(type) ?? { archived: [], archivedNow: [], active: [] };
    if (!desired.has(key) && live.get(key)?.archived === true) entry.archived.push(after.id);
    else if (isArchivedBy(prunes, key)) entry.archivedNow.push(after.id);
    else entry.active.push(after.id);
    holders.set(type, entry);
  }
  const kept: Change[] = [];
  for (const prune of prunes) {
    const held = prune.kind === 'entity-type' ? holders.get(prune.id) : undefined;
    if (!held) {
      kept.push(prune);
      continue;
    }
    diagnostics.push({
      severity: 'warning',
      code: 'prune-kept',
      message: `${handlerOf(prune.kind).title} \`${prune.id}\` has no manifest, but it is kept: Cortex refuses to delete an entity type that entities still have, and ${describeHolders(held)}; once none has it (delete them in Cortex, or give them another type; with \`pruneEntities: delete\` a prune deletes the entities it removes instead of archiving them), prune deletes the type`,
      kind: prune.kind,
      id: prune.id,
    });
  }
  return kept;
}

const isArchivedBy = (prunes: readonly Change[], key: ObjectKey): boolean =>
  prunes.some((p) => p.action === 'archive' && objectKey(p.kind, p.id) === key);

/** Who holds a type after the plan: entities archived already, archived by this plan, not archived. */
interface Holders {
  archived: string[];
  archivedNow: string[];
  active: string[];
}

/** `1 entity has it (archived: `wa`)`, `3 entities have it (archived by this plan: `wa`, `wb`; not archived: `wc`)`. */
const describeHolders = (held: Holders): string => {
  const named = (ids: string[]): string => {
    const sorted = [...ids].sort();
    const shown = sorted.slice(0, HOLDERS_NAMED).map((id) => `\`${id}\``);
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
  return `${countOf(total, 'entity')} ${total === 1 ? 'has' : 'have'} it (${parts.join('; ')})`;
};
