/**
 * Leader election on a Kubernetes Lease, as client-go's `leaderelection` does it:
 * - every `retryPeriod` a candidate reads the Lease; it takes it when nobody holds it, or when the
 *   record has not changed for `leaseDuration` of OUR monotonic clock since we last saw it change
 *   (never by comparing the holder's `renewTime` with our clock: the clocks of two nodes differ);
 * - every write is a replace under the `resourceVersion` read (409: another replica won the race);
 * - the leader renews every `retryPeriod`; when no renewal has succeeded for `renewDeadline` since
 *   the last successful one was SENT, it stops leading (`onStoppedLeading`: the watcher aborts its
 *   runs, which start no new change and wind down: the ownership record, the apply lease given
 *   back) without waiting for the hung request. The others' clocks start no earlier than that
 *   send, so none can lead before `leaseDuration` (15 s) after it; `mayWrite()` closes halfway
 *   between the two (12.5 s), so that nothing this replica sends can meet a write of the next;
 * - on stop, the leader gives the Lease back (empty holder) so that a standby takes it at once.
 * `mayWrite()` is the fence the watcher's API client checks before every write it starts.
 */
import { performance } from 'node:perf_hooks';
import type { LeaseRecord, LeaseStore, ObservedLease } from './lease-store.js';

export interface ElectionTiming {
  /** How long a record that stopped changing is honoured (client-go: 15 s). */
  leaseDurationMs: number;
  /** How long the leader keeps leading without a successful renewal (10 s). */
  renewDeadlineMs: number;
  /** How often a candidate tries, and the leader renews (2 s). */
  retryPeriodMs: number;
}

export const DEFAULT_LEASE_NAME = 'cortex-sync';

export const DEFAULT_ELECTION_TIMING: ElectionTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export interface ElectorOptions {
  store: LeaseStore;
  identity: string;
  timing?: Partial<ElectionTiming>;
  onStartedLeading: () => void;
  /** Called once leadership ends (renewals failed, or stop); writes are fenced before it is called. */
  onStoppedLeading: (why: string) => void;
  /** A new holder was observed (identity, or '' for nobody). */
  onNewLeader?: (identity: string) => void;
  /** A read or write of the Lease failed (it is tried again at the next period). */
  onError?: (error: unknown) => void;
  /** Monotonic milliseconds (default `performance.now`). */
  monotonic?: () => number;
  /** Wall clock for the record's times (default `Date.now`). */
  now?: () => number;
}

export type ElectionRole = 'leader' | 'standby';

/** A check that `timing` is one client-go would accept (the deadline before the lease, the period before the deadline). */
export const checkTiming = (t: ElectionTiming): string | undefined => {
  if (!(t.leaseDurationMs > t.renewDeadlineMs)) return 'the lease duration must be longer than the renew deadline';
  if (!(t.renewDeadlineMs > t.retryPeriodMs * 1.2))
    return 'the renew deadline must be longer than 1.2 × the retry period';
  if (!(t.retryPeriodMs > 0)) return 'the retry period must be above 0';
  return undefined;
};

const sameRecord = (a: ObservedLease | undefined, b: ObservedLease): boolean =>
  a !== undefined &&
  a.resourceVersion === b.resourceVersion &&
  a.record.holderIdentity === b.record.holderIdentity &&
  a.record.renewTime?.getTime() === b.record.renewTime?.getTime();

/** Settles with `undefined` after `ms` when `promise` has not (the request is abandoned, not cancelled). */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'timed-out'> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve('timed-out'), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });

export class LeaderElector {
  private readonly timing: ElectionTiming;
  private readonly monotonic: () => number;
  private readonly now: () => number;
  private observed: ObservedLease | undefined;
  /** Our monotonic time when `observed` last changed. */
  private observedAt = 0;
  /** Our monotonic time when the last renewal that succeeded was sent (undefined: not leading). */
  private renewedFrom: number | undefined;
  /** The same, kept after stepping down: the fence closes a while after it. */
  private lastRenewalSent: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private stopped = false;
  private attempt: Promise<void> = Promise.resolve();
  private lastLeader: string | undefined;

  constructor(private readonly options: ElectorOptions) {
    this.timing = { ...DEFAULT_ELECTION_TIMING, ...options.timing };
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.now = options.now ?? Date.now;
  }

  get role(): ElectionRole {
    return this.renewedFrom !== undefined ? 'leader' : 'standby';
  }

