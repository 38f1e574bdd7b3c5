/**
 * Reads the live workspace for `export`: the same three steps as a plan (`readKinds`), with each
 * kind asked for read as that kind says export reads it (`KindIO.exportLive`: the dependency
 * edges of every entity, archived entities when asked) and every kind those reads use read first
 * as a plan reads it. Owners come from the ownership records as in a plan. Only GET requests. No
 * kind is named here.
 */
import type { Diagnostic, KindName, LiveObject } from '../core/model.js';
import { OWNERSHIP_STORE } from '../kinds/ownership.js';
import type { AnyKindHandler } from '../kinds/types.js';
import type { OwnershipStore } from '../ownership/store.js';
import type { EngineContext } from './context.js';
import { type ReadKind, readKinds } from './fetch-live.js';

export interface ExportReadInput {
  /** Every managed kind (the records' entries of all of them count). */
  handlers: readonly AnyKindHandler[];
  /** The kinds to export. */
  kinds: ReadonlySet<KindName>;
  includeArchived: boolean;
  /** Whose record counts as ours when several claim an object (undefined: none). */
  sourceId: string | undefined;
  /** The client's budget, for the estimate of a long read. */
  requestsPerMinute: number;
  /** Progress for a person (stderr); several lines for a long read. */
  progress: (line: string) => void;
  /** Where the ownership records are kept (default: the registry's store). */
  store?: OwnershipStore;
}

export interface ExportLive {
  live: LiveObject[];
  diagnostics: Diagnostic[];
  /** Each source's origin as its ownership record has it (the repository that first applied it). */
  recordedOrigins: ReadonlyMap<string, string>;
}

/** Reads what `export` writes (see the module comment). */
export const readWorkspaceForExport = async (input: ExportReadInput, ctx: EngineContext): Promise<ExportLive> => {
  const { handlers, kinds } = input;
  const store = input.store ?? OWNERSHIP_STORE;
  const asked = (h: AnyKindHandler): boolean => kinds.has(h.kind) && h.exportLive !== undefined;
  const usesOf = (h: AnyKindHandler): readonly KindName[] => (asked(h) ? h.exportUses : undefined) ?? h.fetchUses ?? [];

  // The kinds asked for, and whatever their reads and the store's use, transitively.
  const byKind = new Map(handlers.map((h) => [h.kind, h]));
  const needed = new Set<KindName>();
  const need = (kind: KindName): void => {
    const handler = byKind.get(kind);
    if (handler === undefined || needed.has(kind)) return;
    needed.add(kind);
    for (const used of usesOf(handler)) need(used);
  };
  for (const kind of [...kinds, ...store.uses]) need(kind);

  const read: ReadKind = (handler, fetchCtx) =>
    asked(handler) && handler.exportLive
      ? handler.exportLive({
          ...fetchCtx,
          includeArchived: input.includeArchived,
          signal: ctx.signal,
          now: () => ctx.clock.now(),
          requestsPerMinute: input.requestsPerMinute,
          progress: input.progress,
        })
      : handler.fetchLive(fetchCtx);
  const { live, ownership } = await readKinds({
    client: ctx.client,
    handlers: handlers.filter((h) => needed.has(h.kind)),
    store,
    desired: [],
    sourceId: input.sourceId,
    usesOf,
    read,
    recordKinds: new Set(handlers.map((h) => h.kind)),
  });
  const recordedOrigins = new Map<string, string>();
  for (const [source, meta] of ownership.index.meta)
    if (meta.origin !== undefined) recordedOrigins.set(source, meta.origin);
  return { live, diagnostics: ownership.diagnostics, recordedOrigins };
};
