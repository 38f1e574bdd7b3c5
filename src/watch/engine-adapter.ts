/**
 * The watcher's one seam to the engine and the API client: builds the client for a configuration
 * with the watcher's event sink, and calls `reconcile(input, ctx)`. Kept apart so that a change of
 * either signature touches this file only.
 */
import { apiClientFor } from '../engine/api-client.js';
import type { ApiClient } from '../api/types.js';
import type { Plan } from '../core/model.js';
import type { FullReadReason } from '../core/outcome.js';
import type { SyncConfig } from '../engine/config.js';
import type { Clock, EngineContext, EventSink } from '../engine/context.js';
import type { LeaseKeeper } from '../engine/lease-keeper.js';
import type { LiveCache } from '../engine/live-cache.js';
import type { PlanLogSink } from '../engine/plan-log.js';
import { type ReconciledRun, reconcile } from '../engine/reconcile.js';
import type { ManifestCache } from '../source/manifest-cache.js';

/** The client for `config`, reporting every attempt, every 429 pause and slow answers to `events`. */
export const createWatchClient = (config: SyncConfig, apiKey: string, events: EventSink, clock: Clock): ApiClient =>
  apiClientFor(config, apiKey, { clock, events });

/**
 * One apply; `manifestCache` keeps parse results between runs so that unchanged files are not read
 * again (`onlyNotedChanges`: nor looked at, when not noted to it as changed); `liveCache` keeps the live state, so that a run after a change reads only what it touched
 * (`fullRead`: this run reads everything, and why); `leases` keeps the apply lease a while after
 * an apply; `approve` sees the plan before anything is written (`false`: nothing is, the run is
 * `not-approved`).
 */
export const applyOnce = (
  config: SyncConfig,
  planLog: PlanLogSink,
  ctx: EngineContext,
  options: {
    manifestCache?: ManifestCache;
    onlyNotedChanges?: boolean;
    liveCache?: LiveCache;
    fullRead?: FullReadReason;
    leases?: LeaseKeeper;
    approve?: (plan: Plan) => Promise<boolean>;
  } = {},
): Promise<ReconciledRun> =>
  reconcile(
    {
      config,
      mode: 'apply',
      planLog,
      ...(options.manifestCache ? { manifestCache: options.manifestCache } : {}),
      ...(options.onlyNotedChanges === true ? { onlyNotedChanges: true } : {}),
      ...(options.liveCache ? { liveCache: options.liveCache } : {}),
      ...(options.fullRead !== undefined ? { fullRead: options.fullRead } : {}),
      ...(options.leases ? { leases: options.leases } : {}),
      ...(options.approve ? { approve: options.approve } : {}),
    },
    ctx,
  );
