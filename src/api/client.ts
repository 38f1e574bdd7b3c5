/**
 * The undici adapter behind the `ApiClient` port — the only code in cortex-sync that does HTTP.
 * Every attempt passes one client-wide gate (`RateLimiter`): a 429 closes it for `Retry-After`, so
 * no queued or new request starts inside that window. Retries follow `retry-policy.ts`.
 */
import { Agent, type Dispatcher, request as undiciRequest } from 'undici';
import { ApiError, ConfigError } from '../core/errors.js';
import { VERSION } from '../version.js';
import { extractApiMessage, MAX_REQUEST_BODY_BYTES, RequestTooLargeError, redactText, redactValue } from './errors.js';
import { paginateWith } from './paginate.js';
import { RateLimiter } from './rate-limiter.js';
import {
  DEFAULT_BASE_URL,
  decodeBody,
  normalizeBaseUrl,
  normalizeHeaders,
  pathWithQuery,
  type SerializedBody,
  serializeBody,
} from './request-parts.js';
import { type AttemptErrorKind, parseRetryAfterMs, retryDelayMs, shouldRetry } from './retry-policy.js';
import type { ApiClient, ApiRequest, ApiResponse, ClientStats, HttpMethod, RequestEvent } from './types.js';

export interface ApiClientOptions {
  /** Default https://api.getcortexapp.com; a trailing slash is tolerated, a path prefix kept. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never appears in errors, events or logs. */
  apiKey: string;
  /** Default: a shared keep-alive `Agent`. */
  dispatcher?: Dispatcher;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1), for backoff jitter. */
  random?: () => number;
  /** Client-wide sustained rate; default 1000 (the API's documented limit). */
  requestsPerMinute?: number;
  /** Requests that may start back to back; default a quarter of `requestsPerMinute`. */
  burst?: number;
  /** Max requests in flight; default 8. */
  concurrency?: number;
  /** Per attempt; default 30 s. */
  timeoutMs?: number;
  /** Attempts per request, first included; default 5. */
  maxAttempts?: number;
  /** A 429 asking for a longer wait than this fails at once instead of stalling; default 5 min. */
  maxRetryAfterMs?: number;
  /** Default `cortex-sync/<version>`. */
  userAgent?: string;
  /** Called after every attempt. Exceptions thrown by the observer are ignored. */
  onRequest?: (event: RequestEvent) => void;
}

type AttemptOutcome =
  | {
      kind: 'response';
      status: number;
      headers: Record<string, string>;
      body: unknown;
      durationMs: number;
      /** For a 429: the pause applied to the whole client. */
      rateLimitDelayMs?: number;
    }
  | { kind: 'error'; errorKind: AttemptErrorKind; message: string; cause: unknown; durationMs: number };

let sharedAgent: Agent | undefined;

