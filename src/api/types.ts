/**
 * The port the engine and the kinds talk to. The HTTP adapter (`client.ts`) is the only code that
 * does HTTP; tests may run the engine against the emulator through the same adapter.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined;

export interface ApiRequest {
  /** What this request does, for errors and the plan log: "list entity descriptors". */
  operation: string;
  method: HttpMethod;
  /** Path below the base URL, starting with `/api/v1/`. Path parameters must already be encoded (use `encodePathSegment`). */
  path: string;
  /** Arrays are sent as repeated keys (`types=a&types=b`); `undefined` values are left out. */
  query?: Record<string, QueryValue>;
  /** A string is sent as is (with `contentType`); anything else is sent as JSON. */
  body?: unknown;
  /** Defaults to `application/json` for non-string bodies. Entities use `application/openapi;charset=UTF-8`. */
  contentType?: string;
  accept?: string;
  /**
   * May this request be retried after a 5xx, a timeout or a network error? Defaults to true for
   * GET/PUT/DELETE, false for POST/PATCH. A 429 is always retried, whatever the verb (the server
   * did not process it).
   */
  idempotent?: boolean;
  /** Statuses (beyond 2xx) that are answers, not errors: e.g. `[404]` for an existence probe. */
  acceptStatus?: readonly number[];
  /**
   * Aborting cancels this request's waits at once (rate-limiter queue, Retry-After pause, backoff
   * sleep) with a `CancelledError`, and no new attempt starts. An attempt already sent is not
   * aborted: it finishes or times out.
   */
  signal?: AbortSignal;
}

export interface ApiResponse<T = unknown> {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** Parsed JSON when the response is JSON, the text otherwise, `undefined` when empty. */
  body: T;
  /** How many attempts it took (1 = first try). */
  attempts: number;
  /** Wall time across all attempts, including waits. */
  durationMs: number;
}

/** Every HTTP attempt the client makes, for observers (plan log, tests, benchmarks). */
export interface RequestEvent {
  operation: string;
  method: HttpMethod;
  path: string;
  status?: number;
  attempt: number;
  durationMs: number;
  /** Set when the attempt will be retried. */
  retryInMs?: number;
  error?: string;
}

/** Counters for benchmarks, metrics and tests. */
export interface ClientStats {
  /** Attempts sent (retries included). */
  requestsSent: number;
  requestsByMethod: Record<HttpMethod, number>;
  /** 429 responses received. */
  rateLimited: number;
  /** Attempts that were retries. */
  retries: number;
  timeouts: number;
  networkErrors: number;
  /** Total time the client was paused by `Retry-After` (overlaps counted once). */
  pausedMs: number;
  /** Attempts started while the client was paused. Must stay 0. */
  requestsStartedDuringPause: number;
  /** The rate the client sends at now (below its ceiling after 429s). */
  currentPerMinute: number;
  /** How many times a 429 lowered the rate. */
  rateDecreases: number;
}

/** All-zero stats, for fakes of the port. */
export const emptyClientStats = (): ClientStats => ({
  requestsSent: 0,
  requestsByMethod: { GET: 0, POST: 0, PUT: 0, PATCH: 0, DELETE: 0 },
  rateLimited: 0,
  retries: 0,
  timeouts: 0,
  networkErrors: 0,
  pausedMs: 0,
  requestsStartedDuringPause: 0,
  currentPerMinute: 0,
  rateDecreases: 0,
});

export interface ApiClient {
  /** Sends one request, retrying as the policy allows. Throws `ApiError` on a final failure. */
  request<T = unknown>(req: ApiRequest): Promise<ApiResponse<T>>;
  /**
   * Reads every page of a `{<listKey>: [...], page, totalPages}` list, `pageSize` 1000 unless the
   * query sets one. Stops on an empty page or when `page + 1 >= totalPages`.
   */
  paginate<T = unknown>(req: ApiRequest, listKey: string): Promise<T[]>;
  /** Releases the client's sockets and timers; waiting requests are cancelled. Idempotent. */
  close(): Promise<void>;
  /** Counters since the client was created. */
  stats(): ClientStats;
}

/** Encodes one path segment (tags may hold `@`, `/`, `.`). */
export const encodePathSegment = (value: string): string => encodeURIComponent(value);
