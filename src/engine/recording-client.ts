/**
 * An `ApiClient` that writes one plan-log line per API operation, tagged with the change being
 * applied, and counts write requests. The executor gives one to every step.
 */
import { paginateWith } from '../api/paginate.js';
import { pathWithQuery } from '../api/request-parts.js';
import type { ApiClient, ApiRequest, ApiResponse } from '../api/types.js';
import { isApiError } from '../core/errors.js';
import type { Action, KindName, PlanLogEntry } from '../core/model.js';
import type { PlanLogSink } from './plan-log.js';

export interface OperationTag {
  kind: KindName;
  id: string;
  action: Action;
}

export interface WriteCounter {
  writes: number;
}

export const recordingClient = (
  base: ApiClient,
  tag: OperationTag,
  log: PlanLogSink,
  counter: WriteCounter,
  now: () => number = Date.now,
): ApiClient => {
  const record = <T>(req: ApiRequest, run: () => Promise<ApiResponse<T>>): Promise<ApiResponse<T>> => {
    const started = now();
    /** One plan-log line for this request; writes (retries included) are counted. */
    const logLine = (outcome: Pick<PlanLogEntry, 'status' | 'attempts' | 'durationMs' | 'outcome' | 'error'>): void => {
      if (req.method !== 'GET') counter.writes += outcome.attempts;
      log.write({
        ts: new Date(started).toISOString(),
        kind: tag.kind,
        id: tag.id,
        action: tag.action,
        method: req.method,
        path: pathWithQuery(req.path, req.query),
        ...outcome,
      });
    };
    return run().then(
      (response) => {
        const { status, attempts, durationMs } = response;
        logLine({ status, attempts, durationMs, outcome: 'ok' });
        return response;
      },
      (error: unknown) => {
        const api = isApiError(error) ? error : undefined;
        logLine({
          status: api?.status ?? null,
          attempts: api?.attempts ?? 1,
          durationMs: api?.durationMs ?? now() - started,
          outcome: 'failed',
          error: error instanceof Error ? error.message : String(error),
        });
        throw error;
      },
    );
  };
  const request = <T>(req: ApiRequest) => record(req, () => base.request<T>(req));
  // Paged reads go page by page through `request`, so each page is its own plan-log line.
  return {
    request,
    paginate: <T>(req: ApiRequest, listKey: string) => paginateWith<T>(request, req, listKey),
    close: () => base.close(),
    stats: () => base.stats(),
  };
};
