/**
 * Reads the live workspace: entity types first (other reads need the list of type names), then
 * the inventories and every other kind in parallel. Ownership of kinds without an own marker
 * comes from the inventories. Only GET requests.
 */
import type { ApiClient } from '../api/types.js';
import { type DesiredObject, type Diagnostic, type KindName, type LiveObject, objectKey } from '../core/model.js';
import type { AnyKindHandler, AnyReadOnlyKind } from '../kinds/types.js';
import { emptyInventoryIndex, INVENTORY_ENTITY_TYPE, type InventoryIndex, readInventories } from './inventory.js';

export interface LiveState {
  /** The live objects of the managed kinds. */
  live: LiveObject[];
  inventories: InventoryIndex;
  inventoryTypeExists: boolean;
  /** Live objects of the kinds only read that a manifest references (for reference checks only). */
  referenced: LiveObject[];
  /** Kinds only read that a manifest references but that could not be read (a warning says so). */
  unreadable: Set<KindName>;
  diagnostics: Diagnostic[];
}

/**
 * The kinds only read that some desired object references, read (in parallel with everything
 * else): what they hold, and which could not be read (each with its warning).
 */
const readReferenced = async (
  client: ApiClient,
  handlers: readonly AnyKindHandler[],
  readOnly: readonly AnyReadOnlyKind[],
  desired: readonly DesiredObject[],
): Promise<{ live: LiveObject[]; unreadable: Set<KindName>; diagnostics: Diagnostic[] }> => {
  const byKind = new Map(handlers.map((h) => [h.kind, h]));
  const named = new Set<KindName>();
  for (const obj of desired) for (const ref of byKind.get(obj.kind)?.references(obj) ?? []) named.add(ref.kind);
  const reads = await Promise.all(
    readOnly.filter((k) => named.has(k.kind)).map(async (k) => ({ k, read: await k.readLive({ client }) })),
  );
  const out = { live: [] as LiveObject[], unreadable: new Set<KindName>(), diagnostics: [] as Diagnostic[] };
  for (const { k, read } of reads) {
    if ('live' in read) out.live.push(...read.live);
    else {
      out.unreadable.add(k.kind);
      out.diagnostics.push(read.unreadable);
    }
  }
  return out;
};

/**
 * What still holds the objects a prune would remove (an archived entity holds its entity type):
 * objects of this source without a manifest, asked of every kind that has a `fetchHolders` read.
 * Objects read already are not added twice.
 */
const readHolders = async (
  client: ApiClient,
  handlers: readonly AnyKindHandler[],
  desired: readonly DesiredObject[],
  live: readonly LiveObject[],
  sourceId: string,
  inventories: InventoryIndex,
): Promise<LiveObject[]> => {
  const declared = new Set(desired.map((o) => objectKey(o.kind, o.id)));
  const own = inventories.bySource.get(sourceId);
  const targets = live.filter((o) => {
    const key = objectKey(o.kind, o.id);
    return o.owner === sourceId && own?.has(key) === true && !declared.has(key) && !o.protected && !o.archived;
  });
  if (targets.length === 0) return [];
  const known = new Set(live.map((o) => objectKey(o.kind, o.id)));
  const found = await Promise.all(handlers.map((h) => h.fetchHolders?.(targets, { client }) ?? Promise.resolve([])));
  return found.flat().filter((o) => {
    const key = objectKey(o.kind, o.id);
    if (known.has(key)) return false;
    known.add(key);
    return true;
  });
};

export const fetchLiveState = async (input: {
  client: ApiClient;
  handlers: readonly AnyKindHandler[];
  /** Kinds only read: those the desired objects reference are read too (`referenced`). */
  readOnlyKinds?: readonly AnyReadOnlyKind[];
  desired: readonly DesiredObject[];
  /** Undefined when the run has no source id (nothing is owned: objects are left unmarked). */
  sourceId: string | undefined;
  /**
   * Read what still holds the objects of this source that have no manifest (kinds'
   * `fetchHolders`), so a plan knows what a prune would keep. `export` does not need it.
   */
  holders?: boolean;
}): Promise<LiveState> => {
  const { client, handlers, desired, sourceId } = input;
  const desiredOf = (kind: KindName) => desired.filter((o) => o.kind === kind);
  const diagnostics: Diagnostic[] = [];

  // Entity types come first: entity reads filter by type name, and teams/custom types are not
  // returned unless asked for.
  const typeHandler = handlers.find((h) => h.kind === 'entity-type');
  const liveTypes = typeHandler
    ? await typeHandler.fetchLive({ client, desired: desiredOf('entity-type'), managedIds: [], readBefore: [] })
    : [];
  const inventoryTypeExists = liveTypes.some((t) => t.id === INVENTORY_ENTITY_TYPE);
  // What the other kinds' reads may use (entity lists filter by type name); never the inventory type.
  const readBefore = liveTypes.filter((t) => t.id !== INVENTORY_ENTITY_TYPE);

  const inventories = inventoryTypeExists ? await readInventories(client, sourceId) : emptyInventoryIndex();
  const managedIdsOf = (kind: KindName): string[] =>
    [...((sourceId !== undefined ? inventories.bySource.get(sourceId) : undefined) ?? [])]
      .filter((key) => key.startsWith(`${kind}/`))
      .map((key) => key.slice(kind.length + 1));

  const [perKind, referenced] = await Promise.all([
    Promise.all(
      handlers
        .filter((h) => h !== typeHandler)
        .map((h) => h.fetchLive({ client, desired: desiredOf(h.kind), managedIds: managedIdsOf(h.kind), readBefore })),
    ),
    readReferenced(client, handlers, input.readOnlyKinds ?? [], desired),
  ]);

  const live = [...readBefore, ...perKind.flat()];
  const ownershipOnObject = new Set(handlers.filter((h) => h.ownershipOnObject).map((h) => h.kind));
  for (const object of live) {
    if (ownershipOnObject.has(object.kind)) continue;
    const owner = inventories.ownerOf.get(objectKey(object.kind, object.id));
    if (owner !== undefined) object.owner = owner;
    else delete object.owner;
  }
  if (input.holders && sourceId !== undefined)
    live.push(...(await readHolders(client, handlers, desired, live, sourceId, inventories)));
  for (const forged of inventories.ignored) {
    diagnostics.push({
      severity: 'warning',
      code: 'inventory-ignored',
      message: `the entity \`${forged.tag}\` claims to be the inventory of source \`${forged.source}\` but is not at that source's tag; it is ignored (delete it if nobody knows why it exists)`,
    });
  }
  for (const conflict of inventories.conflicts) {
    diagnostics.push({
      severity: 'warning',
      code: 'inventory-conflict',
      message: `${conflict.key} is listed in the inventories of several sources: ${conflict.sources.join(', ')}`,
    });
  }
  diagnostics.push(...referenced.diagnostics);
  return {
    live,
    inventories,
    inventoryTypeExists,
    referenced: referenced.live,
    unreadable: referenced.unreadable,
    diagnostics,
  };
};
