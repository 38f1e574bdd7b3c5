/**
 * Whose directory is an export written for, when nothing says? With no source id given (flag or
 * environment), none in the directory's `cortex-sync.yaml` and none derived from its git remote,
 * the export is written for the one source that manages the objects read (their markers and
 * inventories say so): it then exports them and writes that id into `cortex-sync.yaml`, so a plan
 * of the directory sees them as its own and shows no change. When several sources manage them,
 * none is chosen (their objects are left out, as another source's always are). Pure.
 */
import type { KindName, LiveObject } from '../core/model.js';
import { printable } from '../core/printable.js';

/** The source ids that manage the objects an export of `kinds` would hold, sorted. */
export const ownersOf = (
  live: readonly LiveObject[],
  selection: { kinds: ReadonlySet<KindName>; includeArchived: boolean },
): string[] => {
  const owners = new Set<string>();
  for (const o of live) {
    if (!selection.kinds.has(o.kind) || (o.archived && !selection.includeArchived)) continue;
    if (o.owner !== undefined) owners.add(o.owner);
  }
  return [...owners].sort();
};

/** The one owner, when there is exactly one. */
export const soleOwner = (owners: readonly string[]): string | undefined =>
  owners.length === 1 ? owners[0] : undefined;

/** What the export says when it wrote `cortex-sync.yaml` for the one source that manages what it holds. */
export const inferredSourceIdLine = (sourceId: string): string =>
  `Wrote cortex-sync.yaml with sourceId \`${printable(sourceId)}\`, the one source that manages the exported objects, so a plan of this directory sees them as its own.`;
