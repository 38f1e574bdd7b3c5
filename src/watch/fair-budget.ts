/**
 * One API client for every source of a watcher, its rate budget shared fairly: each source's
 * requests wait in a queue of their own, and a free slot goes to the sources in turn (round robin
 * over those with a request waiting), so a source with 5,000 changes to write gets one request
 * through for each request of every other source that has one waiting, never a queue the others
 * wait behind.
 *
 * The budget is the only queue: it lets a request go only when the shared client's rate allows
 * one now (`Pace`: a token bucket at the client's current rate, its burst the client's own), so
 * the client's limiter, first in first out, does not hold a busy source's requests ahead of a
 * request of another source; they would cost that request a wait of one token each (half a
 * second behind 8 of them at 1,000 requests a minute, for every request of its run). The shared
 * client's own limiter still keeps the whole process under the API's rate (one token bucket, one
 * `Retry-After` pause for all).
 *
 * What a source's requests report (`request` events, 429 pauses) goes to that source's own sink,
 * and its `stats()` count its own requests: the shared client's sink looks up, by async context,
 * the source a request was made for.
 *
 * A write (anything but GET) starts only while `mayWrite()` says so (the leader's fence): when
 * leadership is lost, no new write starts, whatever a run is doing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { AbortWatch } from '../api/abort-watch.js';
import type { ApiClient, ApiRequest, ApiResponse, ClientStats, HttpMethod } from '../api/types.js';
import { CancelledError } from '../core/errors.js';
import type { EngineEvent, EventSink } from '../engine/context.js';

/**
 * The rate of one shared client as the budget spends it: a token bucket refilled at the client's
 * current rate (lowered after 429s), holding a quarter of a minute's worth as the client's does.
 * A client that says no rate (0) is never waited for.
 */
class Pace {
  private tokens = Number.POSITIVE_INFINITY;
  private last: number;

  constructor(
    private readonly client: ApiClient,
    private readonly now: () => number,
  ) {
    this.last = now();
  }

  /** Milliseconds until a request may go (0: now). */
  waitMs(): number {
    const perMinute = this.client.stats().currentPerMinute;
    if (!(perMinute > 0)) return 0;
    const now = this.now();
    const burst = Math.max(1, Math.floor(perMinute / 4));
    this.tokens = Math.min(burst, this.tokens + ((now - this.last) * perMinute) / 60_000);
    this.last = now;
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 60_000) / perMinute);
  }

  take(): void {
    if (this.client.stats().currentPerMinute > 0) this.tokens -= 1;
  }
}

interface Waiting {
  pace: Pace;
  operation: string;
  signal: AbortSignal | undefined;
  /** The queue it waits in (dropped from it when its signal aborts). */
  queue: SourceQueue;
  start: () => void;
  cancel: (error: Error) => void;
}

/** A source's own count of what its requests sent (the shared client counts every source's). */
interface SourceCounts {
  requestsSent: number;
  requestsByMethod: Record<HttpMethod, number>;
  rateLimited: number;
  retries: number;
}

interface SourceQueue {
  waiting: Waiting[];
  events: EventSink;
  counts: SourceCounts;
}

const noCounts = (): SourceCounts => ({
  requestsSent: 0,
  requestsByMethod: { GET: 0, POST: 0, PUT: 0, PATCH: 0, DELETE: 0 },
  rateLimited: 0,
  retries: 0,
});

/** An attempt's `request` event, counted for the source that made it. */
const count = (counts: SourceCounts, event: Extract<EngineEvent, { type: 'request' }>): void => {
  counts.requestsSent += 1;
  const method = event.method as HttpMethod;
  if (method in counts.requestsByMethod) counts.requestsByMethod[method] += 1;
  if (event.status === 429) counts.rateLimited += 1;
  if (event.retryInMs !== undefined) counts.retries += 1;
};

export class FairBudget {
  private readonly queues = new Map<string, SourceQueue>();
  private readonly paces = new Map<ApiClient, Pace>();
  /** Source names in turn order; the next turn starts after `lastServed`. */
  private order: string[] = [];
  private lastServed = -1;
  private inFlight = 0;
  /** Set while requests wait for the rate only: the next look. */
  private paceTimer: NodeJS.Timeout | undefined;
  /** Cancels the waiting requests of a signal that aborts (one listener per signal). */
  private readonly aborts = new AbortWatch<Waiting>((cancelled) => {
    for (const queue of new Set([...cancelled].map((w) => w.queue)))
      queue.waiting = queue.waiting.filter((w) => !cancelled.has(w));
    for (const w of cancelled) w.cancel(new CancelledError(w.operation, `${w.operation} cancelled before it was sent`));
  });
  private readonly context = new AsyncLocalStorage<string>();
  /** Requests started, per source, in the order they started (for tests and the benchmark). */
  readonly started: string[] = [];
  private readonly keepStarted: boolean;
  private readonly mayWrite: () => boolean;
  private readonly now: () => number;

  constructor(
    /** Requests of all sources in flight at once (the shared client's concurrency). */
    private readonly slots: number,
    options: { mayWrite?: () => boolean; recordStarts?: boolean; now?: () => number } = {},
  ) {
    this.mayWrite = options.mayWrite ?? (() => true);
    this.keepStarted = options.recordStarts ?? false;
    this.now = options.now ?? (() => performance.now());
  }

