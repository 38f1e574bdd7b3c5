/**
 * The one context every runtime hands the engine: the API client, the clock, a cancellation
 * signal and an event sink. Nothing below an entrypoint reads `process.*` or keeps global state;
 * what a run needs comes through here. The clock and the events are core types (`core/clock.ts`,
 * `core/events.ts`) so that the API client below the engine takes the same ones.
 */
import type { ApiClient } from '../api/types.js';
import type { Clock } from '../core/clock.js';
import { type EventSink, NO_EVENTS } from '../core/events.js';
import type { KindRegistry } from '../kinds/registry.js';

export { type Clock, monotonicNow } from '../core/clock.js';
export { type EngineEvent, type EngineEventType, type EventSink, fanOut, NO_EVENTS } from '../core/events.js';

export interface EngineContext {
  client: ApiClient;
  clock: Clock;
  /** Aborting cancels every wait (rate limiter, Retry-After, backoff) and stops new operations; in-flight writes finish or time out. */
  signal: AbortSignal;
  events: EventSink;
  /**
   * The kinds this run knows (`kinds/registry.ts`): the registry's own unless given (a test
   * registers one more kind with `createRegistry`). Its managed kinds are configured with the
   * run's settings, and its kinds' settings make the table the plan's delete-scope header reads.
   */
  kinds?: KindRegistry;
}

/** The real clock: `Date.now` and a `setTimeout` sleep that an abort ends at once (no timer left behind). */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** A context for `client` with the system clock, no observer and a signal nobody aborts, unless given. */
export const createEngineContext = (
  client: ApiClient,
  parts: Partial<Omit<EngineContext, 'client'>> = {},
): EngineContext => ({
  client,
  clock: parts.clock ?? systemClock,
  signal: parts.signal ?? new AbortController().signal,
  events: parts.events ?? NO_EVENTS,
  ...(parts.kinds !== undefined ? { kinds: parts.kinds } : {}),
});
