/**
 * The data every part of cortex-sync speaks: manifests as desired objects, API state as live
 * objects, and the plan that turns one into the other. Pure types, no IO.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * A kind's name, as the JSON plan names it (`kind`) and the registry keys it (`entity`,
 * `catalog-page`). Core is kind-agnostic: any string. `src/kinds/registry.ts` derives the union of
 * the registered names and their order; core takes the kinds it works with as a parameter.
 */
export type KindName = string;

/** A position in a manifest file; `file` is relative to the manifest root, with `/` separators. Lines and columns are 1-based. */
interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

type Severity = 'error' | 'warning';

/**
 * A problem found in the manifests, the plan or the API's answer. Rendered by entrypoints as
 * `file:line:column: severity: message`. `code` is stable (e.g. `yaml-syntax`, `schema`,
 * `duplicate-id`, `unknown-reference`, `api-violation`).
 */
export interface Diagnostic {
  severity: Severity;
  code: string;
  message: string;
  file?: string;
  line?: number;
  column?: number;
  /** Field path inside the document, dotted with [i] for array items: `info.x-cortex-owners[0].name`. */
  field?: string;
  kind?: KindName;
  id?: string;
}

/** One YAML document of a manifest file, with a way to locate any node in it. */
export interface ParsedDocument {
  /** Relative to the manifest root, `/` separators. */
  file: string;
  /** 0-based index of the document within the file. */
  index: number;
  /** Where the document starts. */
  line: number;
  column: number;
  /** The document as plain JSON-like data (anchors resolved). */
  value: unknown;
  /** Position of the node at `path`, or of its nearest existing ancestor. */
  locate(path: readonly PropertyKey[]): { line: number; column: number };
}

/** An object declared in the repository. `spec` is the validated manifest content. */
export interface DesiredObject<S = unknown> {
  kind: KindName;
  id: string;
  source: SourceLocation;
  spec: S;
  doc: ParsedDocument;
}

/** An object read from the workspace. `state` is the tolerant-parsed response. */
export interface LiveObject<L = unknown> {
  kind: KindName;
  id: string;
  /** The server's own identifier (entity `en…` id, initiative `cid`), when it has one. */
  serverId?: string;
  archived?: boolean;
  /** The source id of the repository that manages this object (ownership marker or inventory), if any. */
  owner?: string;
  /** Marked on the live object as never to be pruned. */
  protected?: boolean;
  state: L;
}

/** `kind/id`, the key of an object across the whole plan. */
export type ObjectKey = `${KindName}/${string}`;
export const objectKey = (kind: KindName, id: string): ObjectKey => `${kind}/${id}`;

export type Action = 'create' | 'update' | 'delete' | 'archive' | 'noop';
export const ACTIONS: readonly Action[] = ['create', 'update', 'delete', 'archive', 'noop'];

export interface FieldDiff {
  path: string;
  before?: JsonValue;
  after?: JsonValue;
}

/** One planned change. `desired`/`live` are for the executor; renderers never print them. */
export interface Change {
  kind: KindName;
  id: string;
  action: Action;
  /** Manifest file (relative) and line, when the change comes from a manifest. */
  source?: string;
  line?: number;
  diff: FieldDiff[];
  /** Why this change exists, for humans: "manifest removed; managed by source `platform-repo`". */
  reason?: string;
  /** The object exists live and is taken under management by this apply. */
  adopt?: boolean;
  /** The object is archived live and will be unarchived. */
  unarchive?: boolean;
  /**
   * Keys this source declared at its last apply and declares no more, removed by this write (a
   * kind that writes only declared keys, `write.sharedWrites`).
   */
  dropsKeys?: string[];
  /**
   * The write names this source on the object as one that writes keys into it (a kind that writes
   * only declared keys, into an object another source or nobody owns: `SharedWrites.claim`).
   */
  writesClaim?: boolean;
  /** Keys of the changes this one must wait for, with the reason: `after entity-type/database`. */
  waitsFor: ObjectKey[];
  desired?: DesiredObject;
  live?: LiveObject;
}

export interface PlanSummary {
  create: number;
  update: number;
  delete: number;
  archive: number;
  noop: number;
}

export interface Plan {
  /** Changes in a valid execution order (dependencies first, deletes after in reverse). Includes noops. */
  changes: Change[];
  diagnostics: Diagnostic[];
  summary: PlanSummary;
  /** Writes of this source's ownership record that an apply makes around the changes (`run-plan.ts`). */
  inventory?: InventoryWrite[];
  /** Who this plan acts for and which settings let it remove more than the defaults (`run-plan.ts`). */
  scope?: DeleteScope;
  /**
   * Objects of this source without a manifest of their own that another desired object now
   * declares inside itself (an API edge moved into its caller's `x-cortex-dependency`): never
   * removed; they leave the ownership record once that object's change is applied.
   */
  handOvers?: HandOver[];
  /**
   * Objects of this source without a manifest that a prune keeps (an entity type entities still
   * have): with `--prune` the plan warns (`prune-kept`); without, they are not leftovers.
   */
  held?: ObjectKey[];
}

