/**
 * The undici adapter behind the `ApiClient` port — the only code in cortex-sync that does HTTP.
 * Every attempt passes one client-wide gate (`RateLimiter`): a 429 closes it for `Retry-After`, so
 * no queued or new request starts inside that window, and lowers the rate the client sends at.
 * Retries follow `retry-policy.ts`; one request's attempts are `client-request.ts`. A client owns
 * its connection pool: `close()` releases it.
 */
import type { Dispatcher } from 'undici';
import { ConfigError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import type { EngineEvent, EventSink } from '../core/events.js';
import { VERSION } from '../version.js';
import { clockOf } from './client-clock.js';
import { type ClientCore, sendRequest } from './client-request.js';
import { paginateWith } from './paginate.js';
import { dispatcherFor, proxyOf, type ProxySettings } from './proxy.js';
import { RateLimiter } from './rate-limiter.js';
import { createRedactor } from './redact.js';
import { DEFAULT_BASE_URL, normalizeBaseUrl } from './request-parts.js';
import type { ApiClient, ApiRequest, RequestEvent } from './types.js';

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

/** The key as it may be sent: given, and nothing a header cannot carry. */
const checkedKey = (apiKey: unknown): string => {
  if (typeof apiKey !== 'string' || apiKey === '') throw new ConfigError('No Cortex API key was given');
  if (!HEADER_SAFE.test(apiKey)) {
    throw new ConfigError('The Cortex API key contains spaces or characters not allowed in an HTTP header');
  }
  return apiKey;
};

/** The client's observers: engine events and `onRequest`; an observer that throws is ignored. */
const observersOf = (options: ApiClientOptions) => {
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
  return { emit, emitAttempt };
};

/** The rate gate every attempt of the client passes. */
const limiterFor = (options: ApiClientOptions, clock: Clock, emit: (event: EngineEvent) => void): RateLimiter => {
  const requestsPerMinute = options.requestsPerMinute ?? 1000;
  return new RateLimiter({
    requestsPerMinute,
    // The API's limit is per minute: a quarter of a minute's budget may go back to back (a no-op
    // plan of 10,000 entities is ~220 reads), then requests are spaced at the rate. A server that
    // limits harder answers 429: that pauses the whole client and lowers its rate.
    burst: options.burst ?? Math.max(1, Math.floor(requestsPerMinute / 4)),
    concurrency: options.concurrency ?? 8,
    now: () => clock.now(),
    sleep: (ms, signal) => clock.sleep(ms, signal),
    adaptive: options.adaptiveRate ?? true,
    slowStart: true,
    pollBeforeStart: true,
    onWait: (ms) => emit({ type: 'ratelimit.waiting', ms }),
  });
};

/** Creates the HTTP client. One client = one rate limit, one pause gate and one connection pool. */
export const createApiClient = (options: ApiClientOptions): ApiClient => {
  const apiKey = checkedKey(options.apiKey);
  const baseUrl = normalizeBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
  const clock = clockOf(options);
  const ownAgent = options.dispatcher
    ? undefined
    : dispatcherFor(options.proxy, baseUrl, { connections: 16, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
  const { emit, emitAttempt } = observersOf(options);
  const core: ClientCore = {
    apiKey,
    redact: createRedactor(apiKey),
    baseUrl,
    host: new URL(baseUrl).host,
    clock,
    now: () => clock.now(),
    random: options.random ?? Math.random,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxAttempts: Math.max(1, Math.floor(options.maxAttempts ?? 5)),
    maxRetryAfterMs: options.maxRetryAfterMs ?? 300_000,
    userAgent: options.userAgent ?? `cortex-sync/${VERSION}`,
    dispatcher: options.dispatcher ?? (ownAgent as Dispatcher),
    proxyName: options.dispatcher ? undefined : proxyOf(options.proxy, baseUrl)?.from,
    waitingNoticeMs: options.waitingNoticeMs ?? 5_000,
    waitingEveryMs: options.waitingEveryMs ?? 10_000,
    closing: new AbortController(),
    limiter: limiterFor(options, clock, emit),
    counters: {
      requestsSent: 0,
      requestsByMethod: { GET: 0, POST: 0, PUT: 0, PATCH: 0, DELETE: 0 },
      rateLimited: 0,
      retries: 0,
      timeouts: 0,
      networkErrors: 0,
      requestsStartedDuringPause: 0,
    },
    emit,
    emitAttempt,
  };
  const request = <T = unknown>(req: ApiRequest) => sendRequest<T>(core, req);
  let closed: Promise<void> | undefined;

  return {
    request,
    paginate: <T = unknown>(req: ApiRequest, listKey: string) => paginateWith<T>(request, req, listKey),
    stats: () => ({
      ...core.counters,
      requestsByMethod: { ...core.counters.requestsByMethod },
      pausedMs: core.limiter.pausedMsTotal,
      currentPerMinute: core.limiter.currentPerMinute,
      rateDecreases: core.limiter.decreases,
    }),
    close: () => {
      closed ??= (async () => {
        core.limiter.close();
        core.closing.abort();
        await ownAgent?.close();
      })();
      return closed;
    },
  };
};
