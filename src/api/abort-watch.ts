/**
 * Waiters grouped by their abort signal, with one listener per signal, not per waiter: a run
 * queues hundreds of requests on its one signal, and a listener each passes Node's leak warning
 * at 11 and makes an abort slow. Used by the client's rate limiter and the watcher's fair budget.
 */
export class AbortWatch<W extends { signal: AbortSignal | undefined }> {
  private readonly watched = new Map<AbortSignal, { waiters: Set<W>; onAbort: () => void }>();

  /** `onAbort` gets the waiters of a signal that aborted, no longer watched. */
  constructor(private readonly onAbort: (cancelled: ReadonlySet<W>) => void) {}

  /** Watches `waiter`'s signal for it (nothing when it has none). */
  add(waiter: W): void {
    const signal = waiter.signal;
    if (!signal) return;
    let watch = this.watched.get(signal);
    if (!watch) {
      const waiters = new Set<W>();
      const onAbort = (): void => {
        this.watched.delete(signal);
        const cancelled = new Set(waiters);
        waiters.clear();
        this.onAbort(cancelled);
      };
      watch = { waiters, onAbort };
      this.watched.set(signal, watch);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    watch.waiters.add(waiter);
  }

  /** Stops watching `waiter`'s signal for it; the listener goes with the signal's last waiter. */
  remove(waiter: W): void {
    const signal = waiter.signal;
    const watch = signal ? this.watched.get(signal) : undefined;
    if (!signal || !watch || !watch.waiters.delete(waiter) || watch.waiters.size > 0) return;
    signal.removeEventListener('abort', watch.onAbort);
    this.watched.delete(signal);
  }
}