/**
 * Where a setting came from: the operator (`flag`, Action `input`, watcher `setting`,
 * `environment`), the repository (`file`: `cortex-sync.yaml`), this source's ownership `record`
 * (what the last apply recorded), or the `default`.
 */
export type SettingFrom = 'flag' | 'input' | 'setting' | 'environment' | 'file' | 'record' | 'default';

/** A setting that decides how far a run may remove things: its key in the table of settings (`widensDeletes`). */
export type ScopeSettingName = string;

/** A setting that lets this run remove (or take over) more than the defaults do, for a reviewer. */
export interface WidenedSetting {
  setting: ScopeSettingName;
  value: JsonValue;
  from: SettingFrom;
  /** How it was said, when known: `--prune`, `CORTEX_SYNC_PRUNE`, `cortex-sync.yaml:3`. */
  name?: string;
  /** What it changes: "pruned entities are deleted, not archived". */
  effect: string;
}

/**
 * How this run's source id relates to the origin that first applied it (see `core/source-binding.ts`):
 * `bound` (same origin), `new` (no record yet: this apply binds it), `unbound` (a record from
 * before origins were recorded: this apply binds it), `claimed` (another origin: refused),
 * `takeover` (another origin, and the operator allowed the takeover: this apply rebinds it).
 */
export type BindingState = 'new' | 'bound' | 'unbound' | 'claimed' | 'takeover';

/** The plan's header: the source, its origin, and every setting that widens what the plan may remove. */
export interface DeleteScope {
  sourceId?: string;
  /** Where this run comes from (the repository, or the manifest root's path). */
  origin?: string;
  binding?: BindingState;
  /** The origin recorded for the source id, when another one than this run's. */
  recordedOrigin?: string;
  widened: WidenedSetting[];
}

/** An object handed over to the desired object that now declares it (see `Plan.handOvers`). */
export interface HandOver {
  kind: KindName;
  id: string;
  /** The object that declares it now. */
  to: ObjectKey;
}

/** What a plan-log line, an event or a count names: a kind, or `inventory` for the ownership record. */
export type StepKind = KindName;

/**
 * A write of this source's ownership record (the inventory: the objects of kinds without an own
 * marker that this repository manages). It is a step of the plan like any change, so a reviewer
 * sees every write: `before` grows the record ahead of every object write (nothing created is
 * ever untracked), `after` shrinks it once removals are done (a failed delete stays tracked).
 */
export interface InventoryWrite {
  phase: 'before' | 'after';
  /** The record's tag in the workspace. */
  id: string;
  /** `create` when the record does not exist yet. */
  action: 'create' | 'update';
  /** Keys the record gains and loses. */
  add: ObjectKey[];
  remove: ObjectKey[];
  reason: string;
}

/** How an inventory write ended in an apply. `skipped`: interrupted before it was sent. */
export interface InventoryWriteResult {
  write: InventoryWrite;
  outcome: Outcome;
  error?: string;
}

export const hasErrors = (diagnostics: readonly Diagnostic[]): boolean =>
  diagnostics.some((d) => d.severity === 'error');

/** How one planned change ended in an apply. */
export type Outcome = 'ok' | 'failed' | 'skipped';

export interface ChangeResult {
  change: Change;
  outcome: Outcome;
  /** One line, from the typed error (never holds the API key). */
  error?: string;
  /** For `skipped`: the change it depended on that failed or was skipped. */
  blockedBy?: ObjectKey;
  diagnostics?: Diagnostic[];
}

export interface ApplyReport {
  results: ChangeResult[];
  /** The ownership-record writes made (or not) around the changes. */
  inventory?: InventoryWriteResult[];
  /** The run was asked to stop: changes not yet started are `skipped` ("interrupted"). */
  interrupted?: boolean;
  /** Write requests sent (POST/PUT/PATCH/DELETE), including retries. */
  writeRequests: number;
  durationMs: number;
  planLogFile?: string;
}

/** One line of the plan log (JSON Lines), one per API operation of an apply. */
export interface PlanLogEntry {
  ts: string;
  kind: StepKind;
  id: string;
  action: Action;
  /** `null` on a line for a skipped change (no request was sent). */
  method: string | null;
  path: string | null;
  status: number | null;
  attempts: number;
  durationMs: number;
  outcome: Outcome;
  error?: string;
}

/**
 * What one run of the engine ended in. Expected outcomes are results, not exceptions; every
 * runtime maps them to exit codes, outputs and metrics through `core/outcome.ts`.
 */
export type ReconcileResult =
  /** Manifests failed to load or validate: nothing was read from or written to the API. */
  | { status: 'invalid'; diagnostics: Diagnostic[] }
  /** The plan has errors (ownership conflicts, unsafe prune, unknown references): nothing was written. */
  | { status: 'refused'; plan: Plan; diagnostics: Diagnostic[] }
  | { status: 'planned'; plan: Plan; diagnostics: Diagnostic[] }
  | { status: 'applied'; plan: Plan; diagnostics: Diagnostic[]; report: ApplyReport };
