/**
 * The ownership record's writes as steps of the plan (pure): which keys the record gains before
 * the object writes, and which it loses after them. `plan` shows the predicted writes; `apply`
 * makes the first as planned and computes the second from what actually succeeded.
 */
import type { Change, InventoryWrite, KindName, ObjectKey } from './model.js';
import { countOf } from './plural.js';
import { objectKey } from './model.js';
import type { Declaration, RecordMeta } from './record-meta.js';

export interface InventoryStepsInput {
  /** The record's tag. */
  id: string;
  sourceId: string;
  /** Keys the record holds now, and whether it exists at all. */
  previous: ReadonlySet<ObjectKey>;
  recordExists: boolean;
  /** Keys of the desired objects of kinds the record tracks. */
  desired: readonly ObjectKey[];
  /** Keys of every live object read. */
  live: ReadonlySet<ObjectKey>;
  /** The record's origin and settings now ({} when there is no record). */
  previousMeta: RecordMeta;
  /** The origin and settings this run records (its origin binds the source id). */
  meta: RecordMeta;
  /**
   * Where the objects the record holds were declared (manifest file; keys this source sets), as
   * written with the record. Brought up to date with any write, never a reason to write alone.
   */
  declared?: ReadonlyMap<ObjectKey, Declaration>;
  /**
   * The server-assigned ids the record is to keep (an Initiative's cid), as read live now, and as
   * the record keeps them; `serverAssigned`: the kinds whose identity the server assigns (a create
   * of one is recorded with its id after the apply).
   */
  serverIds?: ReadonlyMap<ObjectKey, string>;
  previousServerIds?: ReadonlyMap<ObjectKey, string>;
  serverAssigned?: ReadonlySet<KindName>;
  /**
   * The kinds whose objects sources share key by key (`KindWriteModel.sharedWrites`) and the record's
   * declarations as read: a change of the keys this source declares for one of their desired
   * objects is a reason to write the record before the objects (other sources judge their
   * conflicts by it, as they judge ownership by the objects it lists).
   */
  sharedKinds?: ReadonlySet<KindName>;
  previousDeclared?: ReadonlyMap<ObjectKey, Declaration>;
}

const sameKeyList = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  a !== undefined && b !== undefined && a.length === b.length && a.every((k, i) => k === b[i]);

/** Desired objects of shared kinds whose declared keys differ from the record's. */
const keysToRecord = (input: InventoryStepsInput): ObjectKey[] => {
  const shared = input.sharedKinds;
  if (shared === undefined || shared.size === 0 || input.declared === undefined) return [];
  return input.desired.filter((key) => {
    if (!shared.has(key.slice(0, key.indexOf('/')))) return false;
    const now = input.declared?.get(key)?.keys;
    return now !== undefined && !sameKeyList(input.previousDeclared?.get(key)?.keys, [...now].sort());
  });
};

/**
 * Keys of the grown record whose server id the record does not keep yet (or keeps another): a
 * reason to write it, since it is what confirms such an object when a list leaves it out.
 */
const serverIdsToRecord = (input: InventoryStepsInput, keys: ReadonlySet<ObjectKey>): ObjectKey[] =>
  [...(input.serverIds ?? [])]
    .filter(([key, serverId]) => keys.has(key) && input.previousServerIds?.get(key) !== serverId)
    .map(([key]) => key);

const serverIdsReason = (n: number, created: boolean): string =>
  `record the server-assigned id${n === 1 ? '' : 's'} of ${countOf(n, created ? 'created object' : 'object')}`;

/**
 * Whether the record must be written for its origin alone: when it exists and names another one
 * (a record from before origins is bound, a takeover rebinds). The settings it keeps are brought
 * up to date with any write, never written alone (a plan that changes nothing stays empty). No
 * record and nothing to track: nothing is written, not even a binding.
 */
const originChanged = (input: InventoryStepsInput): boolean =>
  input.recordExists && input.meta.origin !== undefined && input.previousMeta.origin !== input.meta.origin;

/** Why the record's origin changes, for the reason of its write. */
const bindingReason = (input: InventoryStepsInput): string => {
  const before = input.previousMeta.origin;
  const after = input.meta.origin;
  if (after === undefined || before === after) return '';
  return before === undefined || !input.recordExists
    ? `; bind the source id to origin \`${after}\``
    : `; rebind the source id from origin \`${before}\` to \`${after}\``;
};

