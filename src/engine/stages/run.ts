/**
 * What the stages of one `reconcile` share: the run value each stage takes and returns (`Run`:
 * what the stages so far found), and what every stage reads and none changes (`StageContext`:
 * the engine context, the run's settings and kinds). Each stage is `(run, ctx) → run`, in its own
 * file of this folder, named as in `core/outcome.ts` `STAGES`.
 */
import type { AnySettingSpec } from '../../core/settings.js';
import type { Diagnostic, DesiredObject, Plan, ReconcileResult } from '../../core/model.js';
import type { FullReadReason, PlanWork, ReadReport } from '../../core/outcome.js';
import type { InventoryStepsInput } from '../../core/inventory-steps.js';
import type { RecordMeta } from '../../core/record-meta.js';
import type { SourceBinding } from '../../core/source-binding.js';
import type { AnyKindHandler, AnyReadOnlyKind } from '../../kinds/types.js';
import type { OwnershipSnapshot, OwnershipStore } from '../../ownership/store.js';
import type { ManifestCache } from '../../source/manifest-cache.js';
import type { SyncConfig } from '../config.js';
import type { EngineContext } from '../context.js';
import type { LiveState } from '../fetch-live.js';
import type { HeldLease } from '../lease.js';
import type { LeaseKeeper } from '../lease-keeper.js';
import type { LiveCache } from '../live-cache.js';
import type { PlanLogSink } from '../plan-log.js';
import type { ApplyProgress } from './apply.js';
import type { PrecheckIo } from '../saved-plan.js';

/**
 * How the `read-live` stage reads the workspace for a set of desired objects: the full read, or
 * the watcher's, which keeps the last read and re-reads what a change touches (`live-cache.ts`).
 */
export type LiveReader = (request: {
  client: EngineContext['client'];
  handlers: readonly AnyKindHandler[];
  readOnlyKinds: readonly AnyReadOnlyKind[];
  store: OwnershipStore;
  desired: readonly DesiredObject[];
  sourceId: string | undefined;
}) => Promise<LiveState>;

/**
 * What a long-lived caller (the watcher) keeps between runs, so that a run after a change does
 * only the work the change needs. Without it every run reads everything, and takes and gives back
 * its own lease.
 */
export interface RunSession {
  /** Parse results kept between runs: unchanged files are not read again. */
  manifestCache?: ManifestCache;
  /**
   * With `manifestCache`: the first load reads only the files noted to it as changed (the
   * watcher's file events; `source/noted-changes.ts`). A pass again under the lease looks at every file.
   */
  onlyNotedChanges?: boolean;
  /** The live state kept between runs: a run after a change reads only what it touched (`live-cache.ts`). */
  liveCache?: LiveCache;
  /** With `liveCache`: read everything this run, for this reason (the heal interval). */
  fullRead?: FullReadReason;
  /** Who takes and gives back the apply lease (default: taken for the apply, released after it). */
  leases?: LeaseKeeper;
}

/** What every stage of a run reads: the engine context and the run's settings and kinds. */
export interface StageContext extends EngineContext {
  config: SyncConfig;
  mode: 'plan' | 'apply';
  /** The managed kinds, in apply order, configured with `config`. */
  handlers: readonly AnyKindHandler[];
  readOnlyKinds: readonly AnyReadOnlyKind[];
  /** The table of settings of the engine and of the run's kinds (the delete-scope header reads it). */
  settings: readonly AnySettingSpec[];
  store: OwnershipStore;
  /** The handler of a kind among `handlers`. */
  lookup: (kind: AnyKindHandler['kind']) => AnyKindHandler;
  /** The caller's plan log (the lease's writes are logged only with one). */
  planLog: PlanLogSink | undefined;
  approve?: (plan: Plan, diagnostics: readonly Diagnostic[], work: PlanWork) => Promise<boolean>;
  /**
   * Sees the first plan that may be applied, before the lease or any write (a saved plan's
   * judgement, the Action's review): `false` ends the run there, not approved, nothing written.
   */
  onPlanned?: (pass: PlannedPass) => Promise<boolean | void> | boolean | void;
  session: RunSession;
  /** A saved plan's first judgement, by identity, before the workspace is read (`ReconcileInput.precheck`). */
  precheck?: (desired: readonly DesiredObject[], io: PrecheckIo) => Promise<void>;
  /** Remembered in the lease record after a clean apply (`ReconcileInput.applyMark`). */
  applyMark?: () => string | undefined;
  /** Without a source id (not a git checkout, none configured): nothing is marked, adopted or recorded. */
  sourceId: string | undefined;
}

/** A plan that may be applied, with what the writing stages need. */
export interface PlannedPass {
  status: 'planned';
  plan: Plan;
  diagnostics: Diagnostic[];
  work: PlanWork;
  /** Undefined without a source id: no ownership record is written. */
  steps: InventoryStepsInput | undefined;
  sourceId: string | undefined;
  /** The records as read, which write this source's record. */
  ownership: OwnershipSnapshot;
  /** What the plan was made on: every manifest, and the live state as read. */
  desired: readonly DesiredObject[];
  state: LiveState;
}

/** What the reading stages came to. */
type PassResult =
  | { status: 'invalid'; diagnostics: Diagnostic[] }
  | { status: 'refused'; plan: Plan; diagnostics: Diagnostic[] }
  | PlannedPass;

/** What `validate` found. */
export interface Checked {
  recordedMeta: RecordMeta | undefined;
  binding: SourceBinding | undefined;
  diagnostics: Diagnostic[];
}

/** One run, as the stages so far left it. */
export interface Run {
  /** How `read-live` reads the workspace this pass. */
  readLive: LiveReader;
  /** `load` reads only the files noted as changed (the watcher's first pass). */
  onlyNotedChanges: boolean;
  /** `load`: every manifest's object, and what loading said (strictly). */
  loaded?: { desired: readonly DesiredObject[]; diagnostics: Diagnostic[] };
  /** `read-live`: the workspace as read. */
  state?: LiveState;
  /** `validate`. */
  checked?: Checked;
  /** `load` (invalid) or `plan`: what the reading stages came to. */
  pass?: PassResult;
  /** The GET requests of the first reading pass, when it read the whole workspace (what a re-check may cost at most). */
  firstReadGets?: number;
  /** `lease`: the source's lease, and whether a keeper kept it from an earlier run. */
  lease?: { held: HeldLease; kept: boolean };
  underLease?: ReadReport['underLease'];
  fallback?: ReadReport['fallback'];
  /** `recheck`: the plan is to be made again, in full, under the lease. */
  readAgain?: boolean;
  /** `apply`: what the record and the changes came to so far (`record` finishes it). */
  applying?: ApplyProgress;
  /** The run's result, once a stage ended it. */
  result?: ReconcileResult;
  /** The pass whose plan was applied. */
  applied?: PlannedPass;
}

/** A stage: takes the run as the stages before it left it, returns it as this one leaves it. */
export type Stage = (run: Run, ctx: StageContext) => Promise<Run>;
