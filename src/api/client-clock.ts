/**
 * The clock an `ApiClient` waits on: the one given, or one built from the `now`/`sleep`
 * shorthands, whose waits end early when the signal aborts.
 */
import type { Clock } from '../core/clock.js';

/** Why a wait ended early: the signal's reason when it is an error. */
const abortReason = (signal: AbortSignal | undefined): Error =>
  signal?.reason instanceof Error ? signal.reason : new Error('aborted');

/** A clock from the `now`/`sleep` shorthands: a sleep that cannot be cancelled is raced against the signal. */
export const clockOf = (options: {
  clock?: Clock;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}): Clock => {
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
