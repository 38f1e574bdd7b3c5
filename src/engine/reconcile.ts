/**
 * The one engine every runtime calls: load manifests → read the live workspace → plan → apply.
 * Expected outcomes (invalid manifests, a refused plan) are results; unexpected failures (the API
 * refusing a read) are thrown as typed errors for the entrypoint to render.
 */
import type { ApiClient } from '../api/types.js';
import { ConfigError } from '../core/errors.js';
import {
  type ApplyReport,
  type DesiredObject,
  type Diagnostic,
  hasErrors,
  type ObjectKey,
  objectKey,
  type Plan,
} from '../core/model.js';
import { buildPlan } from '../core/plan.js';
import { checkReferences } from '../core/references.js';
import { handlerFor, KIND_HANDLERS } from '../kinds/registry.js';
import type { AnyKindHandler } from '../kinds/types.js';
import { loadManifests } from '../source/load.js';
import type { SyncConfig } from './config.js';
import { executePlan } from './executor.js';
import { fetchLiveState } from './fetch-live.js';
import { inventoryTag, sameKeys, writeInventory } from './inventory.js';
import type { PlanLogSink } from './plan-log.js';
import { recordingClient } from './recording-client.js';

export type ReconcileResult =
  /** Manifests failed to load or validate: nothing was read from or written to the API. */
  | { status: 'invalid'; diagnostics: Diagnostic[] }
  /** The plan has errors (ownership conflicts, unsafe prune, unknown references): nothing was written. */
  | { status: 'refused'; plan: Plan; diagnostics: Diagnostic[] }
  | { status: 'planned'; plan: Plan; diagnostics: Diagnostic[] }
  | { status: 'applied'; plan: Plan; diagnostics: Diagnostic[]; report: ApplyReport };

export interface ValidateResult {
  objects: DesiredObject[];
  files: string[];
  diagnostics: Diagnostic[];
}

/** Offline: parse, validate and check references inside the repository. No key, no network. */
export const validateManifests = async (
  dir: string,
  handlers: readonly AnyKindHandler[] = KIND_HANDLERS,
): Promise<ValidateResult> => {
  const loaded = await loadManifests(dir, handlers);
  const diagnostics = [...loaded.diagnostics];
  if (!hasErrors(diagnostics)) diagnostics.push(...checkReferences({ desired: loaded.objects, handlers }));
  return { objects: loaded.objects, files: loaded.files, diagnostics };
};

export interface ReconcileInput {
  config: SyncConfig;
  client: ApiClient;
  mode: 'plan' | 'apply';
  planLog?: PlanLogSink;
  handlers?: readonly AnyKindHandler[];
  now?: () => number;
}

export const reconcile = async (input: ReconcileInput): Promise<ReconcileResult> => {
  const { config, client } = input;
  const handlers = input.handlers ?? KIND_HANDLERS;
  const lookup = (kind: AnyKindHandler['kind']) => handlers.find((h) => h.kind === kind) ?? handlerFor(kind);
  const sourceId = config.sourceId;
  if (!sourceId) {
    throw new ConfigError(
      'no source id: set `sourceId` in cortex-sync.yaml (or CORTEX_SYNC_SOURCE_ID); it could not be derived from a git remote',
    );
  }

  const loaded = await loadManifests(config.dir, handlers);
  if (hasErrors(loaded.diagnostics)) return { status: 'invalid', diagnostics: loaded.diagnostics };
  const desired = loaded.objects;

  const needScorecards = desired.some((o) =>
    lookup(o.kind)
      .references(o)
      .some((r) => r.kind === 'scorecard'),
  );
  const state = await fetchLiveState({ client, handlers, desired, sourceId, needScorecards });
  const referenceDiagnostics = checkReferences({
    desired,
    live: state.live,
    handlers,
    ...(state.scorecards ? { scorecards: state.scorecards } : {}),
  });
  const plan = buildPlan({
    desired,
    live: state.live,
    handlers,
    options: {
      sourceId,
      prune: config.prune,
      entityPruneAction: config.pruneEntities,
      allowTakeover: config.allowTakeover,
      allowMassDelete: config.allowMassDelete,
      maxDeleteShare: config.maxDeleteShare,
      ...(config.maxDeleteCount !== undefined ? { maxDeleteCount: config.maxDeleteCount } : {}),
      protect: config.protect,
      manifestsComplete: true,
    },
  });
  const diagnostics = [...loaded.diagnostics, ...state.diagnostics, ...referenceDiagnostics, ...plan.diagnostics];
  if (hasErrors(diagnostics)) return { status: 'refused', plan, diagnostics };
  if (input.mode === 'plan') return { status: 'planned', plan, diagnostics };

  // Apply. The inventory grows before the writes (so nothing created is ever untracked) and
  // shrinks after them (so a failed delete stays tracked).
  const log = input.planLog ?? { write: () => {}, close: async () => {} };
  const tracked = new Set(handlers.filter((h) => !h.ownershipOnObject).map((h) => h.kind));
  const previous = new Set<ObjectKey>(state.inventories.bySource.get(sourceId) ?? []);
  const desiredKeys = desired.filter((o) => tracked.has(o.kind)).map((o) => objectKey(o.kind, o.id));
  const grown = new Set<ObjectKey>([...previous, ...desiredKeys]);
  const liveKeys = new Set(state.live.map((o) => objectKey(o.kind, o.id)));
  const counter = { writes: 0 };
  const tag = { kind: 'entity' as const, id: inventoryTag(sourceId), action: 'update' as const };
  const inventoryClient = recordingClient(client, tag, log, counter, input.now);
  let typeExists = state.inventoryTypeExists;
  if (!sameKeys(grown, previous)) {
    await writeInventory(inventoryClient, sourceId, grown, typeExists);
    typeExists = true;
  }

  const report = await executePlan({
    changes: plan.changes,
    handlerFor: lookup,
    client,
    options: { sourceId, forceEntityTypeSchema: config.forceEntityTypeSchema },
    concurrency: config.concurrency,
    log,
    ...(input.now ? { now: input.now } : {}),
  });

  const removed = new Set(
    report.results
      .filter((r) => r.outcome === 'ok' && (r.change.action === 'delete' || r.change.action === 'archive'))
      .map((r) => objectKey(r.change.kind, r.change.id)),
  );
  const desiredSet = new Set(desiredKeys);
  const final = new Set([...grown].filter((key) => !removed.has(key) && (desiredSet.has(key) || liveKeys.has(key))));
  if (!sameKeys(final, grown)) await writeInventory(inventoryClient, sourceId, final, typeExists);
  report.writeRequests += counter.writes;
  return { status: 'applied', plan, diagnostics, report };
};