const sorted = (keys: Iterable<ObjectKey>): ObjectKey[] => [...keys].sort();

/** The record before the object writes: what it holds now plus every desired key. */
export const grownInventory = (input: InventoryStepsInput): Set<ObjectKey> =>
  new Set<ObjectKey>([...input.previous, ...input.desired]);

/**
 * The record after the object writes: the grown record without what was removed (successfully),
 * and without keys that are neither desired nor live any more.
 */
export const finalInventory = (
  input: InventoryStepsInput,
  grown: ReadonlySet<ObjectKey>,
  removed: ReadonlySet<ObjectKey>,
): Set<ObjectKey> => {
  const desired = new Set(input.desired);
  return new Set([...grown].filter((key) => !removed.has(key) && (desired.has(key) || input.live.has(key))));
};

/** The `before` write, if the record must grow. */
export const beforeWrite = (input: InventoryStepsInput): InventoryWrite | undefined => {
  const grown = grownInventory(input);
  const add = sorted([...grown].filter((key) => !input.previous.has(key)));
  const ids = serverIdsToRecord(input, grown);
  const keys = keysToRecord(input);
  if (add.length === 0 && !originChanged(input) && ids.length === 0 && keys.length === 0) return undefined;
  const what =
    add.length > 0
      ? `track ${countOf(add.length, 'object')} before ${add.length === 1 ? 'it is' : 'they are'} written`
      : originChanged(input)
        ? 'record the origin its source id is bound to'
        : ids.length > 0
          ? serverIdsReason(ids.length, false)
          : `record the keys this source declares of ${countOf(keys.length, 'object')}`;
  return {
    phase: 'before',
    id: input.id,
    action: input.recordExists ? 'update' : 'create',
    add,
    remove: [],
    reason: `ownership record of source \`${input.sourceId}\`: ${what}${bindingReason(input)}`,
  };
};

/** The `after` write shrinking `from` to `to`, if they differ. */
export const afterWrite = (
  input: InventoryStepsInput,
  from: ReadonlySet<ObjectKey>,
  to: ReadonlySet<ObjectKey>,
  assignedIds = 0,
): InventoryWrite | undefined => {
  const remove = sorted([...from].filter((key) => !to.has(key)));
  const add = sorted([...to].filter((key) => !from.has(key)));
  if (remove.length === 0 && add.length === 0 && assignedIds === 0) return undefined;
  const what = [
    ...(remove.length > 0 || add.length > 0
      ? [`drop ${countOf(remove.length, 'object')} removed, handed over or gone`]
      : []),
    ...(assignedIds > 0 ? [serverIdsReason(assignedIds, true)] : []),
  ].join('; ');
  return {
    phase: 'after',
    id: input.id,
    action: input.recordExists || from.size > 0 ? 'update' : 'create',
    add,
    remove,
    reason: `ownership record of source \`${input.sourceId}\`: ${what}`,
  };
};

/**
 * The writes a plan predicts: grow before, shrink after (assuming every removal succeeds, and
 * every hand-over: the object now declared inside another manifest leaves the record).
 */
export const plannedInventoryWrites = (
  input: InventoryStepsInput,
  changes: readonly Change[],
  handedOver: readonly ObjectKey[] = [],
): InventoryWrite[] => {
  const grown = grownInventory(input);
  const removed = new Set([
    ...changes.filter((c) => c.action === 'delete' || c.action === 'archive').map((c) => objectKey(c.kind, c.id)),
    ...handedOver,
  ]);
  const before = beforeWrite(input);
  // A create whose identity the server assigns: its id is recorded once the apply knows it.
  const created = changes.filter((c) => c.action === 'create' && input.serverAssigned?.has(c.kind) === true).length;
  const after = afterWrite(
    {
      ...input,
      recordExists: input.recordExists || before !== undefined,
      ...(before !== undefined ? { previousMeta: input.meta } : {}),
    },
    grown,
    finalInventory(input, grown, removed),
    created,
  );
  return [before, after].filter((w): w is InventoryWrite => w !== undefined);
};
