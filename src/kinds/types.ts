/**
 * The contract every kind implements, grouped by capability (`layout`, `manifest`, `live`,
 * `write`, `prune`, `export`) and in two halves. The pure half (`KindModel`, in
 * `core/kind-contract.ts`: layout, schema, references, canonical forms, prune action, export's
 * files) is what core may use; the IO half below (`live.fetch`, `write.apply`,
 * `write.applyBatch`, `write.explainFailure`, `prune.fetchHolders`, `export.read`) is what the
 * engine calls; a `KindHandler` holds both, each group the members of both halves. A kind is one folder (`src/kinds/<kind>/`) exporting a
 * `KindHandler` (both halves; `configure` when it has settings), listed once in `registry.ts`,
 * whose key is its name. Nothing outside `src/kinds/` branches on a kind's name (lint-enforced).
 */
import type { ApiClient } from '../api/types.js';
import { CortexSyncError } from '../core/errors.js';
import type {
  KindExportModel,
  KindLiveModel,
  KindModel,
  KindPruneModel,
  KindWriteModel,
  ReadOnlyKindModel,
} from '../core/kind-contract.js';
import type { Change, DesiredObject, Diagnostic, KindName, LiveObject } from '../core/model.js';
import type { PendingCreates } from '../core/pending-creates.js';
import type { AnySettingSpec } from '../core/settings.js';

export type {
  AnyKindModel,
  KeptWhileHeld,
  KindExportModel,
  KindLayout,
  KindLiveModel,
  KindManifest,
  KindMeta,
  KindModel,
  KindPruneModel,
  KindWriteModel,
  ManifestFile,
  Names,
  ObjectReference,
  ParseContext,
  DeclaredWithin,
  ParseResult,
  PruneAction,
  ReadOnlyKindModel,
  TypedBy,
  UpdateOrder,
} from '../core/kind-contract.js';

export interface FetchContext<S = unknown> {
  client: ApiClient;
  /** The desired objects of this kind (some kinds have no bulk read and read per parent, e.g. dependencies per caller). */
  desired: readonly DesiredObject<S>[];
  /**
   * Ids of this kind the ownership record says this repository manages (so prune can see them).
   * Empty for a kind read before the records (one whose objects another kind's read uses).
   */
  managedIds: readonly string[];
  /**
   * id → the server id this source's ownership record keeps for it (kinds whose identity the
   * server assigns, `live.serverAssignsIdentity`): a read by identity reads those by it.
   */
  serverIds?: ReadonlyMap<string, string>;
  /**
   * Live objects of the kinds read before the others: those some kind's read uses (see
   * `live.uses`; entity lists filter by entity type name), never cortex-sync's own records.
   */
  readBefore: readonly LiveObject[];
  /**
   * Says that this key may not read the objects of this kind (permission, a feature the workspace
   * lacks), for a kind of which nothing is declared or managed here, whose read then answers no
   * objects: references to the kind are not judged (an unknown one would be a false error), and
   * `warning` says so. Absent where nobody judges references (export).
   */
  unreadable?(warning: Diagnostic): void;
}

/** What `export` gives a kind's `export.read`, besides what a plan's read has. */
export interface ExportFetchContext<S = unknown> extends FetchContext<S> {
  /** Export archived objects too (`--include-archived`). */
  includeArchived: boolean;
  /** Aborted when the run is asked to stop: a long read stops between two chunks (`InterruptedError`). */
  signal: AbortSignal;
  /** The run's clock, for progress estimates. */
  now(): number;
  /** The client's budget, for the estimate of a long read. */
  requestsPerMinute: number;
  /** Says something to the person waiting (stderr). */
  progress(line: string): void;
  /** Reports what the export leaves out for a reason the reader must know (a warning; the export goes on). */
  warn(warning: Diagnostic): void;
}

export interface ApplyOptions {
  /** Identifies this repository; written as the ownership marker (none without a source id). */
  sourceId?: string;
  /** Records creates without a client-chosen identity before they are sent (the apply lease's record). */
  pendingCreates?: PendingCreates;
}

