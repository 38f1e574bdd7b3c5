/**
 * One HTTP attempt with undici: a per-attempt timeout, a notice while the server keeps us waiting,
 * and the status handed to the caller before the body is read (so a 429 closes the client's gate
 * at once). Never throws: a network error or a timeout is an outcome like a response.
 */
import { type Dispatcher, request as undiciRequest } from 'undici';
import { isProxyAuthError } from './proxy.js';
import { decodeBody, normalizeHeaders, type SerializedBody } from './request-parts.js';
import type { AttemptErrorKind } from './retry-policy.js';
import type { HttpMethod } from './types.js';

export type AttemptOutcome =
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

interface AttemptSpec {
  dispatcher: Dispatcher;
  url: string;
  method: HttpMethod;
  headers: Record<string, string>;
  body: SerializedBody | undefined;
  timeoutMs: number;
  now: () => number;
  /** Called once the status and headers are known, before the body is read. */
  onHead?: (status: number, headers: Record<string, string>) => void;
  /** When no answer has come after `first` ms, then every `every` ms: how long it has waited. */
  waiting?: { first: number; every: number; notify: (waitedMs: number) => void };
  /** Turns an error's text into what may be shown (redaction). */
  describeError: (text: string) => string;
  /** The variable of the proxy requests go through, when one does. */
  proxyName?: string;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

const errorText = (error: unknown): string => {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
};

/** Starts a notice timer: after `first` ms, then every `every` ms, until the returned stop is called. */
const startWaitingNotice = (spec: AttemptSpec['waiting'], started: number): (() => void) => {
  if (!spec) return () => {};
  let timer: NodeJS.Timeout | undefined;
  const tick = (delay: number): void => {
    timer = setTimeout(() => {
      spec.notify(performance.now() - started);
      tick(spec.every);
    }, delay);
  };
  tick(spec.first);
  return () => clearTimeout(timer);
};

/** Sends one attempt; resolves with its outcome. Timers it starts are cleared before it resolves. */
export const sendAttempt = async (spec: AttemptSpec): Promise<AttemptOutcome> => {
  const started = spec.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, spec.timeoutMs);
  const stopNotice = startWaitingNotice(spec.waiting, performance.now());
  try {
    const res = await undiciRequest(spec.url, {
      method: spec.method,
      headers: spec.headers,
      body: spec.body?.payload ?? null,
      dispatcher: spec.dispatcher,
      signal: controller.signal,
    });
    stopNotice();
    const headers = normalizeHeaders(res.headers);
    spec.onHead?.(res.statusCode, headers);
    const body = decodeBody(await res.body.text(), headers['content-type']);
    return { kind: 'response', status: res.statusCode, headers, body, durationMs: spec.now() - started };
  } catch (cause) {
    if (isProxyAuthError(cause))
      // The proxy's answer, not the API's: a 4xx like any other (never retried).
      return {
        kind: 'response',
        status: 407,
        headers: {},
        body: {
          message: `Proxy Authentication Required: the proxy (${spec.proxyName ?? 'HTTP_PROXY or HTTPS_PROXY'}) refused the credentials of its URL, or needs some (http://user:password@host:port)`,
        },
        durationMs: spec.now() - started,
      };
    const code = (cause as { code?: unknown } | null)?.code;
    const isTimeout = timedOut || (typeof code === 'string' && TIMEOUT_CODES.has(code));
    return {
      kind: 'error',
      errorKind: isTimeout ? 'timeout' : 'network',
      message: `${spec.proxyName !== undefined ? `through the proxy (${spec.proxyName}): ` : ''}${
        timedOut ? `no response within ${spec.timeoutMs} ms` : spec.describeError(errorText(cause))
      }`,
      cause,
      durationMs: spec.now() - started,
    };
  } finally {
    clearTimeout(timer);
    stopNotice();
  }
};