/** The process-wide keep-alive agent used when no dispatcher is injected. */
export const defaultDispatcher = (): Dispatcher => {
  sharedAgent ??= new Agent({ connections: 16, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
  return sharedAgent;
};

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const HEADER_SAFE = /^[\x21-\x7e]+$/;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

const errorText = (error: unknown): string => {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
};

/** Creates the HTTP client. One client = one rate limit and one pause gate for all its requests. */
export const createApiClient = (options: ApiClientOptions): ApiClient => {
  if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new ConfigError('No Cortex API key was given');
  if (!HEADER_SAFE.test(options.apiKey)) {
    throw new ConfigError('The Cortex API key contains spaces or characters not allowed in an HTTP header');
  }
  const apiKey = options.apiKey;
  // The key as sent, and as a server might echo it back inside a URL.
  const secrets = [...new Set([apiKey, encodeURIComponent(apiKey)])];
  const baseUrl = normalizeBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
  const dispatcher = options.dispatcher ?? defaultDispatcher();
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 5));
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 300_000;
  const userAgent = options.userAgent ?? `cortex-sync/${VERSION}`;
  const requestsPerMinute = options.requestsPerMinute ?? 1000;
  const limiter = new RateLimiter({
    requestsPerMinute,
    // The API's limit is per minute: a quarter of a minute's budget may go back to back (a no-op
    // plan of 10,000 entities is ~220 reads), then requests are spaced at the rate. A server that
    // smooths harder answers 429 with Retry-After, which pauses the whole client.
    burst: options.burst ?? Math.max(1, Math.floor(requestsPerMinute / 4)),
    concurrency: options.concurrency ?? 8,
    now,
    sleep,
  });
  const counters: Omit<ClientStats, 'pausedMs'> = {
    requestsSent: 0,
    requestsByMethod: { GET: 0, POST: 0, PUT: 0, PATCH: 0, DELETE: 0 },
    rateLimited: 0,
    retries: 0,
    timeouts: 0,
    networkErrors: 0,
    requestsStartedDuringPause: 0,
  };

  const emit = (event: RequestEvent): void => {
    if (!options.onRequest) return;
    try {
      options.onRequest(event);
    } catch {
      // An observer must not break a sync.
    }
  };

  /** Pauses the whole client on a 429, unless the server asks for longer than we are willing to wait. */
  const pauseForRateLimit = (delayMs: number): void => {
    if (delayMs <= maxRetryAfterMs) limiter.pauseFor(delayMs);
  };

  /** One attempt. Runs inside the limiter: called synchronously when the gate grants it. */
  const attemptOnce = async (
    method: HttpMethod,
    url: string,
    headers: Record<string, string>,
    body: SerializedBody | undefined,
    attempt: number,
  ): Promise<AttemptOutcome> => {
    if (limiter.isPaused()) counters.requestsStartedDuringPause++;
    counters.requestsSent++;
    counters.requestsByMethod[method]++;
    const started = now();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const res = await undiciRequest(url, {
        method,
        headers,
        body: body?.payload ?? null,
        dispatcher,
        signal: controller.signal,
      });
      const resHeaders = normalizeHeaders(res.headers);
      // Close the gate as soon as the status is known, before reading the body.
      const headerHint = res.statusCode === 429 ? parseRetryAfterMs(resHeaders['retry-after'], now()) : undefined;
      if (headerHint !== undefined) pauseForRateLimit(headerHint);
      const resBody = decodeBody(await res.body.text(), resHeaders['content-type']);
      const outcome: AttemptOutcome = {
        kind: 'response',
        status: res.statusCode,
        headers: resHeaders,
        body: resBody,
        durationMs: now() - started,
      };
      if (res.statusCode === 429) {
        counters.rateLimited++;
        const delay = retryDelayMs({ status: 429, headers: resHeaders, body: resBody, attempt, random, nowMs: now() });
        pauseForRateLimit(delay);
        outcome.rateLimitDelayMs = delay;
      }
      return outcome;
    } catch (cause) {
      const code = (cause as { code?: unknown } | null)?.code;
      const isTimeout = timedOut || (typeof code === 'string' && TIMEOUT_CODES.has(code));
      if (isTimeout) counters.timeouts++;
      else counters.networkErrors++;
      const message = timedOut ? `no response within ${timeoutMs} ms` : redactText(errorText(cause), secrets);
      return {
        kind: 'error',
        errorKind: isTimeout ? 'timeout' : 'network',
        message,
        cause,
        durationMs: now() - started,
      };
    } finally {
      clearTimeout(timer);
    }
  };

  const request = async <T = unknown>(req: ApiRequest): Promise<ApiResponse<T>> => {
    const { method, operation } = req;
    const rawPath = pathWithQuery(req.path, req.query);
    const path = redactText(rawPath, secrets);
    const url = `${baseUrl}${rawPath}`;
    const body = serializeBody(req);
    if (body && body.bytes > MAX_REQUEST_BODY_BYTES) {
      throw new RequestTooLargeError({ operation, method, path }, body.bytes, MAX_REQUEST_BODY_BYTES);
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${apiKey}`,
      'user-agent': userAgent,
      accept: req.accept ?? 'application/json',
    };
    if (body) headers['content-type'] = body.contentType;
    const started = now();

    for (let attempt = 1; ; attempt++) {
      const outcome = await limiter.schedule(() => attemptOnce(method, url, headers, body, attempt));
      const event: RequestEvent = { operation, method, path, attempt, durationMs: outcome.durationMs };
      if (outcome.kind === 'response') {
        event.status = outcome.status;
        const ok = (outcome.status >= 200 && outcome.status < 300) || (req.acceptStatus ?? []).includes(outcome.status);
        if (ok) {
          emit(event);
          return {
            status: outcome.status,
            headers: outcome.headers,
            body: outcome.body as T,
            attempts: attempt,
            durationMs: now() - started,
          };
        }
      }
      const status = outcome.kind === 'response' ? outcome.status : undefined;
      const errorKind = outcome.kind === 'error' ? outcome.errorKind : undefined;
      const extracted = outcome.kind === 'response' ? extractApiMessage(outcome.body) : {};
      const apiMessage =
        outcome.kind === 'error'
          ? outcome.message
          : extracted.apiMessage !== undefined
            ? redactText(extracted.apiMessage, secrets)
            : undefined;
      let retryInMs: number | undefined;
      let refusal: string | undefined;
      if (shouldRetry({ method, idempotent: req.idempotent, status, errorKind, attempt, maxAttempts })) {
        retryInMs =
          outcome.kind === 'response' && outcome.rateLimitDelayMs !== undefined
            ? outcome.rateLimitDelayMs
            : retryDelayMs({
                status,
                headers: outcome.kind === 'response' ? outcome.headers : undefined,
                attempt,
                random,
                nowMs: now(),
              });
        if (status === 429 && retryInMs > maxRetryAfterMs) {
          refusal = `the API asked to wait ${Math.ceil(retryInMs / 1000)} s, longer than the ${Math.ceil(maxRetryAfterMs / 1000)} s this client waits`;
          retryInMs = undefined;
        }
      }
      event.retryInMs = retryInMs;
      if (apiMessage !== undefined) event.error = apiMessage;
      emit(event);

      if (retryInMs === undefined) {
        const responseBody = outcome.kind === 'response' ? redactValue(outcome.body, secrets) : undefined;
        const rawRequestId =
          extracted.requestId ?? (outcome.kind === 'response' ? outcome.headers['x-request-id'] : undefined);
        const requestId = rawRequestId === undefined ? undefined : redactText(rawRequestId, secrets);
        throw new ApiError(
          outcome.kind === 'error' ? (outcome.errorKind === 'timeout' ? 'TIMEOUT' : 'NETWORK') : 'API',
          {
            operation,
            method,
            path,
            status,
            apiMessage: [apiMessage, refusal].filter((m) => m !== undefined).join('; ') || undefined,
            body: responseBody,
            attempts: attempt,
            durationMs: now() - started,
            requestId,
          },
          outcome.kind === 'error' ? { cause: outcome.cause } : undefined,
        );
      }
      counters.retries++;
      // A 429 already closed the client-wide gate; the next attempt waits in the limiter's queue.
      if (status !== 429) await sleep(retryInMs);
    }
  };

  return {
    request,
    paginate: <T = unknown>(req: ApiRequest, listKey: string) => paginateWith<T>(request, req, listKey),
    stats: () => ({ ...counters, requestsByMethod: { ...counters.requestsByMethod }, pausedMs: limiter.pausedMsTotal }),
    close: async () => {},
  };
};