  /** The holder as last observed ('' when none). */
  get leader(): string {
    return this.observed?.record.holderIdentity ?? '';
  }

  get identity(): string {
    return this.options.identity;
  }

  /**
   * True while a write of ours cannot meet one of the next leader: until halfway between the renew
   * deadline and the lease duration after the last renewal that succeeded (a run aborted at the
   * deadline winds down within it), and never once stopped.
   */
  mayWrite(): boolean {
    if (this.stopped || this.lastRenewalSent === undefined) return false;
    const fenceMs = (this.timing.renewDeadlineMs + this.timing.leaseDurationMs) / 2;
    return this.monotonic() - this.lastRenewalSent < fenceMs;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops trying; a leader gives the Lease back (best effort, within a retry period). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.attempt.catch(() => {});
    const wasLeading = this.renewedFrom !== undefined;
    this.stepDown('stopping');
    if (wasLeading && this.observed?.record.holderIdentity === this.options.identity) {
      const given: LeaseRecord = { ...this.observed.record, holderIdentity: '', leaseDurationSeconds: 1 };
      await within(this.options.store.update(given, this.observed.resourceVersion), this.timing.retryPeriodMs).catch(
        (error: unknown) => this.options.onError?.(error),
      );
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    // client-go's jitter (1.2) on a candidate's period, so that replicas started together spread out.
    const delay = this.renewedFrom === undefined && ms > 0 ? ms * (1 + Math.random() * 0.2) : ms;
    this.timer = setTimeout(() => {
      this.attempt = this.tick();
    }, delay);
  }

  private async tick(): Promise<void> {
    const sentAt = this.monotonic();
    try {
      const outcome = await within(this.tryAcquireOrRenew(), this.timing.retryPeriodMs);
      if (outcome === true) this.renewed(sentAt);
    } catch (error) {
      this.options.onError?.(error);
    }
    this.schedule(this.timing.retryPeriodMs);
  }

  /** A renewal (or acquisition) sent at `sentAt` succeeded: leading until `sentAt + renewDeadline`. */
  private renewed(sentAt: number): void {
    if (this.stopped) return;
    // A renewal that succeeded after the deadline had already ended this term starts a new one.
    const starting = this.renewedFrom === undefined;
    this.renewedFrom = Math.max(this.renewedFrom ?? sentAt, sentAt);
    this.lastRenewalSent = this.renewedFrom;
    clearTimeout(this.deadline);
    const left = this.renewedFrom + this.timing.renewDeadlineMs - this.monotonic();
    this.deadline = setTimeout(() => this.stepDown('the lease could not be renewed within the renew deadline'), left);
    if (starting) this.options.onStartedLeading();
  }

  private stepDown(why: string): void {
    clearTimeout(this.deadline);
    if (this.renewedFrom === undefined) return;
    this.renewedFrom = undefined;
    this.options.onStoppedLeading(why);
  }

  private observe(seen: ObservedLease): void {
    if (!sameRecord(this.observed, seen)) {
      this.observed = seen;
      this.observedAt = this.monotonic();
    }
    if (seen.record.holderIdentity !== this.lastLeader) {
      this.lastLeader = seen.record.holderIdentity;
      this.options.onNewLeader?.(seen.record.holderIdentity);
    }
  }

  /** One try: true when we hold the Lease after it (taken or renewed). */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { store, identity } = this.options;
    const nowDate = new Date(this.now());
    const leaseDurationSeconds = Math.ceil(this.timing.leaseDurationMs / 1000);
    const current = await store.get();
    if (current === undefined) {
      const created = await store.create({
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: nowDate,
        renewTime: nowDate,
        leaseTransitions: 0,
      });
      if (created === false) return false;
      this.observe(created);
      return true;
    }
    this.observe(current);
    const holder = current.record.holderIdentity;
    const held = holder !== '' && holder !== identity;
    // Expiry by our own monotonic clock since the record last changed, with the holder's own duration.
    const honouredMs = Math.max(current.record.leaseDurationSeconds * 1000, 0);
    if (held && this.monotonic() < this.observedAt + honouredMs) return false;
    const ours = holder === identity;
    const next: LeaseRecord = {
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: ours ? (current.record.acquireTime ?? nowDate) : nowDate,
      renewTime: nowDate,
      leaseTransitions: ours ? current.record.leaseTransitions : current.record.leaseTransitions + 1,
    };
    const updated = await store.update(next, current.resourceVersion);
    if (updated === false) return false;
    this.observe(updated);
    return true;
  }
}
