/**
 * Drift as a change to the repository: from a plan made with no new commit, the managed objects
 * whose live value differs from git, and the files that would make git say what is live. Updated
 * objects: their document edited in place (`document-edit.ts`); objects removed outside git (a
 * create of an object this source's record already lists: the read that planned it confirmed it
 * gone by identity, as every plan's absence is): their document removed (the file, when it held
 * nothing else); objects of this source without a manifest that a prune would remove: a new file,
 * as export writes it. An object that cannot be proposed this way is refused with the reason and
 * left out (it still counts as drift). Pure: the caller reads the files.
 */
import type { AnyKindModel } from '../core/kind-contract.js';
import {
  type Change,
  type DesiredObject,
  type LiveObject,
  objectKey,
  type ObjectKey,
  type Plan,
} from '../core/model.js';
import { exportFiles } from '../export/files.js';
import type { AnyKindHandler } from '../kinds/types.js';
import { parseManifestFile } from '../source/yaml.js';
import { type DocumentObject, editDocumentToLive } from './document-edit.js';

/** How an object drifted: its value changed, it was removed, or it appeared (with this source's marker) outside git. */
export type DriftWay = 'changed' | 'removed' | 'added';

export interface DriftedObject {
  kind: string;
  id: string;
  way: DriftWay;
  /** The manifest file, relative to the manifest root. */
  file?: string;
}

/** A file of the manifest root as the proposal leaves it: new text, or removed (`text` undefined). */
export interface FileChange {
  path: string;
  text?: string;
  /** The file was rendered again by the YAML library (formatting outside the edit may differ). */
  reformatted?: boolean;
}

export interface RefusedDrift {
  key: ObjectKey;
  reason: string;
}

export interface DriftProposal {
  /** Every drifted object, proposed or refused, in plan order. */
  objects: DriftedObject[];
  files: FileChange[];
  refused: RefusedDrift[];
}

/** The plan's changes that are drift, by way (see the module comment). */
export const driftedChanges = (plan: Plan, sourceId: string | undefined): { change: Change; way: DriftWay }[] => {
  if (sourceId === undefined) return [];
  const recordedBefore = new Set((plan.inventory ?? []).filter((w) => w.phase === 'before').flatMap((w) => w.add));
  const hasRecord =
    plan.inventory !== undefined && !plan.inventory.some((w) => w.phase === 'before' && w.action === 'create');
  const found: { change: Change; way: DriftWay }[] = [];
  for (const change of plan.changes) {
    const key = objectKey(change.kind, change.id);
    if (
      change.action === 'update' &&
      change.desired &&
      change.live?.owner === sourceId &&
      !change.adopt &&
      !change.unarchive
    )
      found.push({ change, way: 'changed' });
    else if (change.action === 'create' && change.desired && hasRecord && !recordedBefore.has(key))
      found.push({ change, way: 'removed' });
    else if (
      (change.action === 'delete' || change.action === 'archive') &&
      change.live?.owner === sourceId &&
      !change.desired
    )
      found.push({ change, way: 'added' });
  }
  return found;
};

export interface ProposalInput {
  plan: Plan;
  sourceId: string | undefined;
  kinds: readonly AnyKindHandler[];
  /** The text of a manifest file (relative to the root), or why it cannot be edited (a symlink). */
  readText: (file: string) => { text: string } | { reason: string };
  now: number;
}

interface DocumentGroup {
  file: string;
  index: number;
  kind: AnyKindModel;
  objects: DocumentObject[];
  drifted: DesiredObject[];
}

const docKey = (d: DesiredObject): string => `${d.source.file}\u0000${d.doc.index}`;

/** The documents holding a drifted object, each with every object it declares. */
const documentGroups = (input: ProposalInput, drifted: readonly Change[]): DocumentGroup[] => {
  const groups = new Map<string, DocumentGroup>();
  for (const change of drifted) {
    const desired = change.desired;
    const kind = input.kinds.find((k) => k.kind === change.kind);
    if (!desired || !kind) continue;
    const key = docKey(desired);
    const group = groups.get(key) ?? {
      file: desired.source.file,
      index: desired.doc.index,
      kind,
      objects: [],
      drifted: [],
    };
    group.drifted.push(desired);
    groups.set(key, group);
  }
  for (const change of input.plan.changes) {
    const desired = change.desired;
    const group = desired ? groups.get(docKey(desired)) : undefined;
    if (!desired || !group || group.kind.kind !== change.kind) continue;
    group.objects.push({ desired, ...(change.action === 'create' ? {} : change.live ? { live: change.live } : {}) });
  }
  return [...groups.values()].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.index - b.index));
};

