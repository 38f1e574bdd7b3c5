/**
 * The one source of time every layer takes from its caller: stamps, durations and waits. Pure
 * types; the real clock (`systemClock`) is made by the engine's entrypoint-facing context
 * (`engine/context.ts`), and tests pass fake ones.
 */

/** The one source of time: `now()` for stamps and durations, `sleep()` for every wait (cancellable). */
export interface Clock {
  now: () => number;
  /** Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Milliseconds on a clock that never jumps (not set by NTP or a user), for how long something
   * was observed; only differences mean anything. Absent (test clocks): `now()` stands in.
   */
  monotonic?: () => number;
}

/** The clock's monotonic reading, or its `now()` when it has none. */
export const monotonicNow = (clock: Clock): number => (clock.monotonic ?? clock.now)();
