/**
 * The watcher's one seam to the engine and the API client: builds the client for a configuration
 * with the watcher's event sink, and calls `reconcile(input, ctx)`. Kept apart so that a change of
 * either signature touches this file only.
 */
import { createApiClient } from '../api/client.js';
import type { ApiClient } from '../api/types.js';
import type { SyncConfig } from '../engine/config.js';
import type { EngineContext, EventSink } from '../engine/context.js';
import type { PlanLogSink } from '../engine/plan-log.js';
import { type ReconcileResult, reconcile } from '../engine/reconcile.js';

/** The client for `config`, reporting every attempt (and every 429 pause) to `events`. */
export const createWatchClient = (config: SyncConfig, apiKey: string, events: EventSink): ApiClient =>
  createApiClient({
    baseUrl: config.baseUrl,
    apiKey,
    requestsPerMinute: config.requestsPerMinute,
    concurrency: config.concurrency,
    onRequest: (attempt) => {
      events.emit({
        type: 'request',
        operation: attempt.operation,
        method: attempt.method,
        status: attempt.status ?? null,
        durationMs: attempt.durationMs,
        ...(attempt.retryInMs !== undefined ? { retryInMs: attempt.retryInMs } : {}),
      });
      if (attempt.status === 429 && attempt.retryInMs !== undefined) {
        events.emit({ type: 'ratelimit.paused', ms: attempt.retryInMs });
      }
    },
  });

export const applyOnce = (config: SyncConfig, planLog: PlanLogSink, ctx: EngineContext): Promise<ReconcileResult> =>
  reconcile({ config, mode: 'apply', planLog }, ctx);