export interface ApplyContext {
  /** A client that records every request in the plan log, tagged with the change(s) being applied. */
  client: ApiClient;
  options: ApplyOptions;
  /**
   * Optional: told the id the server assigned to the object written (a create's answer, or the
   * existing object a create found instead), so the ownership record keeps it.
   */
  assigned?(serverId: string): void;
  /** Optional: receives warnings about a change that succeeded (e.g. the API's descriptor warnings). */
  warn?(diagnostics: Diagnostic[]): void;
}

type ChangeFields = Omit<Change, 'action' | 'desired' | 'live'>;

/**
 * A planned change as a kind's IO half sees it: narrowed to the kind's own manifest (`S`) and
 * live (`L`) types, with what each action always carries required. A create has its manifest;
 * an update or noop has its manifest and the live object; a delete or archive has the live object.
 */
export type KindChange<S, L> =
  | (ChangeFields & { action: 'create'; desired: DesiredObject<S>; live?: undefined })
  | (ChangeFields & { action: 'update' | 'noop'; desired: DesiredObject<S>; live: LiveObject<L> })
  | (ChangeFields & { action: 'delete' | 'archive'; desired?: undefined; live: LiveObject<L> });

/** Does a planned change carry what its action needs (see `KindChange`)? */
export const isKindChange = (change: Change): change is Change & KindChange<unknown, unknown> => {
  switch (change.action) {
    case 'create':
      return change.desired !== undefined && change.live === undefined;
    case 'update':
    case 'noop':
      return change.desired !== undefined && change.live !== undefined;
    case 'delete':
    case 'archive':
      return change.desired === undefined && change.live !== undefined;
  }
};

/**
 * The same change, typed as a `KindChange`. The planner always builds them so; anything else is
 * a bug, reported as `INTERNAL`.
 */
export const toKindChange = (change: Change): KindChange<unknown, unknown> => {
  if (isKindChange(change)) return change;
  throw new CortexSyncError(
    'INTERNAL',
    `${change.action} ${change.kind} \`${change.id}\`: the change does not carry what a ${change.action} needs (manifest and/or live object)`,
  );
};

/** Per-change outcome of a batch. */
export interface BatchOutcome<S = unknown, L = unknown> {
  change: KindChange<S, L>;
  error?: Error;
}

/** Live, the IO half: how this kind's live objects are read. */
export interface KindLiveIO<S, L> {
  /**
   * The kinds whose live objects `fetch` uses (entity lists filter by entity type name): they
   * are read before every other kind and handed over in `FetchContext.readBefore`.
   */
  readonly uses?: readonly KindName[];
  /** Reads every live object of this kind with bulk, paged reads (never one GET per object when a list exists). */
  fetch(ctx: FetchContext<S>): Promise<LiveObject<L>[]>;
  /**
   * Optional: the live objects of this kind with these ids, read by identity (one GET per object,
   * or one for several where the API answers so: a caller's dependency edges), for a run that
   * reads only what it will write or what a change touched. Each object read is what `fetch`
   * returns for that id; an id with no live object is left out (a 404 is an answer, not an
   * error). `ctx.desired` holds the desired objects of those ids, `ctx.readBefore` what a bulk
   * read would have read before this kind. A kind without it is read in full. Only GETs.
   */
  fetchByIds?(ids: readonly string[], ctx: FetchContext<S>): Promise<LiveObject<L>[]>;
  /**
   * Entities only: `true` when `fetch` itself reads again every desired object its list did not
   * show (by tag, or the list with archived ones): the engine then confirms only the recorded
   * objects a list left out (`engine/confirm-absence.ts`).
   */
  readonly readsMissingDesired?: boolean;
}

