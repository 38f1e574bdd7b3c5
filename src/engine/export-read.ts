/**
 * Reads the live workspace for `export`: the same three steps as a plan (`readKinds`), with each
 * kind asked for read as that kind says export reads it (`export.read`: the dependency
 * edges of every entity, archived entities when asked) and every kind those reads use read first
 * as a plan reads it. Owners come from the ownership records as in a plan. Only GET requests. No
 * kind is named here.
 *
 * What the export leaves out is known before the reads that hang off it: when it leaves out what
 * other source ids manage (`othersLeftOut`), an export read is not given their objects of the kinds
 * it reads through (`export.uses`: no dependency edges read for another source's entities, one
 * request each), unless this source manages objects of the kind read (one of them may hang off
 * another source's object: then everything is given, as a plan would need). A read that fails
 * still fails the export; what a read leaves out for a reason of its own is a warning (`warn`).
 */
import type { Diagnostic, KindName, LiveObject } from '../core/model.js';
import { OWNERSHIP_STORE } from '../kinds/ownership.js';
import type { AnyKindHandler } from '../kinds/types.js';
import type { OwnershipStore } from '../ownership/store.js';
import type { EngineContext } from './context.js';
import { type ReadKind, readKinds } from './fetch-live.js';

interface ExportReadInput {
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
  /**
   * The export leaves out what other source ids (any but `sourceId`) manage, and `sourceId` is
   * known before the read (not inferred from it): see the module comment.
   */
  othersLeftOut?: boolean;
}

interface ExportLive {
  live: LiveObject[];
  diagnostics: Diagnostic[];
  /** Each source's origin as its ownership record has it (the repository that first applied it). */
  recordedOrigins: ReadonlyMap<string, string>;
  /** Objects of other sources not given to the export reads through them (see the module comment). */
  notReadThrough: number;
}

/** Reads what `export` writes (see the module comment). */
export const readWorkspaceForExport = async (input: ExportReadInput, ctx: EngineContext): Promise<ExportLive> => {
  const { handlers, kinds } = input;
  const store = input.store ?? OWNERSHIP_STORE;
  const asked = (h: AnyKindHandler): boolean => kinds.has(h.kind) && h.export?.read !== undefined;
  const usesOf = (h: AnyKindHandler): readonly KindName[] =>
    (asked(h) ? h.export?.uses : undefined) ?? h.live.uses ?? [];

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
  const readFirst = new Set<KindName>([
    ...store.uses,
    ...[...needed].flatMap((k) => usesOf(byKind.get(k) as AnyKindHandler)),
  ]);

  // Another source's object, which this export leaves out: nothing is read through it.
  const othersOwn = (o: LiveObject): boolean =>
    input.othersLeftOut === true && o.owner !== undefined && o.owner !== input.sourceId;
  let notReadThrough = 0;
  // What the export reads said it leaves out (the export goes on), after the records' diagnostics.
  const warnings: Diagnostic[] = [];
  const givenTo = (handler: AnyKindHandler, readBefore: readonly LiveObject[], managedIds: readonly string[]) => {
    const through = new Set(handler.export?.uses ?? []);
    // A kind read first (others use it) is not told what this source manages: everything is given.
    if (managedIds.length > 0 || readFirst.has(handler.kind)) return readBefore;
    const given = readBefore.filter((o) => !(through.has(o.kind) && othersOwn(o)));
    notReadThrough += readBefore.length - given.length;
    return given;
  };

  const read: ReadKind = (handler, fetchCtx) =>
    asked(handler) && handler.export?.read
      ? handler.export?.read({
          ...fetchCtx,
          readBefore: givenTo(handler, fetchCtx.readBefore, fetchCtx.managedIds),
          includeArchived: input.includeArchived,
          signal: ctx.signal,
          now: () => ctx.clock.now(),
          requestsPerMinute: input.requestsPerMinute,
          progress: input.progress,
          warn: (warning) => warnings.push(warning),
        })
      : handler.live.fetch(fetchCtx);
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
  return { live, diagnostics: [...ownership.diagnostics, ...warnings], recordedOrigins, notReadThrough };
};
