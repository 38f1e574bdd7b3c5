/**
 * Who takes and gives back the apply lease of a run (`lease.ts`). A CLI or Action run takes it for
 * its apply and releases it at once (`releaseEachRun`). A watcher keeps it for a while after an
 * apply (`LingeringLease`): a change that follows within `lingerMs` is applied under the lease it
 * still holds — after one read of the lease record to confirm it is still its own — instead of
 * taking it again (three requests and the claim's settle time, a second or more). Another apply of
 * the source waits meanwhile, as it would during a run, and gets the lease once the watcher lets
 * it go: after `lingerMs` with no run, at once after a run that failed or was not a clean apply,
 * and when the watcher stops. A watcher killed while it keeps the lease leaves it to expire, as a
 * crashed apply does.
 *
 * A waiting apply wins over a kept lease: while it keeps the lease without a run the watcher says
 * so in the record (`idle`), a waiting apply names itself there (`waiting`), and the watcher lets
 * the lease go as soon as it sees that — at its next look (every `checkEveryMs` while it lingers),
 * at its next change (instead of keeping it), or when the run under way ends (instead of
 * lingering). The released record names the waiter, whose it is first (`lease-judge.ts`); the
 * watcher's next run waits for it like any other apply.
 */
import type { ApiClient } from '../api/types.js';
import type { Clock } from '../core/clock.js';
import type { EventSink } from '../core/events.js';
import type { LeaseStore } from '../ownership/store.js';
import type { EngineContext } from './context.js';
import { acquireLease, type HeldLease, type LeaseSettings } from './lease.js';

/** How often a lingering watcher looks whether an apply waits for its lease (default). */
const DEFAULT_LINGER_CHECK_MS = 5_000;

/** How a run gets the lease and gives it back. */
export interface LeaseKeeper {
  /**
   * The source's lease for this run: one still held from an earlier run (`kept`: the run's plan was
   * read while it was held, so there is nothing to re-check) or a new one.
   */
  take(
    ctx: Pick<EngineContext, 'client' | 'clock' | 'signal' | 'events'>,
    sourceId: string,
    settings: LeaseSettings,
    store: LeaseStore,
  ): Promise<{ lease: HeldLease; kept: boolean }>;
  /** The run is done with it; `clean`: it applied without a problem (a keeper may keep it). */
  done(lease: HeldLease, clean: boolean): Promise<void>;
}

/** Takes the lease for each run and releases it when the run is done. */
export const releaseEachRun: LeaseKeeper = {
  take: async (ctx, sourceId, settings, store) => ({
    lease: await acquireLease(ctx, sourceId, settings, store),
    kept: false,
  }),
  done: (lease) => lease.release(),
};

interface Held {
  sourceId: string;
  store: LeaseStore;
  lease: HeldLease;
  /** Aborted when the lease is taken by a run again (its release is called off). */
  linger?: AbortController;
}

/** Keeps the lease for `lingerMs` after a clean apply (see the module comment). */
export class LingeringLease implements LeaseKeeper {
  private held: Held | undefined;
  /** A release under way (the linger ran out): a run taking the lease waits for it first. */
  private releasing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly options: {
      lingerMs: number;
      /** How often it looks, while lingering, whether another apply waits (default `DEFAULT_LINGER_CHECK_MS`). */
      checkEveryMs?: number;
      /** The keeper's own: it renews and releases with these, whichever run took the lease. */
      client: ApiClient;
      clock: Clock;
      events: EventSink;
      /** The keeper's life: aborted, nothing is renewed any more (`close` releases first). */
      signal: AbortSignal;
    },
  ) {}

  /** Whether a lease is kept now (for status and tests). */
  get holding(): boolean {
    return this.held !== undefined;
  }

  async take(
    ctx: Pick<EngineContext, 'client' | 'clock' | 'signal' | 'events'>,
    sourceId: string,
    settings: LeaseSettings,
    store: LeaseStore,
  ): Promise<{ lease: HeldLease; kept: boolean }> {
    await this.releasing;
    const held = this.held;
    if (held !== undefined) {
      held.linger?.abort();
      held.linger = undefined;
      if (held.sourceId === sourceId && held.store === store && !held.lease.lost.aborted) {
        // Still ours (one read)? Another apply with --break-lease may have taken it meanwhile; one
        // may wait for it: then it is let go, and this run waits its turn.
        if (await held.lease.stillHeld()) {
          if (!this.handOver(held)) {
            await held.lease.setIdle(false);
            return { lease: held.lease, kept: true };
          }
        }
      }
      this.held = undefined;
      await held.lease.release().catch(() => {});
    }
    const { client, clock, events, signal } = this.options;
    const lease = await acquireLease(
      { client, clock, events, signal: AbortSignal.any([ctx.signal, signal]) },
      sourceId,
      settings,
      store,
      signal,
    );
    this.held = { sourceId, store, lease };
    return { lease, kept: false };
  }

  async done(lease: HeldLease, clean: boolean): Promise<void> {
    const held = this.held;
    if (held?.lease !== lease) {
      await lease.release();
      return;
    }
    // Lingers only after a clean apply, and not when another apply asked for it meanwhile.
    const keep =
      clean &&
      !this.closed &&
      this.options.lingerMs > 0 &&
      !lease.lost.aborted &&
      (await lease.stillHeld().catch(() => false)) &&
      !this.handOver(held);
    if (!keep) {
      this.held = undefined;
      await lease.release();
      return;
    }
    await lease.setIdle(true).catch(() => {});
    const linger = new AbortController();
    held.linger = linger;
    void this.lingerOn(held, linger);
  }

  /** Whether another apply waits for the kept lease (then it is let go: said in the log). */
  private handOver(held: Held): boolean {
    const to = held.lease.waiters();
    if (to.length === 0) return false;
    this.options.events.emit({ type: 'lease.handed', sourceId: held.sourceId, to: to.join(', ') });
    return true;
  }

  /**
   * Keeps `held` for `lingerMs`, looking every `checkEveryMs` whether another apply waits for it
   * (then it is let go at once), unless a run takes it again (`linger` aborted) or the watcher stops.
   */
  private async lingerOn(held: Held, linger: AbortController): Promise<void> {
    const { clock, lingerMs, signal } = this.options;
    const every = Math.max(1, this.options.checkEveryMs ?? DEFAULT_LINGER_CHECK_MS);
    const during = AbortSignal.any([linger.signal, signal]);
    const current = () => this.held === held && held.linger === linger;
    for (let left = lingerMs; left > 0;) {
      const step = Math.min(every, left);
      try {
        await clock.sleep(step, during);
      } catch {
        return;
      }
      left -= step;
      if (!current()) return;
      if (left <= 0) break;
      // A read that fails says nothing: it lingers on (the renewals judge whether it is still held).
      const still = await held.lease.stillHeld().catch(() => true);
      if (!current()) return;
      if (!still || this.handOver(held)) break;
    }
    this.held = undefined;
    this.releasing = held.lease.release().catch(() => {});
  }

  /** Releases a kept lease (the watcher stops); no lease is kept afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const held = this.held;
    this.held = undefined;
    if (held === undefined) return;
    held.linger?.abort();
    await held.lease.release().catch(() => {});
  }
}
