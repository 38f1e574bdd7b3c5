/**
 * Is another apply's lease still live? Judged without trusting any one machine's wall clock
 * (pure): the clocks of two runners can disagree by minutes, and a holder killed with its clock a
 * year ahead must not block every apply. A lease is free when
 *
 * - it is released (`expiresAt` 0), or
 * - its expiry has passed by the **server's** clock (the `Date` header of the API's answers; the
 *   holder writes its expiry in server time too), or
 * - the waiter has seen the record **unchanged for a whole ttl** on its own monotonic clock: a
 *   live holder rewrites it every third of a ttl, so an unchanged record is a holder that is gone,
 *   whatever `expiresAt` it claims. No lease outlives its holder's last write by more than a ttl.
 *
 * A record that cannot be read (edited by hand, another version) is held by nobody known and is
 * judged by the last rule only.
 *
 * A released record that names applies waiting for it (a watcher let its idle lease go for them)
 * is theirs to take first: for anyone else it counts as held until it has been seen unchanged for
 * `handoffMs` (a waiter that is gone holds nothing for longer).
 */

import type { SeenLease } from '../ownership/store.js';

export type { SeenLease } from '../ownership/store.js';

type LeaseJudgement =
  | { state: 'free'; why: 'none' | 'ours' | 'released' | 'expired' | 'stale' | 'unreadable' }
  | {
      state: 'held';
      /** The claimed expiry is further ahead than a lease lasts: not believed, shown as claimed. */
      untilBelieved: boolean;
      /** How much longer an unchanged record counts as held. */
      staleInMs: number;
      /** Released, but for another apply that waited for it (its holder name). */
      reservedFor?: string;
    };

interface JudgeInput {
  lease: SeenLease | undefined;
  /** This run's holder name. */
  me: string;
  /** The server's time when the record was read, when the answer had a `Date` header. */
  serverNow: number | undefined;
  /** How long (monotonic) the waiter has seen this exact record; 0 when it just changed. */
  unchangedForMs: number;
  ttlMs: number;
  /** How long a released record that names waiters is theirs alone. */
  handoffMs: number;
}

/**
 * A `Date` header counts whole seconds: the holder's and the waiter's readings of the server's
 * clock may each be up to a second behind, so an expiry counts as passed only this much later.
 */
const DATE_RESOLUTION_MS = 1_000;

/** How far past the server's now an expiry may be and still be believed (a ttl, and slack for a 1 s `Date`). */
const credibleExpiryMs = (ttlMs: number): number => ttlMs + 5_000;

export const judgeLease = (input: JudgeInput): LeaseJudgement => {
  const { lease, serverNow, ttlMs } = input;
  if (lease === undefined) return { state: 'free', why: 'none' };
  const stale = input.unchangedForMs >= ttlMs;
  if (lease.unreadable) return stale ? { state: 'free', why: 'unreadable' } : held(false, input);
  if (lease.holder === input.me) return { state: 'free', why: 'ours' };
  if (!Number.isFinite(lease.expiresAt)) return stale ? { state: 'free', why: 'stale' } : held(false, input);
  if (lease.expiresAt <= 0) {
    const waiters = lease.waiting ?? [];
    if (waiters.length > 0 && !waiters.includes(input.me) && input.unchangedForMs < input.handoffMs)
      return {
        state: 'held',
        untilBelieved: false,
        staleInMs: input.handoffMs - input.unchangedForMs,
        reservedFor: waiters[0] ?? '?',
      };
    return { state: 'free', why: 'released' };
  }
  if (serverNow !== undefined && lease.expiresAt + DATE_RESOLUTION_MS <= serverNow)
    return { state: 'free', why: 'expired' };
  if (stale) return { state: 'free', why: 'stale' };
  const believed = serverNow !== undefined && lease.expiresAt - serverNow <= credibleExpiryMs(ttlMs);
  return held(believed, input);
};

const held = (untilBelieved: boolean, input: JudgeInput): LeaseJudgement => ({
  state: 'held',
  untilBelieved,
  staleInMs: Math.max(0, input.ttlMs - input.unchangedForMs),
});

/**
 * The server's clock as this run sees it: the `Date` headers it has seen carried forward on the
 * monotonic clock (a jump of the local wall clock changes nothing). Without any `Date` header, `fallback()`
 * (the run's own clock) stands in: then only the holder's own writes use it, and a waiter judges
 * leases by observation alone.
 */
export const serverClock = (monotonic: () => number, fallback: () => number) => {
  /** Server time minus monotonic time: the largest seen, since a `Date` is the server's time rounded down. */
  let offset: number | undefined;
  return {
    /** Takes the `date` header of an answer (RFC 9110 IMF-fixdate); anything unparsable is ignored. */
    observe(dateHeader: string | undefined): number | undefined {
      if (dateHeader === undefined) return undefined;
      const server = Date.parse(dateHeader);
      if (!Number.isFinite(server)) return undefined;
      const seen = server - monotonic();
      offset = offset === undefined ? seen : Math.max(offset, seen);
      return server;
    },
    /** Whether an answer has carried a `Date` header. */
    known: (): boolean => offset !== undefined,
    now: (): number => (offset !== undefined ? monotonic() + offset : fallback()),
  };
};

/** A time for a message: ISO 8601, or the raw number when it is no representable date. */
export const formatLeaseTime = (ms: number | undefined): string => {
  if (ms === undefined) return 'an unknown time';
  const date = new Date(ms);
  return Number.isFinite(date.getTime()) ? date.toISOString() : String(ms);
};
