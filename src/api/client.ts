/**
 * The undici adapter behind the `ApiClient` port — the only code in cortex-sync that does HTTP.
 * Every attempt passes one client-wide gate (`RateLimiter`): a 429 closes it for `Retry-After`, so
 * no queued or new request starts inside that window, and lowers the rate the client sends at.
 * Retries follow `retry-policy.ts`. A client owns its connection pool: `close()` releases it.
 */
import type { Dispatcher } from 'undici';
import { ApiError, CancelledError, ConfigError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import type { EngineEvent, EventSink } from '../core/events.js';
import { VERSION } from '../version.js';
import { type AttemptOutcome, sendAttempt } from './attempt.js';
import {
  DotSegmentPathError,
  extractApiMessage,
  hasDotSegment,
  MAX_REQUEST_BODY_BYTES,
  RequestTooLargeError,
} from './errors.js';
import { paginateWith } from './paginate.js';
import { dispatcherFor, proxyOf, type ProxySettings } from './proxy.js';
import { RateLimiter } from './rate-limiter.js';
import { createRedactor, redactDeep } from './redact.js';
import { DEFAULT_BASE_URL, normalizeBaseUrl, pathWithQuery, serializeBody } from './request-parts.js';
import { parseRetryAfterMs, retryDelayMs, shouldRetry } from './retry-policy.js';
import type { ApiClient, ApiRequest, ApiResponse, ClientStats, RequestEvent } from './types.js';

export interface ApiClientOptions {
  /** Default https://api.getcortexapp.com; a trailing slash is tolerated, a path prefix kept. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never appears in errors, events or logs. */
  apiKey: string;
  /** Default: a keep-alive `Agent` of this client's own, closed by `close()`. An injected one is not closed. */
  dispatcher?: Dispatcher;
  /** The proxy from the environment (`proxy.ts` `proxySettingsFrom`) for the client's own dispatcher; default none. */
  proxy?: ProxySettings;
  /** Time for the rate limiter, pauses and backoffs (timeouts use real timers). Default: the system clock. */
  clock?: Clock;
  /** Shorthand for a clock's `now` (ignored when `clock` is given). */
  now?: () => number;
  /** Shorthand for a clock's `sleep`; waits it starts end early on cancel (ignored when `clock` is given). */
  sleep?: (ms: number) => Promise<void>;
  /** Receives `request`, `ratelimit.paused` and `request.waiting` events. */
  events?: EventSink;
  /** Uniform in [0, 1), for backoff jitter. */
  random?: () => number;
  /** Client-wide ceiling of the rate; default 1000 (the API's documented limit). */
  requestsPerMinute?: number;
  /** Lower the rate on each 429 and creep back up while none come (`adaptive-rate.ts`); default true. */
  adaptiveRate?: boolean;
  /** Requests that may start back to back; default a quarter of `requestsPerMinute`. */
  burst?: number;
  /** Max requests in flight; default 8. */
  concurrency?: number;
  /** Per attempt; default 30 s. */
  timeoutMs?: number;
  /** A `request.waiting` event after an attempt has waited this long (default 5 s), then every `waitingEveryMs` (10 s). */
  waitingNoticeMs?: number;
  waitingEveryMs?: number;
  /** Attempts per request, first included; default 5. */
  maxAttempts?: number;
  /** A 429 asking for a longer wait than this fails at once instead of stalling; default 5 min. */
  maxRetryAfterMs?: number;
  /** Default `cortex-sync/<version>`. */
  userAgent?: string;
  /** Called after every attempt. Exceptions thrown by the observer are ignored. */
  onRequest?: (event: RequestEvent) => void;
}

const HEADER_SAFE = /^[\x21-\x7e]+$/;

/**
 * How much faster than the rate the burst is spent. Requests sent in one instant all meet the
 * server's bucket at once: when a bucket smaller than ours runs dry, all eight in flight are
 * refused, where spaced ones cost one or two 429s. At 1,000/min, writes go at most 167/s and reads
 * 333/s (a plan is what people wait for: a no-op plan of 10,000 entities is ~220 reads); against a
 * real server eight requests in flight seldom go that fast anyway.
 */
const WRITE_PEAK_FACTOR = 10;
const READ_PEAK_FACTOR = 20;

/** Why a wait ended early: the signal's reason when it is an error. */
const abortReason = (signal: AbortSignal | undefined): Error =>
  signal?.reason instanceof Error ? signal.reason : new Error('aborted');

/** A clock from the `now`/`sleep` shorthands: a sleep that cannot be cancelled is raced against the signal. */
const clockOf = (options: ApiClientOptions): Clock => {
  if (options.clock) return options.clock;
  const now = options.now ?? Date.now;
  const legacySleep = options.sleep;
  if (!legacySleep) {
    return {
      now,
      sleep: (ms, signal) =>
        new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(abortReason(signal));
          const onAbort = () => {
            clearTimeout(timer);
            reject(abortReason(signal));
          };
          const timer = setTimeout(() => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          }, ms);
          signal?.addEventListener('abort', onAbort, { once: true });
        }),
    };
  }
  return {
    now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(abortReason(signal));
        const onAbort = () => reject(abortReason(signal));
        signal?.addEventListener('abort', onAbort, { once: true });
        legacySleep(ms).then(
          () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
          (error: unknown) => {
            signal?.removeEventListener('abort', onAbort);
            reject(error instanceof Error ? error : new Error(String(error)));
          },
        );
      }),
  };
};

