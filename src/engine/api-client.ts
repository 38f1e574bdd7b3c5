/**
 * The API client a resolved configuration asks for: where the key goes, the rate ceiling, the
 * concurrency and the request timeout all come from `SyncConfig`, the same way in every runtime.
 */
import type { Dispatcher } from 'undici';
import { createApiClient } from '../api/client.js';
import type { ApiClient } from '../api/types.js';
import type { SyncConfig } from './config.js';
import type { Clock, EventSink } from './context.js';

export const apiClientFor = (
  config: SyncConfig,
  apiKey: string,
  /** `dispatcher`: where the requests go (default the client's own connection pool); tests use it to watch the wire. */
  observe: { clock?: Clock; events?: EventSink; dispatcher?: Dispatcher } = {},
): ApiClient =>
  createApiClient({
    baseUrl: config.baseUrl,
    apiKey,
    requestsPerMinute: config.requestsPerMinute,
    concurrency: config.concurrency,
    timeoutMs: config.requestTimeoutMs,
    ...observe,
  });