/** Write, the IO half: how a planned change is made. */
export interface KindWriteIO<S, L> {
  /** Applies one change (create, update, delete, archive; with `unarchive`/`adopt` flags). Throws on failure. */
  apply(change: KindChange<S, L>, ctx: ApplyContext): Promise<void>;
  /**
   * Dependencies only (bulk endpoints): applies many changes of this kind at once. When present
   * the executor hands over every ready change of the kind in one phase (writes, or deletes) together.
   */
  applyBatch?(changes: readonly KindChange<S, L>[], ctx: ApplyContext): Promise<BatchOutcome<S, L>[]>;
  /**
   * Optional: turns an API failure of `change` into diagnostics located in its manifest (an
   * entity's descriptor violations, the field of an Initiative or scorecard the API refused).
   */
  explainFailure?(change: KindChange<S, L>, error: Error): Diagnostic[];
}

/** Prune, the IO half. */
export interface KindPruneIO<L> {
  /**
   * Entities only: live objects of this kind that `live.fetch` leaves out (archived entities)
   * and that still hold one of `targets`, the objects a prune is about to remove (an archived
   * entity still holds its entity type). Read only for a prune, so the planner never removes what
   * is still in use.
   */
  fetchHolders?(targets: readonly LiveObject[], ctx: Pick<FetchContext, 'client'>): Promise<LiveObject<L>[]>;
}

/** Export, the IO half. */
export interface KindExportIO<S, L> {
  /**
   * Optional: how `export` reads this kind, when not as a plan does (`live.fetch` with no
   * manifests): the dependency edges of every entity, archived entities when asked. Only GETs.
   */
  read?(ctx: ExportFetchContext<S>): Promise<LiveObject<L>[]>;
  /** The kinds whose live objects `read` uses (in `readBefore`), when other than `live.uses`. */
  readonly uses?: readonly KindName[];
}

/** The IO half of a kind, in the pure half's groups: reads and writes through the `ApiClient` it is handed. */
export interface KindIO<S = unknown, L = unknown> {
  readonly live: KindLiveIO<S, L>;
  readonly write: KindWriteIO<S, L>;
  readonly prune?: KindPruneIO<L>;
  readonly export?: KindExportIO<S, L>;
}

/** A kind: both halves, each group holding the pure members and the IO members of its capability. */
export interface KindHandler<S = unknown, L = unknown> extends KindModel<S, L> {
  readonly live: KindLiveModel<S, L> & KindLiveIO<S, L>;
  readonly write: KindWriteModel<S, L> & KindWriteIO<S, L>;
  readonly prune: KindPruneModel<L> & KindPruneIO<L>;
  readonly export?: KindExportModel<L> & KindExportIO<S, L>;
}

/** The registry's view of a handler (methods are bivariant, so every `KindHandler<S, L>` fits). */
export type AnyKindHandler = KindHandler<unknown, unknown>;

/**
 * A kind with settings. `settings` are fields of the run's configuration the kind reads, named as
 * the configuration names them (`pruneEntities`); the registry derives the type of all kinds'
 * settings from these, so the engine's configuration is checked to hold them.
 */
export type ConfigurableKind<S, L, C extends object> = KindHandler<S, L> & {
  /** This kind, configured with the run's settings (each left out keeps its default). */
  configure(settings: C): KindHandler<S, L>;
  /** Its entries in the table of settings (`engine/settings.ts`): key, flag, variable, file rule, help. */
  settings: readonly AnySettingSpec[];
};

/** What reading a kind that is only read found: its objects, or that this key may not read them (a warning). */
export type ReadOnlyLive<L = unknown> = { live: LiveObject<L>[] } | { unreadable: Diagnostic };

/** A kind cortex-sync reads but does not manage yet (`ReadOnlyKindModel`), with its read. */
export interface ReadOnlyKind<L = unknown> extends ReadOnlyKindModel {
  /**
   * Reads every object of this kind; read only when a manifest references one. A workspace that
   * does not let this key read them (permission, feature) is `unreadable`, any other failure throws.
   */
  readLive(ctx: Pick<FetchContext, 'client'>): Promise<ReadOnlyLive<L>>;
}

export type AnyReadOnlyKind = ReadOnlyKind<unknown>;