  /** The sink to give the shared client: each event goes to the sink of the source whose request it is. */
  readonly events: EventSink = {
    emit: (event: EngineEvent) => {
      const source = this.context.getStore();
      const queue = source !== undefined ? this.queues.get(source) : undefined;
      if (queue) {
        if (event.type === 'request') count(queue.counts, event);
        queue.events.emit(event);
      }
      // A pause of the whole client (Retry-After) with no request of ours around it: every source sees it.
      else if (source === undefined && event.type === 'ratelimit.paused')
        for (const q of this.queues.values()) q.events.emit(event);
    },
  };

  /**
   * A source's view of `shared`: its requests wait their turn; `stats()` counts its own requests
   * (the rest, pauses and the rate, are the shared client's); `close()` leaves the shared client open.
   */
  clientFor(source: string, shared: ApiClient, events: EventSink): ApiClient {
    let queue = this.queues.get(source);
    if (!queue) {
      queue = { waiting: [], events, counts: noCounts() };
      this.queues.set(source, queue);
      this.order.push(source);
    } else queue.events = events;
    const counts = queue.counts;
    let pace = this.paces.get(shared);
    if (!pace) {
      pace = new Pace(shared, this.now);
      this.paces.set(shared, pace);
    }
    const pacedBy = pace;
    const inTurn = <T>(req: ApiRequest, send: () => Promise<T>): Promise<T> =>
      this.inTurn(source, pacedBy, req, () => this.context.run(source, send));
    return {
      request: <T>(req: ApiRequest): Promise<ApiResponse<T>> => inTurn(req, () => shared.request<T>(req)),
      // A listing holds one slot for all its pages (they follow one another).
      paginate: <T>(req: ApiRequest, listKey: string): Promise<T[]> =>
        inTurn(req, () => shared.paginate<T>(req, listKey)),
      close: () => Promise.resolve(),
      stats: (): ClientStats => ({
        ...shared.stats(),
        ...counts,
        requestsByMethod: { ...counts.requestsByMethod },
      }),
    };
  }

  /** Drops a source's queue (its waiting requests are cancelled). */
  remove(source: string): void {
    const queue = this.queues.get(source);
    this.queues.delete(source);
    this.order = this.order.filter((name) => name !== source);
    this.lastServed = -1;
    for (const w of queue?.waiting.splice(0) ?? []) w.cancel(new CancelledError('request', 'the source was stopped'));
  }

  private inTurn<T>(source: string, pace: Pace, req: ApiRequest, send: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queue = this.queues.get(source);
      if (!queue)
        return reject(new CancelledError(req.operation, `${req.operation} cancelled: the source was stopped`));
      if (req.signal?.aborted)
        return reject(new CancelledError(req.operation, `${req.operation} cancelled before it was sent`));
      const waiter: Waiting = {
        pace,
        operation: req.operation,
        signal: req.signal,
        queue,
        cancel: (error) => {
          this.aborts.remove(waiter);
          reject(error);
        },
        start: () => {
          this.aborts.remove(waiter);
          // The fence is checked at the moment the write would start, not when it was queued.
          if (req.method !== 'GET' && !this.mayWrite()) {
            this.done();
            reject(new CancelledError(req.operation, `${req.operation} not sent: this replica is not the leader`));
            return;
          }
          pace.take();
          if (this.keepStarted) this.started.push(source);
          send()
            .then(resolve, reject)
            .finally(() => this.done());
        },
      };
      this.aborts.add(waiter);
      queue.waiting.push(waiter);
      this.dispatch();
    });
  }

  private done(): void {
    this.inFlight -= 1;
    this.dispatch();
  }

  /** Starts waiting requests while slots are free and the rate allows, one source after another. */
  private dispatch(): void {
    while (this.inFlight < this.slots) {
      const next = this.nextTurn();
      if (next.waiter === undefined) {
        // Requests wait for the rate alone: look again when it allows the soonest of them.
        if (next.soonestMs !== undefined && this.paceTimer === undefined)
          this.paceTimer = setTimeout(() => {
            this.paceTimer = undefined;
            this.dispatch();
          }, next.soonestMs).unref();
        return;
      }
      this.inFlight += 1;
      next.waiter.start();
    }
  }

  /** The next source in turn whose first request may go now; else how soon one may. */
  private nextTurn(): { waiter?: Waiting; soonestMs?: number } {
    const n = this.order.length;
    let soonestMs: number | undefined;
    for (let step = 1; step <= n; step += 1) {
      const index = (this.lastServed + step) % n;
      const queue = this.queues.get(this.order[index] ?? '');
      const first = queue?.waiting[0];
      if (!queue || !first) continue;
      const waitMs = first.pace.waitMs();
      if (waitMs > 0) {
        soonestMs = Math.min(soonestMs ?? waitMs, waitMs);
        continue;
      }
      queue.waiting.shift();
      this.lastServed = index;
      return { waiter: first };
    }
    return soonestMs === undefined ? {} : { soonestMs };
  }
}
