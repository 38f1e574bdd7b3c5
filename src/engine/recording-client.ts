/**
 * An `ApiClient` that writes one plan-log line per API operation, tagged with the change being
 * applied (or the ownership record), counts write requests, and passes the run's signal with
 * every request (aborting cancels the client's waits, never a request already sent). The executor
 * gives one to every step.
 */
import { paginateWith } from '../api/paginate.js';
import { pathWithQuery } from '../api/request-parts.js';
import type { ApiClient, ApiRequest, ApiResponse } from '../api/types.js';
import { isApiError, isCancelledError } from '../core/errors.js';
import type { Action, PlanLogEntry, StepKind } from '../core/model.js';
import type { Clock } from './context.js';
import type { PlanLogSink } from './plan-log.js';

interface OperationTag {
  kind: StepKind;
  id: string;
  action: Action;
}

export interface WriteCounter {
  writes: number;
}

/** A recording client and what it has seen so far. */
interface RecordedClient {
  client: ApiClient;
  /** Write requests sent (POST/PUT/PATCH/DELETE), retries included. */
  writes: number;
  /** Status of the last answer, `null` before any. */
  lastStatus: number | null;
}

export const recordingClient = (
  run: { client: ApiClient; clock: Clock; signal?: AbortSignal },
  tag: OperationTag,
  log: PlanLogSink,
): RecordedClient => {
  const base = run.client;
  const now = () => run.clock.now();
  const recorded: RecordedClient = { client: base, writes: 0, lastStatus: null };
  const record = <T>(req: ApiRequest, send: () => Promise<ApiResponse<T>>): Promise<ApiResponse<T>> => {
    const started = now();
    /** One plan-log line for this request; writes (retries included) are counted. */
    const logLine = (outcome: Pick<PlanLogEntry, 'status' | 'attempts' | 'durationMs' | 'outcome' | 'error'>): void => {
      if (req.method !== 'GET') recorded.writes += outcome.attempts;
      recorded.lastStatus = outcome.status;
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
    return send().then(
      (response) => {
        const { status, attempts, durationMs } = response;
        logLine({ status, attempts, durationMs, outcome: 'ok' });
        return response;
      },
      (error: unknown) => {
        const api = isApiError(error) ? error : undefined;
        // Cancelled while waiting (rate limit, Retry-After, backoff): the server processed nothing.
        const cancelled = isCancelledError(error);
        logLine({
          status: api?.status ?? null,
          attempts: api?.attempts ?? (cancelled ? 0 : 1),
          durationMs: api?.durationMs ?? now() - started,
          outcome: cancelled ? 'skipped' : 'failed',
          error: error instanceof Error ? error.message : String(error),
        });
        throw error;
      },
    );
  };
  const request = <T>(req: ApiRequest) =>
    record(req, () => base.request<T>(run.signal && !req.signal ? { ...req, signal: run.signal } : req));
  // Paged reads go page by page through `request`, so each page is its own plan-log line.
  recorded.client = {
    request,
    paginate: <T>(req: ApiRequest, listKey: string) => paginateWith<T>(request, req, listKey),
    close: () => base.close(),
    stats: () => base.stats(),
  };
  return recorded;
};

/** The run's client with its signal added to every request (reads outside the plan log). */
export const withSignal = (client: ApiClient, signal: AbortSignal): ApiClient => {
  const request = <T>(req: ApiRequest) => client.request<T>(req.signal ? req : { ...req, signal });
  return {
    request,
    paginate: <T>(req: ApiRequest, listKey: string) => paginateWith<T>(request, req, listKey),
    close: () => client.close(),
    stats: () => client.stats(),
  };
};

/**
 * After the run is asked to stop, a request that carries no signal of its own (the ownership
 * record's last write, the lease's release) may still go out, but may wait for the client (rate
 * limit, a Retry-After pause) at most `graceMs`; then it is cancelled, so a stopped run never
 * waits out a long pause. Before the stop, such requests are left alone.
 */
export const boundAfterStop = (
  run: { client: ApiClient; clock: Clock; signal: AbortSignal },
  graceMs: number,
): ApiClient => {
  const base = run.client;
  const request = <T>(req: ApiRequest): Promise<ApiResponse<T>> => {
    if (req.signal) return base.request<T>(req);
    const bound = new AbortController();
    const settled = new AbortController();
    const arm = () => {
      run.clock.sleep(graceMs, settled.signal).then(
        () => bound.abort(new Error(`stopped: ${req.operation} could not start within ${graceMs} ms`)),
        () => {},
      );
    };
    if (run.signal.aborted) arm();
    else run.signal.addEventListener('abort', arm, { once: true });
    return base.request<T>({ ...req, signal: bound.signal }).finally(() => {
      run.signal.removeEventListener('abort', arm);
      settled.abort();
    });
  };
  return {
    request,
    paginate: <T>(req: ApiRequest, listKey: string) => paginateWith<T>(request, req, listKey),
    close: () => base.close(),
    stats: () => base.stats(),
  };
};
