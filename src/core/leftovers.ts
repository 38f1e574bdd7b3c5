/**
 * Objects this source manages whose manifests are gone, while the run does not prune: they stay
 * in the workspace, and the user is told so (and that `--prune` would remove them) rather than
 * seeing only "unchanged".
 */
import type { DesiredObject, Diagnostic, LiveObject, ObjectKey } from './model.js';
import { objectKey } from './model.js';

/** How many leftovers a message names before it counts the rest. */
const LEFTOVERS_NAMED = 20;

/** Live objects marked as managed by `sourceId` (and, for prune's rule, listed in its record) without a manifest. */
export const managedWithoutManifest = (input: {
  desired: readonly DesiredObject[];
  live: readonly LiveObject[];
  sourceId: string;
  ownInventory: ReadonlySet<ObjectKey>;
}): ObjectKey[] => {
  const desired = new Set(input.desired.map((o) => objectKey(o.kind, o.id)));
  return input.live
    .filter((l) => l.owner === input.sourceId && !l.archived && !l.protected)
    .map((l) => objectKey(l.kind, l.id))
    .filter((key) => !desired.has(key) && input.ownInventory.has(key))
    .sort();
};

/** One warning naming the leftovers (none when there are none). */
export const leftoversDiagnostic = (keys: readonly ObjectKey[]): Diagnostic[] => {
  if (keys.length === 0) return [];
  const named = keys.slice(0, LEFTOVERS_NAMED).join(', ');
  const more = keys.length > LEFTOVERS_NAMED ? ` and ${keys.length - LEFTOVERS_NAMED} more` : '';
  const n = keys.length;
  return [
    {
      severity: 'warning',
      code: 'managed-without-manifest',
      message: `${n} managed object${n === 1 ? ' has' : 's have'} no manifest; \`--prune\` would remove ${n === 1 ? 'it' : 'them'}: ${named}${more}`,
    },
  ];
};
