/**
 * Progress, from the engine's events.
 *
 * While the workspace is read (a plan, and an apply before its first write): a Retry-After pause
 * and a slow answer are said at once, and while the reads go on a line comes at least every 10 s
 * of the run's clock (requests answered, what is being waited for), so a plan against a
 * rate-limited server is never silent. While a Retry-After pause or the client's own rate (a low
 * `CORTEX_RATE_LIMIT`: `ratelimit.waiting`) holds a plan or an apply back, a line still comes at
 * least every 10 s, saying what it waits for.
 *
 * While an apply writes: on a terminal, one line rewritten in place (done/total, failures,
 * requests, a Retry-After pause, an estimate of the time left); elsewhere (CI logs) a line every
 * 10 s of the run's clock or every 100 operations, whichever comes first. Every failure is
 * printed as it happens. The estimate is shown once the server has shown what it allows (a
 * Retry-After pause, or a minute of applying: before that the client's rate is its configured
 * ceiling and its first requests go at the burst, which made the first estimate 3× short). It is
 * the longest of: the requests the remaining changes need (as many per change as so far) at the
 * rate the client sends now (learned from the server's 429s), the pace of the last minute, and the
 * whole run's pace with the pause still ahead counted. Once the run is stopped, the changes
 * skipped because of it are counted, not announced one line per hundred.
 */
import type { ClientStats } from '../api/types.js';
import type { Clock, EngineEvent, EventSink } from '../engine/context.js';
import { countOf } from '../core/plural.js';
import { leaseEventLine } from '../engine/lease-events.js';

export const PROGRESS_EVERY_MS = 10_000;
export const PROGRESS_EVERY_OPERATIONS = 100;
/** The API's rate-limit window: before a run has lasted this long (or met a 429), its pace says little. */
export const RATE_WINDOW_MS = 60_000;

export interface ProgressOptions {
  stream: NodeJS.WritableStream;
  /** A terminal: rewrite one line instead of appending lines. */
  tty: boolean;
  clock: Clock;
  /** The run's stop signal: once aborted, skipped changes are counted silently. */
  signal?: AbortSignal;
  /** The rate the client sends at now, in requests per minute (undefined or 0: unknown). */
  ratePerMinute?: () => number | undefined;
  /** Kinds written in bulk (a few requests for all their changes): not counted per change in the estimate. */
  bulkKinds?: ReadonlySet<string>;
}

/** Reports the reads of a plan: pauses and slow answers at once, and a line at least every 10 s. */
export interface ReadProgress extends EventSink {
  /** Starts the 10 s heartbeat; `stats` tells it how many requests were answered. */
  start(stats: () => Pick<ClientStats, 'requestsSent'>): void;
  /** Stops the heartbeat (idempotent). */
  finish(): void;
}

export interface ApplyProgress extends EventSink {
  /** The reads before the first write (the plan under the lease): reported as a plan's. */
  readonly reading: ReadProgress;
  /**
   * Starts counting: events before this (the reads of the plan) are not part of the apply.
   * `pendingByKind`: the changes to make per kind (ownership-record writes as `inventory`).
   */
  start(pendingByKind?: ReadonlyMap<string, number>): void;
  /** Clears the updating line (TTY) so what follows starts on a clean line. */
  finish(): void;
}

const seconds = (ms: number): string => `${Math.max(0, Math.round(ms / 1000))} s`;

/** `1m 05s`, `42 s`. */
export const duration = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
};

/** What a slow answer is holding up: the host, the operation, and which attempt of how many (a retry's wait starts again). */
export const waitingLine = (event: Extract<EngineEvent, { type: 'request.waiting' }>): string =>
  `Waiting ${seconds(event.waitedMs)} for ${event.host} to answer ${event.method} ${event.operation} (attempt ${event.attempt} of ${event.maxAttempts})…`;

/** The line for a Retry-After pause, said when it starts. */
export const pausedLine = (ms: number, doing: string): string =>
  `Paused ${seconds(ms)}: the API asked to wait (Retry-After); ${doing} goes on after.`;

