/**
 * One request of an `ApiClient`, attempt after attempt: each attempt passes the client-wide gate
 * (`RateLimiter`), a 429 closes it for `Retry-After`, a failure the policy retries waits its
 * backoff, and what finally fails is an `ApiError` naming the operation, status and the API's
 * message, the key redacted everywhere.
 */
import type { Dispatcher } from 'undici';
import { ApiError, CancelledError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import type { EngineEvent } from '../core/events.js';
import { type AttemptOutcome, sendAttempt } from './attempt.js';
import {
  DotSegmentPathError,
  extractApiMessage,
  type ExtractedApiMessage,
  hasDotSegment,
  MAX_REQUEST_BODY_BYTES,
  RequestTooLargeError,
} from './errors.js';
import type { RateLimiter } from './rate-limiter.js';
import { redactDeep } from './redact.js';
import { pathWithQuery, serializeBody } from './request-parts.js';
import { parseRetryAfterMs, retryDelayMs, shouldRetry } from './retry-policy.js';
import type { ApiRequest, ApiResponse, ClientStats, RequestEvent } from './types.js';

/**
 * How much faster than the rate the burst is spent. Requests sent in one instant all meet the
 * server's bucket at once: when a bucket smaller than ours runs dry, all eight in flight are
 * refused, where spaced ones cost one or two 429s. At 1,000/min, writes go at most 167/s and reads
 * 333/s (a plan is what people wait for: a no-op plan of 10,000 entities is ~220 reads); against a
 * real server eight requests in flight seldom go that fast anyway.
 */
const WRITE_PEAK_FACTOR = 10;
const READ_PEAK_FACTOR = 20;

type ClientCounters = Omit<ClientStats, 'pausedMs' | 'currentPerMinute' | 'rateDecreases'>;

/** What every request of one client shares: its settings, gate, pool, counters and observers. */
export interface ClientCore {
  apiKey: string;
  redact: (text: string) => string;
  baseUrl: string;
  host: string;
  clock: Clock;
  now: () => number;
  random: () => number;
  timeoutMs: number;
  maxAttempts: number;
  maxRetryAfterMs: number;
  userAgent: string;
  dispatcher: Dispatcher;
  proxyName: string | undefined;
  waitingNoticeMs: number;
  waitingEveryMs: number;
  /** Aborted by `close()`: no retry waits past it. */
  closing: AbortController;
  limiter: RateLimiter;
  counters: ClientCounters;
  /** Never throws (an observer must not break a sync). */
  emit: (event: EngineEvent) => void;
  /** The `request` event and the `onRequest` observer of an attempt; never throws. */
  emitAttempt: (event: RequestEvent) => void;
}

/** Pauses the whole client on a 429 (unless it asks for longer than we wait) and lowers the rate. */
const pauseForRateLimit = (core: ClientCore, delayMs: number): void => {
  if (delayMs > core.maxRetryAfterMs) return;
  const added = core.limiter.rateLimited(delayMs);
  if (added > 0) core.emit({ type: 'ratelimit.paused', ms: delayMs });
};

/** Sleeps unless the request's signal aborts or the client closes first (then: `CancelledError`). */
const backoff = async (core: ClientCore, ms: number, operation: string, signal: AbortSignal | undefined) => {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const sources = [signal, core.closing.signal].filter((s): s is AbortSignal => s !== undefined);
  for (const source of sources) source.addEventListener('abort', abort, { once: true });
  try {
    if (sources.some((s) => s.aborted)) controller.abort();
    await core.clock.sleep(ms, controller.signal);
  } catch (cause) {
    if (controller.signal.aborted) throw new CancelledError(operation, `${operation} cancelled before it was retried`);
    throw cause;
  } finally {
    for (const source of sources) source.removeEventListener('abort', abort);
  }
};

interface Prepared {
  req: ApiRequest;
  /** The path as it may be shown (the key redacted). */
  path: string;
  url: string;
  headers: Record<string, string>;
  body: ReturnType<typeof serializeBody>;
}

/** The counters after an attempt, and a 429 without `Retry-After` pausing the client by its delay. */
const noteOutcome = (core: ClientCore, outcome: AttemptOutcome, attempt: number, pausedAtHead: boolean) => {
  if (outcome.kind === 'error') {
    if (outcome.errorKind === 'timeout') core.counters.timeouts++;
    else core.counters.networkErrors++;
  } else if (outcome.status === 429) {
    core.counters.rateLimited++;
    const delay = retryDelayMs({
      status: 429,
      headers: outcome.headers,
      body: outcome.body,
      attempt,
      random: core.random,
      nowMs: core.now(),
    });
    // Without a Retry-After header the delay comes from the body or a backoff.
    if (!pausedAtHead) pauseForRateLimit(core, delay);
    outcome.rateLimitDelayMs = delay;
  }
  return outcome;
};

const attemptOnce = (core: ClientCore, prepared: Prepared, attempt: number): Promise<AttemptOutcome> => {
  const { req, url, headers, body } = prepared;
  if (core.limiter.isPaused()) core.counters.requestsStartedDuringPause++;
  core.counters.requestsSent++;
  core.counters.requestsByMethod[req.method]++;
  let pausedAtHead = false;
  return sendAttempt({
    dispatcher: core.dispatcher,
    url,
    method: req.method,
    headers,
    body,
    timeoutMs: core.timeoutMs,
    now: core.now,
    describeError: core.redact,
    ...(core.proxyName !== undefined ? { proxyName: core.proxyName } : {}),
    // Close the gate as soon as the status is known, before reading the body.
    onHead: (status, resHeaders) => {
      if (status !== 429) return;
      const hinted = parseRetryAfterMs(resHeaders['retry-after'], core.now());
      if (hinted === undefined) return;
      pausedAtHead = true;
      pauseForRateLimit(core, hinted);
    },
    waiting: {
      first: core.waitingNoticeMs,
      every: core.waitingEveryMs,
      notify: (waitedMs) =>
        core.emit({
          type: 'request.waiting',
          operation: req.operation,
          method: req.method,
          host: core.host,
          waitedMs,
          attempt,
          maxAttempts: core.maxAttempts,
        }),
    },
  }).then((outcome) => noteOutcome(core, outcome, attempt, pausedAtHead));
};

/** The URL, headers and body of a request, refused before anything is sent when it cannot go. */
const prepare = (core: ClientCore, req: ApiRequest): Prepared => {
  const { method, operation } = req;
  const rawPath = pathWithQuery(req.path, req.query);
  const path = core.redact(rawPath);
  if (hasDotSegment(req.path)) throw new DotSegmentPathError({ operation, method, path });
  const body = serializeBody(req);
  if (body && body.bytes > MAX_REQUEST_BODY_BYTES) {
    throw new RequestTooLargeError({ operation, method, path }, body.bytes, MAX_REQUEST_BODY_BYTES);
  }
  const headers: Record<string, string> = {
    authorization: `Bearer ${core.apiKey}`,
    'user-agent': core.userAgent,
    accept: req.accept ?? 'application/json',
  };
  if (body) headers['content-type'] = body.contentType;
  return { req, path, url: `${core.baseUrl}${rawPath}`, headers, body };
};

/** After a failed attempt: how long until the next one (undefined: none), and why not when refused. */
const retryAfterFailure = (
  core: ClientCore,
  req: ApiRequest,
  outcome: AttemptOutcome,
  attempt: number,
): { retryInMs?: number; refusal?: string } => {
  const status = outcome.kind === 'response' ? outcome.status : undefined;
  const errorKind = outcome.kind === 'error' ? outcome.errorKind : undefined;
  const { method, idempotent } = req;
  if (!shouldRetry({ method, idempotent, status, errorKind, attempt, maxAttempts: core.maxAttempts })) return {};
  const retryInMs =
    outcome.kind === 'response' && outcome.rateLimitDelayMs !== undefined
      ? outcome.rateLimitDelayMs
      : retryDelayMs({
          status,
          headers: outcome.kind === 'response' ? outcome.headers : undefined,
          attempt,
          random: core.random,
          nowMs: core.now(),
        });
  if (status === 429 && retryInMs > core.maxRetryAfterMs) {
    const asked = Math.ceil(retryInMs / 1000);
    const waits = Math.ceil(core.maxRetryAfterMs / 1000);
    return { refusal: `the API asked to wait ${asked} s, longer than the ${waits} s this client waits` };
  }
  return { retryInMs };
};

/** The error of a failed request: its operation, status, the API's message, every text redacted. */
const failureOf = (
  core: ClientCore,
  prepared: Prepared,
  failed: { outcome: AttemptOutcome; extracted: ExtractedApiMessage; apiMessage?: string; refusal?: string },
  attempt: number,
  started: number,
): ApiError => {
  const { outcome, extracted, apiMessage, refusal } = failed;
  const rawRequestId =
    extracted.requestId ?? (outcome.kind === 'response' ? outcome.headers['x-request-id'] : undefined);
  return new ApiError(
    outcome.kind === 'error' ? (outcome.errorKind === 'timeout' ? 'TIMEOUT' : 'NETWORK') : 'API',
    {
      operation: prepared.req.operation,
      method: prepared.req.method,
      path: prepared.path,
      status: outcome.kind === 'response' ? outcome.status : undefined,
      apiMessage: [apiMessage, refusal].filter((m) => m !== undefined).join('; ') || undefined,
      body: outcome.kind === 'response' ? redactDeep(outcome.body, core.redact) : undefined,
      attempts: attempt,
      durationMs: core.now() - started,
      requestId: rawRequestId === undefined ? undefined : core.redact(rawRequestId),
    },
    outcome.kind === 'error' ? { cause: outcome.cause } : undefined,
  );
};

/** One request, attempt after attempt, until it succeeds, fails for good or is cancelled. */
export const sendRequest = async <T = unknown>(core: ClientCore, req: ApiRequest): Promise<ApiResponse<T>> => {
  const { method, operation, signal } = req;
  const prepared = prepare(core, req);
  const started = core.now();
  for (let attempt = 1; ; attempt++) {
    const outcome = await core.limiter.schedule(
      () => attemptOnce(core, prepared, attempt),
      signal,
      operation,
      method === 'GET' ? READ_PEAK_FACTOR : WRITE_PEAK_FACTOR,
    );
    const event: RequestEvent = { operation, method, path: prepared.path, attempt, durationMs: outcome.durationMs };
    if (outcome.kind === 'response') {
      event.status = outcome.status;
      const ok = (outcome.status >= 200 && outcome.status < 300) || (req.acceptStatus ?? []).includes(outcome.status);
      if (ok) {
        core.emitAttempt(event);
        const { status, headers, body } = outcome;
        return { status, headers, body: body as T, attempts: attempt, durationMs: core.now() - started };
      }
    }
    const extracted = outcome.kind === 'response' ? extractApiMessage(outcome.body) : {};
    const apiMessage =
      outcome.kind === 'error'
        ? outcome.message
        : extracted.apiMessage !== undefined
          ? core.redact(extracted.apiMessage)
          : undefined;
    const { retryInMs, refusal } = retryAfterFailure(core, req, outcome, attempt);
    event.retryInMs = retryInMs;
    if (apiMessage !== undefined) event.error = apiMessage;
    core.emitAttempt(event);
    const failure = () => failureOf(core, prepared, { outcome, extracted, apiMessage, refusal }, attempt, started);
    if (retryInMs === undefined) throw failure();
    if (signal?.aborted || core.closing.signal.aborted) {
      throw new CancelledError(operation, `${operation} cancelled before it was retried (${failure().message})`);
    }
    core.counters.retries++;
    // A 429 already closed the client-wide gate; the next attempt waits in the limiter's queue.
    if (outcome.kind !== 'response' || outcome.status !== 429) await backoff(core, retryInMs, operation, signal);
  }
};