/** Creates the HTTP client. One client = one rate limit, one pause gate and one connection pool. */
export const createApiClient = (options: ApiClientOptions): ApiClient => {
  if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new ConfigError('No Cortex API key was given');
  if (!HEADER_SAFE.test(options.apiKey)) {
    throw new ConfigError('The Cortex API key contains spaces or characters not allowed in an HTTP header');
  }
  const apiKey = options.apiKey;
  const redact = createRedactor(apiKey);
  const baseUrl = normalizeBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
  const host = new URL(baseUrl).host;
  const clock = clockOf(options);
  const now = () => clock.now();
  const random = options.random ?? Math.random;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 5));
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 300_000;
  const userAgent = options.userAgent ?? `cortex-sync/${VERSION}`;
  const requestsPerMinute = options.requestsPerMinute ?? 1000;
  const ownAgent = options.dispatcher
    ? undefined
    : dispatcherFor(options.proxy, baseUrl, { connections: 16, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
  const dispatcher: Dispatcher = options.dispatcher ?? (ownAgent as Dispatcher);
  const proxyName = options.dispatcher ? undefined : proxyOf(options.proxy, baseUrl)?.from;
  const closing = new AbortController();
  let closed: Promise<void> | undefined;
  const limiter = new RateLimiter({
    requestsPerMinute,
    // The API's limit is per minute: a quarter of a minute's budget may go back to back (a no-op
    // plan of 10,000 entities is ~220 reads), then requests are spaced at the rate. A server that
    // limits harder answers 429: that pauses the whole client and lowers its rate.
    burst: options.burst ?? Math.max(1, Math.floor(requestsPerMinute / 4)),
    concurrency: options.concurrency ?? 8,
    now,
    sleep: (ms, signal) => clock.sleep(ms, signal),
    adaptive: options.adaptiveRate ?? true,
    slowStart: true,
    pollBeforeStart: true,
    onWait: (ms) => emit({ type: 'ratelimit.waiting', ms }),
  });
  const counters: Omit<ClientStats, 'pausedMs' | 'currentPerMinute' | 'rateDecreases'> = {
    requestsSent: 0,
    requestsByMethod: { GET: 0, POST: 0, PUT: 0, PATCH: 0, DELETE: 0 },
    rateLimited: 0,
    retries: 0,
    timeouts: 0,
    networkErrors: 0,
    requestsStartedDuringPause: 0,
  };

  const emit = (event: EngineEvent): void => {
    try {
      options.events?.emit(event);
    } catch {
      // An observer must not break a sync.
    }
  };
  const emitAttempt = (event: RequestEvent): void => {
    emit({
      type: 'request',
      operation: event.operation,
      method: event.method,
      status: event.status ?? null,
      durationMs: event.durationMs,
      ...(event.retryInMs !== undefined ? { retryInMs: event.retryInMs } : {}),
    });
    if (!options.onRequest) return;
    try {
      options.onRequest(event);
    } catch {
      // An observer must not break a sync.
    }
  };

  /** Pauses the whole client on a 429 (unless it asks for longer than we wait) and lowers the rate. */
  const pauseForRateLimit = (delayMs: number): void => {
    if (delayMs > maxRetryAfterMs) return;
    const added = limiter.rateLimited(delayMs);
    if (added > 0) emit({ type: 'ratelimit.paused', ms: delayMs });
  };

  /** Sleeps unless the request's signal aborts or the client closes first (then: `CancelledError`). */
  const backoff = async (ms: number, operation: string, signal: AbortSignal | undefined): Promise<void> => {
    const controller = new AbortController();
    const abort = () => controller.abort();
    const sources = [signal, closing.signal].filter((s): s is AbortSignal => s !== undefined);
    for (const source of sources) source.addEventListener('abort', abort, { once: true });
    try {
      if (sources.some((s) => s.aborted)) controller.abort();
      await clock.sleep(ms, controller.signal);
    } catch (cause) {
      if (controller.signal.aborted)
        throw new CancelledError(operation, `${operation} cancelled before it was retried`);
      throw cause;
    } finally {
      for (const source of sources) source.removeEventListener('abort', abort);
    }
  };

  const attemptOnce = (
    req: ApiRequest,
    url: string,
    headers: Record<string, string>,
    body: ReturnType<typeof serializeBody>,
    attempt: number,
  ): Promise<AttemptOutcome> => {
    if (limiter.isPaused()) counters.requestsStartedDuringPause++;
    counters.requestsSent++;
    counters.requestsByMethod[req.method]++;
    let pausedAtHead = false;
    return sendAttempt({
      dispatcher,
      url,
      method: req.method,
      headers,
      body,
      timeoutMs,
      now,
      describeError: redact,
      ...(proxyName !== undefined ? { proxyName } : {}),
      // Close the gate as soon as the status is known, before reading the body.
      onHead: (status, resHeaders) => {
        if (status !== 429) return;
        const hinted = parseRetryAfterMs(resHeaders['retry-after'], now());
        if (hinted === undefined) return;
        pausedAtHead = true;
        pauseForRateLimit(hinted);
      },
      waiting: {
        first: options.waitingNoticeMs ?? 5_000,
        every: options.waitingEveryMs ?? 10_000,
        notify: (waitedMs) =>
          emit({
            type: 'request.waiting',
            operation: req.operation,
            method: req.method,
            host,
            waitedMs,
            attempt,
            maxAttempts,
          }),
      },
    }).then((outcome) => {
      if (outcome.kind === 'error') {
        if (outcome.errorKind === 'timeout') counters.timeouts++;
        else counters.networkErrors++;
      } else if (outcome.status === 429) {
        counters.rateLimited++;
        const delay = retryDelayMs({
          status: 429,
          headers: outcome.headers,
          body: outcome.body,
          attempt,
          random,
          nowMs: now(),
        });
        // Without a Retry-After header the delay comes from the body or a backoff.
        if (!pausedAtHead) pauseForRateLimit(delay);
        outcome.rateLimitDelayMs = delay;
      }
      return outcome;
    });
  };

  const request = async <T = unknown>(req: ApiRequest): Promise<ApiResponse<T>> => {
    const { method, operation, signal } = req;
    const rawPath = pathWithQuery(req.path, req.query);
    const path = redact(rawPath);
    const url = `${baseUrl}${rawPath}`;
    if (hasDotSegment(req.path)) throw new DotSegmentPathError({ operation, method, path });
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
      const outcome = await limiter.schedule(
        () => attemptOnce(req, url, headers, body, attempt),
        signal,
        operation,
        method === 'GET' ? READ_PEAK_FACTOR : WRITE_PEAK_FACTOR,
      );
      const event: RequestEvent = { operation, method, path, attempt, durationMs: outcome.durationMs };
      if (outcome.kind === 'response') {
        event.status = outcome.status;
        const ok = (outcome.status >= 200 && outcome.status < 300) || (req.acceptStatus ?? []).includes(outcome.status);
        if (ok) {
          emitAttempt(event);
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
            ? redact(extracted.apiMessage)
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
      emitAttempt(event);

      const failure = (): ApiError => {
        const rawRequestId =
          extracted.requestId ?? (outcome.kind === 'response' ? outcome.headers['x-request-id'] : undefined);
        return new ApiError(
          outcome.kind === 'error' ? (outcome.errorKind === 'timeout' ? 'TIMEOUT' : 'NETWORK') : 'API',
          {
            operation,
            method,
            path,
            status,
            apiMessage: [apiMessage, refusal].filter((m) => m !== undefined).join('; ') || undefined,
            body: outcome.kind === 'response' ? redactDeep(outcome.body, redact) : undefined,
            attempts: attempt,
            durationMs: now() - started,
            requestId: rawRequestId === undefined ? undefined : redact(rawRequestId),
          },
          outcome.kind === 'error' ? { cause: outcome.cause } : undefined,
        );
      };
      if (retryInMs === undefined) throw failure();
      if (signal?.aborted || closing.signal.aborted) {
        throw new CancelledError(operation, `${operation} cancelled before it was retried (${failure().message})`);
      }
      counters.retries++;
      // A 429 already closed the client-wide gate; the next attempt waits in the limiter's queue.
      if (status !== 429) await backoff(retryInMs, operation, signal);
    }
  };

  return {
    request,
    paginate: <T = unknown>(req: ApiRequest, listKey: string) => paginateWith<T>(request, req, listKey),
    stats: () => ({
      ...counters,
      requestsByMethod: { ...counters.requestsByMethod },
      pausedMs: limiter.pausedMsTotal,
      currentPerMinute: limiter.currentPerMinute,
      rateDecreases: limiter.decreases,
    }),
    close: () => {
      closed ??= (async () => {
        limiter.close();
        closing.abort();
        await ownAgent?.close();
      })();
      return closed;
    },
  };
};
