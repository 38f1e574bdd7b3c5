/**
 * One API client for every source of a watcher, its rate budget shared fairly: each source's
 * requests wait in a queue of their own, and a free slot goes to the sources in turn (round robin
 * over those with a request waiting), so a source with 5,000 changes to write gets one request
 * through for each request of every other source that has one waiting, never a queue the others
 * wait behind. The shared client's own limiter still keeps the whole process under the API's rate
 * (one token bucket, one `Retry-After` pause for all).
 *
 * What a source's requests report (`request` events, 429 pauses) goes to that source's own sink:
 * the shared client's sink looks up, by async context, the source a request was made for.
 *
 * A write (anything but GET) starts only while `mayWrite()` says so (the leader's fence): when
 * leadership is lost, no new write starts, whatever a run is doing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ApiClient, ApiRequest, ApiResponse } from '../api/types.js';
import { CancelledError } from '../core/errors.js';
import type { EngineEvent, EventSink } from '../engine/context.js';

interface Waiting {
  start: () => void;
  cancel: (error: Error) => void;
}

interface SourceQueue {
  waiting: Waiting[];
  events: EventSink;
}

export class FairBudget {
  private readonly queues = new Map<string, SourceQueue>();
  /** Source names in turn order; the next turn starts after `lastServed`. */
  private order: string[] = [];
  private lastServed = -1;
  private inFlight = 0;
  private readonly context = new AsyncLocalStorage<string>();
  /** Requests started, per source, in the order they started (for tests and the benchmark). */
  readonly started: string[] = [];
  private readonly keepStarted: boolean;

  constructor(
    /** Requests of all sources in flight at once (the shared client's concurrency). */
    private readonly slots: number,
    options: { mayWrite?: () => boolean; recordStarts?: boolean } = {},
  ) {
    this.mayWrite = options.mayWrite ?? (() => true);
    this.keepStarted = options.recordStarts ?? false;
  }

  private readonly mayWrite: () => boolean;

  /** The sink to give the shared client: each event goes to the sink of the source whose request it is. */
  readonly events: EventSink = {
    emit: (event: EngineEvent) => {
      const source = this.context.getStore();
      if (source !== undefined) this.queues.get(source)?.events.emit(event);
      // A pause of the whole client (Retry-After) with no request of ours around it: every source sees it.
      else if (event.type === 'ratelimit.paused') for (const q of this.queues.values()) q.events.emit(event);
    },
  };

  /** A source's view of `shared`: its requests wait their turn; `close()` leaves the shared client open. */
  clientFor(source: string, shared: ApiClient, events: EventSink): ApiClient {
    if (!this.queues.has(source)) {
      this.queues.set(source, { waiting: [], events });
      this.order.push(source);
    } else {
      const queue = this.queues.get(source);
      if (queue) queue.events = events;
    }
    const inTurn = <T>(req: ApiRequest, send: () => Promise<T>): Promise<T> =>
      this.inTurn(source, req, () => this.context.run(source, send));
    return {
      request: <T>(req: ApiRequest): Promise<ApiResponse<T>> => inTurn(req, () => shared.request<T>(req)),
      // A listing holds one slot for all its pages (they follow one another).
      paginate: <T>(req: ApiRequest, listKey: string): Promise<T[]> =>
        inTurn(req, () => shared.paginate<T>(req, listKey)),
      close: () => Promise.resolve(),
      stats: () => shared.stats(),
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

  private inTurn<T>(source: string, req: ApiRequest, send: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queue = this.queues.get(source);
      if (!queue)
        return reject(new CancelledError(req.operation, `${req.operation} cancelled: the source was stopped`));
      if (req.signal?.aborted)
        return reject(new CancelledError(req.operation, `${req.operation} cancelled before it was sent`));
      const onAbort = () => {
        queue.waiting = queue.waiting.filter((w) => w !== waiter);
        reject(new CancelledError(req.operation, `${req.operation} cancelled before it was sent`));
      };
      const waiter: Waiting = {
        cancel: (error) => {
          req.signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
        start: () => {
          req.signal?.removeEventListener('abort', onAbort);
          // The fence is checked at the moment the write would start, not when it was queued.
          if (req.method !== 'GET' && !this.mayWrite()) {
            this.done();
            reject(new CancelledError(req.operation, `${req.operation} not sent: this replica is not the leader`));
            return;
          }
          if (this.keepStarted) this.started.push(source);
          send()
            .then(resolve, reject)
            .finally(() => this.done());
        },
      };
      req.signal?.addEventListener('abort', onAbort, { once: true });
      queue.waiting.push(waiter);
      this.dispatch();
    });
  }

  private done(): void {
    this.inFlight -= 1;
    this.dispatch();
  }

  /** Starts waiting requests while slots are free, one source after another. */
  private dispatch(): void {
    while (this.inFlight < this.slots) {
      const next = this.nextTurn();
      if (next === undefined) return;
      this.inFlight += 1;
      next.start();
    }
  }

  private nextTurn(): Waiting | undefined {
    const n = this.order.length;
    for (let step = 1; step <= n; step += 1) {
      const index = (this.lastServed + step) % n;
      const waiter = this.queues.get(this.order[index] ?? '')?.waiting.shift();
      if (waiter) {
        this.lastServed = index;
        return waiter;
      }
    }
    return undefined;
  }
}
