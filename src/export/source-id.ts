/**
 * Whose directory is an export written for, when nothing says? With no source id given (flag or
 * environment), none in the directory's `cortex-sync.yaml` and none derived from its git remote,
 * the export holds what the one source that manages the objects read has (their markers and
 * inventories say so). It claims that source (writes its id into `cortex-sync.yaml`) only when the
 * directory is the origin the source is bound to: from anywhere else, a plan claiming it would be
 * refused (`source-claimed`), so the export claims nothing and its plan, with no source id, shows
 * those objects unchanged and left alone (`managed-elsewhere`). Moving the source is the operator's
 * call (`--allow-takeover`). When several sources manage the objects, none is chosen (their objects
 * are left out, as another source's always are). Pure.
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

/** What the export says when it holds a source's objects without claiming the source. */
export const unclaimedSourceLine = (sourceId: string, recorded: string | undefined, here: string | undefined): string =>
  `The exported objects are managed by source \`${printable(sourceId)}\`${recorded !== undefined ? `, bound to origin \`${printable(recorded)}\`` : ''}; this directory${here !== undefined ? ` (origin \`${printable(here)}\`)` : ''} does not claim it, so its plan shows them unchanged and leaves them alone. To manage them from here, apply with --source-id ${printable(sourceId)} --allow-takeover.`;
