/**
 * Absence in a list is a hypothesis, not a fact (ADR 0003). A list answer can leave an object out
 * (an eventually consistent index, a page boundary that moved while someone created or deleted
 * one), and what a plan does on absence cannot always be undone: a create of an object whose
 * identity the server assigns makes a duplicate, an object missing from every record is adopted,
 * and a record entry missing live is dropped (its object then managed by no one). So, after the
 * full read and before anything is planned on it:
 *
 * - every object a manifest declares or this source's record lists that the lists did not show is
 *   read again by identity (`live.fetchByIds`; an Initiative by the cid the record keeps), or,
 *   for more than `MAX_BY_IDENTITY` of a kind, by a second bulk read of that kind; what that read
 *   finds is live, what it does not is confirmed absent; when it fails, the object is
 *   `unconfirmed`: neither created nor dropped from the record, and the plan is refused with the
 *   reason (`absence-unconfirmed`);
 * - before an object no record lists is adopted ("not yet managed by any repository"), the records
 *   are read again and every record either read showed counts (`OwnershipStore.read` `twice`).
 *
 * This source's own record and the record type are confirmed by the store itself (by tag). Only
 * GET requests. No kind is named here.
 */
import { DotSegmentPathError } from '../api/errors.js';
import type { ApiClient } from '../api/types.js';
import {
  type DesiredObject,
  type Diagnostic,
  type KindName,
  type LiveObject,
  type ObjectKey,
  objectKey,
} from '../core/model.js';
import type { AnyKindHandler, FetchContext } from '../kinds/types.js';
import type { OwnershipIndex, OwnershipSnapshot, OwnershipStore } from '../ownership/store.js';

/**
 * More objects of one kind than this missing from its list (a first apply creates many): a second
 * bulk read of the kind instead of one read each — except for a kind whose identity the server
 * assigns, which is always read by the ids the record keeps (a create there is a duplicate).
 */
const MAX_BY_IDENTITY = 10;

/** What the reads by identity found: objects the lists left out, and those whose absence could not be confirmed. */
interface AbsenceCheck {
  found: LiveObject[];
  /** `kind/id` → why its absence could not be confirmed. */
  unconfirmed: Map<ObjectKey, string>;
  diagnostics: Diagnostic[];
}

/** This source's record's server ids of one kind, by id. */
export const serverIdsOf = (
  index: OwnershipIndex,
  sourceId: string | undefined,
  kind: KindName,
): ReadonlyMap<string, string> | undefined => {
  const all = sourceId === undefined ? undefined : index.serverIds.get(sourceId);
  if (all === undefined || all.size === 0) return undefined;
  const out = new Map<string, string>();
  const prefix = `${kind}/`;
  for (const [key, serverId] of all) if (key.startsWith(prefix)) out.set(key.slice(prefix.length), serverId);
  return out.size > 0 ? out : undefined;
};

/** The ids of one kind that a manifest declares or this source's record lists, and the lists did not show. */
const missingIds = (
  handler: AnyKindHandler,
  desired: readonly DesiredObject[],
  live: readonly LiveObject[],
  own: ReadonlySet<ObjectKey>,
): string[] => {
  const kind = handler.kind;
  const shown = new Set(live.filter((o) => o.kind === kind).map((o) => o.id));
  const wanted = new Set<string>();
  // A kind whose bulk read reads again every declared object its list did not show has confirmed those.
  if (handler.live.readsMissingDesired !== true)
    for (const d of desired) if (d.kind === kind && !shown.has(d.id)) wanted.add(d.id);
  const prefix = `${kind}/`;
  for (const key of own) {
    const id = key.slice(prefix.length);
    if (key.startsWith(prefix) && !shown.has(id)) wanted.add(id);
  }
  return [...wanted];
};

