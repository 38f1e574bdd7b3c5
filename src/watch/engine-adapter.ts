/**
 * The watcher's one seam to the engine and the API client: builds the client for a configuration
 * with the watcher's event sink, and calls `reconcile(input, ctx)`. Kept apart so that a change of
 * either signature touches this file only.
 */
import { apiClientFor } from '../engine/api-client.js';
import type { ApiClient } from '../api/types.js';
import type { Plan } from '../core/model.js';
import type { SyncConfig } from '../engine/config.js';
import type { Clock, EngineContext, EventSink } from '../engine/context.js';
import type { PlanLogSink } from '../engine/plan-log.js';
import { type ReconciledRun, reconcile, type RunSession } from '../engine/reconcile.js';

/** The client for `config`, reporting every attempt, every 429 pause and slow answers to `events`. */
export const createWatchClient = (config: SyncConfig, apiKey: string, events: EventSink, clock: Clock): ApiClient =>
  apiClientFor(config, apiKey, { clock, events });

/**
 * One apply; `session` is what the watcher keeps between runs (`RunSession`: parse results, the
 * live state, the lease it keeps a while after an apply, and what this run reads again); `approve`
 * sees the plan before anything is written (`false`: nothing is, the run is `not-approved`).
 */
export const applyOnce = (
  config: SyncConfig,
  planLog: PlanLogSink,
  ctx: EngineContext,
  options: {
    session?: RunSession;
    approve?: (plan: Plan) => Promise<boolean>;
    /** Remembered in the source's lease record after a clean apply (`ReconcileInput.applyMark`). */
    applyMark?: () => string | undefined;
  } = {},
): Promise<ReconciledRun> =>
  reconcile(
    {
      config,
      mode: 'apply',
      planLog,
      ...(options.session ? { session: options.session } : {}),
      ...(options.approve ? { approve: options.approve } : {}),
      ...(options.applyMark ? { applyMark: options.applyMark } : {}),
    },
    ctx,
  );
