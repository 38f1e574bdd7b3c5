/**
 * The API client and the engine context a resolved configuration asks for, the same way in every
 * runtime: where the key goes, the rate ceiling, the concurrency and the request timeout all come
 * from `SyncConfig`, and a run without a key is refused here, in one sentence, before anything is
 * read.
 */
import type { Dispatcher } from 'undici';
import { createApiClient } from '../api/client.js';
import type { ApiClient } from '../api/types.js';
import { ConfigError } from '../core/errors.js';
import type { SyncConfig } from './config.js';
import { type Clock, createEngineContext, type EngineContext, type EventSink } from './context.js';

export const apiClientFor = (
  config: SyncConfig,
  apiKey: string,
  /** `dispatcher`: where the requests go (default the client's own connection pool); tests use it to watch the wire. */
  observe: { clock?: Clock; events?: EventSink; dispatcher?: Dispatcher; userAgent?: string } = {},
): ApiClient =>
  createApiClient({
    baseUrl: config.baseUrl,
    apiKey,
    requestsPerMinute: config.requestsPerMinute,
    concurrency: config.concurrency,
    timeoutMs: config.requestTimeoutMs,
    ...(config.proxy ? { proxy: config.proxy } : {}),
    ...observe,
  });

/**
 * The key of a run, or a `ConfigError` naming where to set it (the Action's `api-key` input, else
 * `CORTEX_API_KEY` or `CORTEX_API_KEY_FILE`) and why the command needs one (`needs`).
 */
export const requireApiKey = (config: Pick<SyncConfig, 'apiKey' | 'flagsAre'>, needs: string): string => {
  if (config.apiKey) return config.apiKey;
  const where = config.flagsAre === 'input' ? 'the `api-key` input' : 'CORTEX_API_KEY (or CORTEX_API_KEY_FILE)';
  throw new ConfigError(`${where} is not set: ${needs}`);
};

/** An engine context that owns its client: `close()` releases it. */
interface OwnedEngineContext extends EngineContext {
  close(): Promise<void>;
}

/**
 * The engine context of one run of `config`: its key checked (`needs`: why one is needed), the
 * client it asks for reporting to the run's clock and events, the run's signal.
 */
export const openEngineContext = (
  config: SyncConfig,
  needs: string,
  parts: Partial<Omit<EngineContext, 'client'>> = {},
): OwnedEngineContext => {
  const client = apiClientFor(config, requireApiKey(config, needs), {
    ...(parts.clock ? { clock: parts.clock } : {}),
    ...(parts.events ? { events: parts.events } : {}),
  });
  return { ...createEngineContext(client, parts), close: () => client.close() };
};