/**
 * Lines while the run is held back (a Retry-After pause, a request waiting for the client's rate):
 * `tick` at least every 10 s of the run's clock until the hold is over. Between holds the reads
 * and writes themselves are the heartbeat (each answered request checks whether a line is due; a
 * slow answer has the client's own `request.waiting` lines), so nothing sleeps on the run's clock
 * in an open-ended loop.
 */
const holdTicker = (clock: Clock, runSignal: AbortSignal | undefined, lastLineAt: () => number, tick: () => void) => {
  let until = 0;
  let stop: AbortController | undefined;
  let ticking = false;
  const loop = async () => {
    if (ticking || !stop) return;
    ticking = true;
    const signal = AbortSignal.any([stop.signal, ...(runSignal ? [runSignal] : [])]);
    try {
      while (!signal.aborted && until > clock.now()) {
        const now = clock.now();
        const wait = Math.max(1, Math.min(PROGRESS_EVERY_MS - (now - lastLineAt()), until - now));
        try {
          await clock.sleep(wait, signal);
          // A macrotask between two looks, whatever the clock's sleep does.
          await new Promise<void>((resolve) => setImmediate(resolve));
        } catch {
          return;
        }
        if (!signal.aborted) tick();
      }
    } finally {
      ticking = false;
    }
  };
  return {
    start() {
      stop ??= new AbortController();
    },
    /** The run is held back until `at` (extends, never shortens, a hold in force). */
    holdUntil(at: number) {
      until = Math.max(until, at);
      void loop();
    },
    stop() {
      stop?.abort();
      stop = undefined;
      until = 0;
    },
  };
};

/** What holds the run back now, for a progress line: a Retry-After pause first, else the client's rate. */
const heldLine = (now: number, pausedUntil: number, waitingUntil: number, more: string): string | undefined => {
  if (pausedUntil > now) return `paused ${seconds(pausedUntil - now)}${more} for Retry-After`;
  if (waitingUntil > now) return `the next request waits ${seconds(waitingUntil - now)}${more} for the rate limit`;
  return undefined;
};

export const createReadProgress = (options: {
  stream: NodeJS.WritableStream;
  clock: Clock;
  signal?: AbortSignal;
}): ReadProgress => {
  const { stream, clock } = options;
  let startedAt: number | undefined;
  let lastLineAt = 0;
  let pausedUntil = 0;
  let waitingUntil = 0;
  let stats: (() => Pick<ClientStats, 'requestsSent'>) | undefined;

  const line = (text: string) => {
    stream.write(`${text}\n`);
    lastLineAt = clock.now();
  };
  const heartbeat = () => {
    if (startedAt === undefined) return;
    const now = clock.now();
    if (now - lastLineAt < PROGRESS_EVERY_MS) return;
    const sent = stats?.().requestsSent ?? 0;
    const held = heldLine(now, pausedUntil, waitingUntil, ' more');
    line(
      `[${duration(now - startedAt)}] Reading the workspace: ${countOf(sent, 'request')} so far${held ? `; ${held}` : ''}`,
    );
  };
  const ticker = holdTicker(clock, options.signal, () => lastLineAt, heartbeat);

  return {
    emit(event) {
      if (event.type === 'lease.waiting' || event.type === 'lease.taken' || event.type === 'lease.lost') {
        // Said whether or not the reads are being reported; while it waits, these lines (at least
        // one every 10 s) are the heartbeat, so no "Reading the workspace" line comes between them.
        line(leaseEventLine(event) ?? event.type);
        return;
      }
      if (startedAt === undefined) return;
      if (event.type === 'ratelimit.paused') {
        const now = clock.now();
        const wasPaused = pausedUntil > now;
        pausedUntil = Math.max(pausedUntil, now + event.ms);
        if (!wasPaused) line(pausedLine(event.ms, 'reading'));
        ticker.holdUntil(pausedUntil);
      } else if (event.type === 'ratelimit.waiting') {
        waitingUntil = Math.max(waitingUntil, clock.now() + event.ms);
        ticker.holdUntil(waitingUntil);
      } else if (event.type === 'request.waiting') {
        line(waitingLine(event));
      } else if (event.type === 'request') {
        heartbeat();
      }
    },
    start(s) {
      if (startedAt !== undefined) return;
      stats = s;
      startedAt = clock.now();
      lastLineAt = startedAt;
      ticker.start();
    },
    finish() {
      ticker.stop();
      startedAt = undefined;
    },
  };
};