/** One kind's missing objects, read again (see the module comment). */
const readAgain = async (handler: AnyKindHandler, ids: readonly string[], ctx: FetchContext): Promise<LiveObject[]> => {
  const wanted = new Set(ids);
  if (
    handler.live.fetchByIds !== undefined &&
    (ids.length <= MAX_BY_IDENTITY || handler.live.serverAssignsIdentity === true)
  ) {
    try {
      return (await handler.live.fetchByIds(ids, ctx)).filter((o) => o.kind === handler.kind && wanted.has(o.id));
    } catch (error) {
      // An id that cannot be put in a path: the second bulk read below.
      if (!(error instanceof DotSegmentPathError)) throw error;
    }
  }
  return (await handler.live.fetch(ctx)).filter((o) => o.kind === handler.kind && wanted.has(o.id));
};

const unconfirmedDiagnostic = (
  handler: AnyKindHandler,
  id: string,
  reason: string,
  declared: DesiredObject | undefined,
): Diagnostic => ({
  severity: 'error',
  code: 'absence-unconfirmed',
  message: `${handler.title} \`${id}\` is missing from the list of ${handler.title}s, and reading it again failed (${reason}): it may exist, so this run neither creates it nor drops it from the ownership record; run again when the API answers`,
  ...(declared !== undefined
    ? { file: declared.source.file, line: declared.source.line, column: declared.source.column }
    : {}),
  kind: handler.kind,
  id,
});

/** Reads again, by identity, every declared or recorded object the lists left out (see the module comment). */
export const confirmAbsences = async (input: {
  client: ApiClient;
  handlers: readonly AnyKindHandler[];
  desired: readonly DesiredObject[];
  live: readonly LiveObject[];
  index: OwnershipIndex;
  sourceId: string | undefined;
}): Promise<AbsenceCheck> => {
  const { client, desired, live, index, sourceId } = input;
  const own = (sourceId !== undefined ? index.bySource.get(sourceId) : undefined) ?? new Set<ObjectKey>();
  const out: AbsenceCheck = { found: [], unconfirmed: new Map(), diagnostics: [] };
  await Promise.all(
    input.handlers.map(async (handler) => {
      const ids = missingIds(handler, desired, live, own);
      if (ids.length === 0) return;
      const wanted = new Set(ids);
      const serverIds = serverIdsOf(index, sourceId, handler.kind);
      const ctx: FetchContext = {
        client,
        desired: desired.filter((d) => d.kind === handler.kind && wanted.has(d.id)),
        managedIds: ids.filter((id) => own.has(objectKey(handler.kind, id))),
        readBefore: live.filter((o) => (handler.live.uses ?? []).includes(o.kind)),
        ...(serverIds !== undefined ? { serverIds } : {}),
      };
      try {
        out.found.push(...(await readAgain(handler, ids, ctx)));
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        for (const id of ids) {
          out.unconfirmed.set(objectKey(handler.kind, id), reason);
          const declared = desired.find((d) => d.kind === handler.kind && d.id === id);
          out.diagnostics.push(unconfirmedDiagnostic(handler, id, reason, declared));
        }
      }
    }),
  );
  return out;
};

/**
 * Declared objects live with no owner, of kinds whose owner only the records say: a plan would
 * adopt them as "not yet managed by any repository".
 */
export const adoptionCandidates = (
  handlers: readonly AnyKindHandler[],
  desired: readonly DesiredObject[],
  live: readonly LiveObject[],
): LiveObject[] => {
  const recorded = new Set(handlers.filter((h) => h.live.ownershipOnObject !== true).map((h) => h.kind));
  const declared = new Set(desired.map((d) => objectKey(d.kind, d.id)));
  return live.filter((o) => recorded.has(o.kind) && o.owner === undefined && declared.has(objectKey(o.kind, o.id)));
};

/** The records read again, every record either read showed counting (before an adoption). */
export const readRecordsTwice = (
  client: ApiClient,
  store: OwnershipStore,
  input: { sourceId: string | undefined; seen: readonly LiveObject[]; kinds: ReadonlySet<KindName> },
): Promise<OwnershipSnapshot> => store.read(client, { ...input, twice: true });