/** One file's documents edited in turn; every drifted object of a document refused together. */
const editFile = (
  input: ProposalInput,
  file: string,
  groups: readonly DocumentGroup[],
  refused: RefusedDrift[],
): FileChange | undefined => {
  const read = input.readText(file);
  const refuseAll = (group: DocumentGroup, reason: string) =>
    refused.push(...group.drifted.map((d) => ({ key: objectKey(d.kind, d.id), reason: `${file}: ${reason}` })));
  if ('reason' in read) {
    for (const group of groups) refuseAll(group, read.reason);
    return undefined;
  }
  const documents = parseManifestFile(file, read.text).documents.length;
  if (documents === 1 && groups.length === 1 && groups[0]?.objects.every((o) => o.live === undefined)) {
    return { path: file };
  }
  let text = read.text;
  let reformatted = false;
  for (const group of groups) {
    const edit = editDocumentToLive({
      file,
      text,
      index: group.index,
      kind: group.kind,
      objects: group.objects,
      now: input.now,
    });
    if (!edit.ok) {
      refuseAll(group, edit.reason);
      continue;
    }
    text = edit.text;
    reformatted ||= edit.reformatted;
  }
  return text === read.text ? undefined : { path: file, text, ...(reformatted ? { reformatted } : {}) };
};

/** New files for objects that appeared with this source's marker and no manifest, as export writes them. */
const addedFiles = (input: ProposalInput, added: readonly LiveObject[], refused: RefusedDrift[]): FileChange[] => {
  if (added.length === 0) return [];
  const declared = new Map<string, string>();
  for (const c of input.plan.changes) if (c.desired) declared.set(objectKey(c.kind, c.id), c.desired.source.file);
  const taken = new Set([...declared.values()].map((f) => f.toLowerCase()));
  const out = exportFiles(added, {
    handlers: input.kinds,
    kinds: new Set(added.map((l) => l.kind)),
    only: 'all',
    includeArchived: true,
    declared,
    ...(input.sourceId !== undefined ? { sourceId: input.sourceId } : {}),
    now: input.now,
  });
  refused.push(...out.skipped.map((s) => ({ key: objectKey(s.kind, s.id), reason: s.reason })));
  const files: FileChange[] = [];
  for (const file of out.files) {
    if (taken.has(file.path.toLowerCase()) || 'text' in input.readText(file.path)) {
      const reason = `${file.path} exists already: a new manifest would replace it`;
      refused.push(...file.ids.map((id) => ({ key: objectKey(file.kind, id), reason })));
    } else files.push({ path: file.path, text: file.text });
  }
  return files;
};

/** The proposal for a plan (see the module comment). */
export const proposeDrift = (input: ProposalInput): DriftProposal => {
  const drifted = driftedChanges(input.plan, input.sourceId);
  const refused: RefusedDrift[] = [];
  const groups = documentGroups(
    input,
    drifted.filter((d) => d.way !== 'added').map((d) => d.change),
  );
  const byFile = new Map<string, DocumentGroup[]>();
  for (const group of groups) byFile.set(group.file, [...(byFile.get(group.file) ?? []), group]);
  const files: FileChange[] = [];
  for (const [file, fileGroups] of byFile) {
    const change = editFile(input, file, fileGroups, refused);
    if (change) files.push(change);
  }
  const added = drifted.flatMap((d) => (d.way === 'added' && d.change.live ? [d.change.live] : []));
  files.push(...addedFiles(input, added, refused));
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const objects = drifted.map(({ change, way }) => ({
    kind: change.kind,
    id: change.id,
    way,
    ...(change.desired ? { file: change.desired.source.file } : {}),
  }));
  return { objects, files, refused };
};
