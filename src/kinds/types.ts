/**
 * The contract every kind implements. A kind is one folder (`src/kinds/<kind>/`) exporting a
 * `KindHandler`, listed once in `registry.ts`. The engine never branches on a kind's name.
 */
import type { z } from 'zod';
import type { ApiClient } from '../api/types.js';
import type { PendingCreates } from '../core/pending-creates.js';
import type {
  Change,
  DesiredObject,
  Diagnostic,
  JsonValue,
  KindName,
  LiveObject,
  ParsedDocument,
} from '../core/model.js';

/** What a reference may point at: a managed kind, or a scorecard (read-only, checked when readable). */
export type ReferenceTargetKind = KindName | 'scorecard';

/** A reference from one manifest to another object: an ordering edge and a reference check. */
export interface ObjectReference {
  kind: ReferenceTargetKind;
  id: string;
  /** Field path for messages (`info.x-cortex-owners[0].name`) and the same path for `ParsedDocument.locate`. */
  field: string;
  path: readonly PropertyKey[];
  /** For entity references: the entity type the target must have (owners of provider CORTEX → `team`). */
  entityType?: string;
  /**
   * `true`: an ordering edge — the target is created/updated first and deleted last (entity type →
   * entity, team → owned entity, parent → child, entity → dependency edge). `false`: only an
   * existence check (e.g. `x-cortex-children`, which would otherwise form a cycle with parents).
   */
  ordering: boolean;
}

export interface ParseResult<S> {
  objects: DesiredObject<S>[];
  diagnostics: Diagnostic[];
}

export interface FetchContext {
  client: ApiClient;
  /** Every entity type name known (built-in, live custom and desired), for list filters such as descriptor `types`. */
  entityTypes: readonly string[];
  /** The desired objects of this kind (some kinds have no bulk read and read per parent, e.g. dependencies per caller). */
  desired: readonly DesiredObject[];
  /** Ids of this kind the inventory says this repository manages (so prune can see them). */
  managedIds: readonly string[];
}

export interface ApplyOptions {
  /** Identifies this repository; written as the ownership marker (none without a source id). */
  sourceId?: string;
  /** Records creates without a client-chosen identity before they are sent (the apply lease's record). */
  pendingCreates?: PendingCreates;
  /** Entity types: allow schema changes that break existing entities (the API's `force`). */
  forceEntityTypeSchema: boolean;
}

export interface ApplyContext {
  /** A client that records every request in the plan log, tagged with the change(s) being applied. */
  client: ApiClient;
  options: ApplyOptions;
  /** Optional: receives warnings about a change that succeeded (e.g. the API's descriptor warnings). */
  warn?(diagnostics: Diagnostic[]): void;
}

/**
 * One file `export` writes: its path in the repository layout (relative, `/` separators, e.g.
 * `.cortex/teams/platform.yaml`), the one YAML document it holds (keys in a readable order), and
 * the ids of the objects of this kind it declares (a dependency file holds every edge of one caller).
 */
export interface ManifestFile {
  path: string;
  document: JsonValue;
  ids: string[];
}

/** Per-change outcome of a batch. */
export interface BatchOutcome {
  change: Change;
  error?: Error;
}

export interface KindHandler<S = unknown, L = unknown> {
  readonly kind: KindName;
  /** Human name: "entity type", "Scaffolder template". */
  readonly title: string;
  /** The strict manifest schema (one YAML document); also exported as JSON Schema for editors. */
  readonly manifestSchema: z.ZodType;
  /** Does the manifest file at `relPath` (relative to the root, `/` separators) belong to this kind? */
  ownsFile(relPath: string): boolean;
  /** Validates one YAML document; one document may declare several objects (dependency edges). */
  parse(doc: ParsedDocument): ParseResult<S>;
  /** The objects this one names; the planner orders by them and checks that they exist. */
  references(obj: DesiredObject<S>): ObjectReference[];
  /** The entity type of an entity (desired or live); other kinds return undefined. */
  entityTypeOf?(obj: DesiredObject<S> | LiveObject<L>): string | undefined;
  /** Reads every live object of this kind with bulk, paged reads (never one GET per object when a list exists). */
  fetchLive(ctx: FetchContext): Promise<LiveObject<L>[]>;
  /** Canonical comparable forms: equal values ⇔ nothing to do. Pure. */
  desiredState(obj: DesiredObject<S>): JsonValue;
  liveState(obj: LiveObject<L>): JsonValue;
  /**
   * `true` when `fetchLive` sets `LiveObject.owner` itself from a marker on the object (entities).
   * Otherwise the engine's inventory record says which repository manages each object.
   */
  readonly ownershipOnObject?: boolean;
  /** What prune does to a live object of this kind by default. */
  readonly pruneAction: 'delete' | 'archive';
  /** Applies one change (create, update, delete, archive; with `unarchive`/`adopt` flags). Throws on failure. */
  apply(change: Change, ctx: ApplyContext): Promise<void>;
  /**
   * Optional: applies many changes of this kind at once (bulk endpoints). When present the executor
   * hands over every ready change of the kind in one phase (writes, or deletes) together.
   */
  applyBatch?(changes: readonly Change[], ctx: ApplyContext): Promise<BatchOutcome[]>;
  /** Optional: turns an API failure of `change` into diagnostics located in its manifest (e.g. descriptor violations). */
  explainFailure?(change: Change, error: Error): Diagnostic[];
}

/** The registry's view of a handler (methods are bivariant, so every `KindHandler<S, L>` fits). */
export type AnyKindHandler = KindHandler<unknown, unknown>;
