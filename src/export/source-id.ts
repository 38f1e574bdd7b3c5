/**
 * Whose objects does an export hold? With no source id given and no `cortex-sync.yaml` in the
 * directory, the export is written for the one source that manages the objects it holds (their
 * markers and inventories say so): the export then plans as that repository does, with no change.
 * Pure.
 */
import type { KindName, LiveObject } from '../core/model.js';
import { printable } from '../core/printable.js';

/** The source ids that manage the exported objects (`kind/id` keys), sorted. */
export const ownersOfExported = (live: readonly LiveObject[], exported: ReadonlySet<string>): string[] => {
  const owners = new Set<string>();
  for (const o of live) {
    if (o.owner !== undefined && exported.has(`${o.kind}/${o.id}`)) owners.add(o.owner);
  }
  return [...owners].sort();
};

/** The keys of what the export writes. */
export const exportedKeys = (files: readonly { kind: KindName; ids: readonly string[] }[]): Set<string> =>
  new Set(files.flatMap((f) => f.ids.map((id) => `${f.kind}/${id}`)));

/** What the export says about the settings file it wrote, or why it wrote none. */
export const sourceIdNote = (owners: readonly string[]): { sourceId?: string; message?: string } => {
  if (owners.length === 1) {
    const id = owners[0]!;
    return {
      sourceId: id,
      message: `Wrote cortex-sync.yaml with sourceId \`${printable(id)}\`, the source that manages the exported objects, so a plan of this directory sees them as its own.`,
    };
  }
  if (owners.length > 1) {
    return {
      message:
        `The exported objects are managed by ${owners.length} sources (${owners.map((o) => `\`${printable(o)}\``).join(', ')}), ` +
        'so no cortex-sync.yaml was written: a plan of this directory refuses the objects of every source but its own ' +
        '(name it with --source-id; take the others over with --allow-takeover).',
    };
  }
  return {};
};
