/**
 * An `ApiClient` that writes one plan-log line per API operation, tagged with the change being
 * applied, and counts write requests. The executor gives one to every step.
 */
import { paginateWith } from '../api/paginate.js';
import type { ApiClient, ApiRequest, ApiResponse } from '../api/types.js';
import { isApiError } from '../core/errors.js';
import type { Action, KindName } from '../core/model.js';
import type { PlanLogSink } from './plan-log.js';

export interface OperationTag {
  kind: KindName;
  id: string;
  action: Action;
}

export interface WriteCounter {
  writes: number;
}

const withQuery = (req: ApiRequest): string => {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(req.query ?? {})) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  const qs = params.toString();
  return qs ? `${req.path}?${qs}` : req.path;
};

export const recordingClient = (
  base: ApiClient,
  tag: OperationTag,
  log: PlanLogSink,
  counter: WriteCounter,
  now: () => number = Date.now,
): ApiClient => {
  const record = <T>(req: ApiRequest, run: () => Promise<ApiResponse<T>>): Promise<ApiResponse<T>> => {
    const started = now();
    const isWrite = req.method !== 'GET';
    return run().then(
      (response) => {
        if (isWrite) counter.writes += response.attempts;
        log.write({
          ts: new Date(started).toISOString(),
          kind: tag.kind,
          id: tag.id,
          action: tag.action,
          method: req.method,
          path: withQuery(req),
          status: response.status,
          attempts: response.attempts,
          durationMs: response.durationMs,
          outcome: 'ok',
        });
        return response;
      },
      (error: unknown) => {
        const attempts = isApiError(error) ? error.attempts : 1;
        if (isWrite) counter.writes += attempts;
        log.write({
          ts: new Date(started).toISOString(),
          kind: tag.kind,
          id: tag.id,
          action: tag.action,
          method: req.method,
          path: withQuery(req),
          status: isApiError(error) ? (error.status ?? null) : null,
          attempts,
          durationMs: isApiError(error) ? error.durationMs : now() - started,
          outcome: 'failed',
          error: error instanceof Error ? error.message : String(error),
        });
        throw error;
      },
    );
  };
  const request = <T>(req: ApiRequest) => record(req, () => base.request<T>(req));
  // Paged reads go page by page through `request`, so each page is its own plan-log line.
  return { request, paginate: <T>(req: ApiRequest, listKey: string) => paginateWith<T>(request, req, listKey) };
};
