/**
 * The typed error family. Every failure carries a stable `code`; entrypoints alone turn them into
 * text, annotations or exit codes. Messages never contain the API key.
 */

type ErrorCode =
  | 'INVALID_MANIFESTS'
  | 'CONFIG'
  | 'API'
  | 'NETWORK'
  | 'TIMEOUT'
  | 'CANCELLED'
  | 'PLAN'
  | 'APPLY_FAILED'
  | 'UNSAFE_PRUNE'
  | 'OWNERSHIP_CONFLICT'
  | 'INTERRUPTED'
  | 'STALE_PLAN'
  | 'INTERNAL';

export class CortexSyncError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CortexSyncError';
    this.code = code;
  }
}

export class ConfigError extends CortexSyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG', message, options);
    this.name = 'ConfigError';
  }
}

/** The run was asked to stop (the context's signal) before it wrote anything. */
export class InterruptedError extends CortexSyncError {
  constructor(message = 'interrupted before anything was written', options?: { cause?: unknown }) {
    super('INTERRUPTED', message, options);
    this.name = 'InterruptedError';
  }
}

export interface ApiErrorDetails {
  /** What we were doing, for humans: "list entity descriptors", "upsert entity payments-api". */
  operation: string;
  method: string;
  /** Path with query string, never the base URL's credentials nor any header. */
  path: string;
  /** HTTP status, absent for network errors and timeouts. */
  status?: number;
  /** The API's own message (vendor `message`/`details`, problem+json `title`/`detail`, or violations). */
  apiMessage?: string;
  /** Raw parsed error body (JSON) when there was one. */
  body?: unknown;
  attempts: number;
  durationMs: number;
  requestId?: string;
}

/** A request that failed for good (after retries). */
export class ApiError extends CortexSyncError implements ApiErrorDetails {
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly status?: number;
  readonly apiMessage?: string;
  readonly body?: unknown;
  readonly attempts: number;
  readonly durationMs: number;
  readonly requestId?: string;
  constructor(code: 'API' | 'NETWORK' | 'TIMEOUT', details: ApiErrorDetails, options?: { cause?: unknown }) {
    const what =
      details.status !== undefined ? `HTTP ${details.status}` : code === 'TIMEOUT' ? 'timed out' : 'network error';
    const msg = details.apiMessage ? `: ${details.apiMessage}` : '';
    const tries = details.attempts > 1 ? ` (after ${details.attempts} attempts)` : '';
    super(code, `${details.operation} failed: ${details.method} ${details.path} → ${what}${msg}${tries}`, options);
    this.name = 'ApiError';
    this.operation = details.operation;
    this.method = details.method;
    this.path = details.path;
    this.status = details.status;
    this.apiMessage = details.apiMessage;
    this.body = details.body;
    this.attempts = details.attempts;
    this.durationMs = details.durationMs;
    this.requestId = details.requestId;
  }
}

export const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;

/** A request was cancelled (its signal aborted, or its client closed) while it waited; it was not sent again. */
export class CancelledError extends CortexSyncError {
  readonly operation: string;
  constructor(operation: string, message = `${operation} cancelled`, options?: { cause?: unknown }) {
    super('CANCELLED', message, options);
    this.name = 'CancelledError';
    this.operation = operation;
  }
}

export const isCancelledError = (e: unknown): e is CancelledError => e instanceof CancelledError;