/** Keeps (time, operations done) samples of the last `windowMs` to measure the recent pace. */
const recentPace = (windowMs: number) => {
  const samples: { at: number; done: number }[] = [];
  return {
    add(at: number, done: number) {
      samples.push({ at, done });
      while (samples.length > 2 && samples[0]!.at < at - windowMs) samples.shift();
    },
    /**
     * Operations per millisecond from the first sample inside the window to now, when that spans
     * at least a fifth of it (a sample from before a long pause is not part of the recent pace).
     */
    perMs(now: number): number | undefined {
      const first = samples.find((s) => s.at >= now - windowMs);
      const last = samples[samples.length - 1];
      if (!first || !last || last.done <= first.done || now - first.at < windowMs / 5) return undefined;
      return (last.done - first.done) / (now - first.at);
    },
  };
};

export const createApplyProgress = (options: ProgressOptions): ApplyProgress => {
  const { stream, tty, clock } = options;
  const reading = createReadProgress({ stream, clock, ...(options.signal ? { signal: options.signal } : {}) });
  let total: number | undefined;
  let done = 0;
  let failed = 0;
  let skipped = 0;
  let requests = 0;
  let startedAt: number | undefined;
  let pausedUntil = 0;
  let waitingUntil = 0;
  let pauseSeen = false;
  let lastLineAt = 0;
  let lastLineDone = 0;
  let lineShown = false;
  const pace = recentPace(RATE_WINDOW_MS);
  const stopping = () => options.signal?.aborted === true;
  const bulk = options.bulkKinds ?? new Set<string>();
  let pendingByKind: ReadonlyMap<string, number> | undefined;
  const finishedByKind = new Map<string, number>();
  /** Operations of kinds written one request (or a few) per change. */
  let doneSingle = 0;

  /** What is left: changes written one by one, and bulk kinds still to write (a few requests each). */
  const left = (): { single: number; bulkKinds: number } => {
    if (!pendingByKind) return { single: (total ?? 0) - done - skipped, bulkKinds: 0 };
    let single = 0;
    let bulkKinds = 0;
    for (const [kind, n] of pendingByKind) {
      const rest = n - (finishedByKind.get(kind) ?? 0);
      if (rest <= 0) continue;
      if (bulk.has(kind)) bulkKinds += 1;
      else single += rest;
    }
    return { single, bulkKinds };
  };

  /**
   * The time left: the requests the remaining changes need (as many per change as so far; a bulk
   * kind as one request) at the client's rate now, and never less than the recent pace says (a
   * slow server, a low concurrency), nor than the time a pause still holds.
   */
  const eta = (now: number): string | undefined => {
    if (total === undefined || doneSingle === 0 || startedAt === undefined || stopping()) return undefined;
    const rest = left();
    if (rest.single + rest.bulkKinds <= 0) return undefined;
    const elapsed = now - startedAt;
    // The client's rate is its ceiling until the server says otherwise; the first seconds go at
    // the burst. Until a Retry-After pause or a full minute (the API's window) has shown what the
    // server allows, any estimate would be the ceiling's guess (3× short against a server that
    // allows 300 a minute), so none is shown.
    if (!pauseSeen && elapsed < RATE_WINDOW_MS) return undefined;
    const pauseLeft = Math.max(0, pausedUntil - now);
    const estimates: number[] = [];
    const rate = options.ratePerMinute?.() ?? 0;
    const perChange = requests / doneSingle;
    if (rate > 0) estimates.push(((perChange * rest.single + rest.bulkKinds) / rate) * 60_000 + pauseLeft);
    const perMs = pace.perMs(now);
    if (perMs !== undefined) estimates.push(rest.single / perMs + pauseLeft);
    // The whole run's pace, the pause still ahead included: a server's window (so many a minute,
    // then a pause) shows in it, where the rate learned from a few 429s is still far above.
    estimates.push(((elapsed + pauseLeft) / doneSingle) * rest.single);
    return duration(Math.max(...estimates));
  };

  const status = (now: number): string => {
    const parts = [`${done}/${total ?? '?'} done`, `${failed} failed`];
    if (skipped > 0) parts.push(`${skipped} not done`);
    parts.push(countOf(requests, 'request'));
    if (stopping()) parts.push('stopping: changes in flight finish, no new one starts');
    else {
      const held = heldLine(now, pausedUntil, waitingUntil, '');
      if (held !== undefined) parts.push(held);
    }
    const left = eta(now);
    if (left !== undefined) parts.push(`about ${left} left`);
    return `Applying: ${parts.join(', ')}`;
  };

  const clearLine = () => {
    if (tty && lineShown) stream.write('\r\u001b[2K');
    lineShown = false;
  };
  /** A line that stays (a failure, a wait); the updating line is drawn again below it. */
  const permanent = (text: string) => {
    clearLine();
    stream.write(`${text}\n`);
  };
  const update = (force = false) => {
    if (startedAt === undefined) return;
    const now = clock.now();
    if (tty) {
      stream.write(`\r\u001b[2K${status(now)}`);
      lineShown = true;
      return;
    }
    const due = now - lastLineAt >= PROGRESS_EVERY_MS || done - lastLineDone >= PROGRESS_EVERY_OPERATIONS;
    if (!force && !due) return;
    stream.write(`[${duration(now - startedAt)}] ${status(now)}\n`);
    lastLineAt = now;
    lastLineDone = done;
  };

  /** While a pause or the rate holds the apply back: a line at least every 10 s (TTY: the line redrawn). */
  const ticker = holdTicker(
    clock,
    options.signal,
    () => lastLineAt,
    () => update(),
  );

  const onEvent = (event: EngineEvent) => {
    if (startedAt === undefined) {
      reading.emit(event);
      if (event.type === 'plan.ready') total = event.pending;
      return;
    }
    switch (event.type) {
      case 'plan.ready':
        total = event.pending;
        return;
      case 'operation.done':
        finishedByKind.set(event.kind, (finishedByKind.get(event.kind) ?? 0) + 1);
        if (event.outcome === 'skipped') {
          skipped += 1;
          // Stopped: the rest is skipped at once; the last line and the report count it.
          if (!stopping()) update();
          return;
        }
        done += 1;
        if (!bulk.has(event.kind)) {
          doneSingle += 1;
          pace.add(clock.now(), doneSingle);
        }
        if (event.outcome === 'failed') {
          failed += 1;
          permanent(
            `✗ ${event.action} ${event.kind}/${event.id} failed${event.status !== null ? ` (HTTP ${event.status})` : ''}: ${event.error ?? 'no message'}`,
          );
        }
        update();
        return;
      case 'request':
        requests += 1;
        update();
        return;
      case 'ratelimit.paused': {
        const now = clock.now();
        const wasPaused = pausedUntil > now;
        pausedUntil = Math.max(pausedUntil, now + event.ms);
        pauseSeen = true;
        if (!tty && !wasPaused) permanent(pausedLine(event.ms, 'the apply'));
        update();
        ticker.holdUntil(pausedUntil);
        return;
      }
      case 'ratelimit.waiting':
        waitingUntil = Math.max(waitingUntil, clock.now() + event.ms);
        ticker.holdUntil(waitingUntil);
        return;
      case 'request.waiting':
        permanent(waitingLine(event));
        update();
        return;
      case 'lease.waiting':
      case 'lease.taken':
      case 'lease.lost':
        permanent(leaseEventLine(event) ?? event.type);
        update();
        return;
      default:
        return;
    }
  };

  return {
    emit: onEvent,
    reading,
    start(pending) {
      reading.finish();
      pendingByKind = pending;
      startedAt = clock.now();
      lastLineAt = startedAt;
      pace.add(startedAt, 0);
      ticker.start();
      update(true);
    },
    finish() {
      reading.finish();
      ticker.stop();
      if (startedAt === undefined) return;
      if (tty) clearLine();
      else if (done !== lastLineDone || skipped > 0) update(true);
      startedAt = undefined;
    },
  };
};
