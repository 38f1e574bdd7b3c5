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
import { ApplyTally } from './apply-tally.js';

const PROGRESS_EVERY_MS = 10_000;
const PROGRESS_EVERY_OPERATIONS = 100;

interface ProgressOptions {
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
interface ReadProgress extends EventSink {
  /** Starts the 10 s heartbeat; `stats` tells it how many requests were answered. */
  start(stats: () => Pick<ClientStats, 'requestsSent'>): void;
  /** Stops the heartbeat (idempotent). */
  finish(): void;
}

interface ApplyProgress extends EventSink {
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
const duration = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
};

/** What a slow answer is holding up: the host, the operation, and which attempt of how many (a retry's wait starts again). */
const waitingLine = (event: Extract<EngineEvent, { type: 'request.waiting' }>): string =>
  `Waiting ${seconds(event.waitedMs)} for ${event.host} to answer ${event.method} ${event.operation} (attempt ${event.attempt} of ${event.maxAttempts})…`;

/** The line for a Retry-After pause, said when it starts. */
const pausedLine = (ms: number, doing: string): string =>
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

/** The drawn line of an apply: rewritten in place on a terminal, else a line every 10 s or 100 operations. */
const applyLines = (options: ProgressOptions, tally: ApplyTally, stopping: () => boolean) => {
  const { stream, tty, clock } = options;
  let lastLineAt = 0;
  let lastLineDone = 0;
  let lineShown = false;

  const status = (now: number): string => {
    const parts = [`${tally.done}/${tally.total ?? '?'} done`, `${tally.failed} failed`];
    if (tally.skipped > 0) parts.push(`${tally.skipped} not done`);
    parts.push(countOf(tally.requests, 'request'));
    if (stopping()) parts.push('stopping: changes in flight finish, no new one starts');
    else {
      const held = heldLine(now, tally.pausedUntil, tally.waitingUntil, '');
      if (held !== undefined) parts.push(held);
    }
    const left = stopping() ? undefined : tally.etaMs(now, options.ratePerMinute?.() ?? 0);
    if (left !== undefined) parts.push(`about ${duration(left)} left`);
    return `Applying: ${parts.join(', ')}`;
  };

  const clearLine = () => {
    if (tty && lineShown) stream.write('\r\u001b[2K');
    lineShown = false;
  };
  return {
    lastLineAt: () => lastLineAt,
    clearLine,
    /** A line that stays (a failure, a wait); the updating line is drawn again below it. */
    permanent(text: string) {
      clearLine();
      stream.write(`${text}\n`);
    },
    update(force = false) {
      if (tally.startedAt === undefined) return;
      const now = clock.now();
      if (tty) {
        stream.write(`\r\u001b[2K${status(now)}`);
        lineShown = true;
        return;
      }
      const due = now - lastLineAt >= PROGRESS_EVERY_MS || tally.done - lastLineDone >= PROGRESS_EVERY_OPERATIONS;
      if (!force && !due) return;
      stream.write(`[${duration(now - tally.startedAt)}] ${status(now)}\n`);
      lastLineAt = now;
      lastLineDone = tally.done;
    },
    /** Counting starts at `at`: the first line is due 10 s later. */
    started(at: number) {
      lastLineAt = at;
    },
    /** Operations done since the last line (a final line is due when any). */
    doneSinceLine: () => tally.done !== lastLineDone,
  };
};

type ApplyLines = ReturnType<typeof applyLines>;
type Ticker = ReturnType<typeof holdTicker>;

/** An event of the apply (after `start`): counted, and said when it is a failure, a pause or a wait. */
const onApplyEvent = (
  event: EngineEvent,
  at: { tally: ApplyTally; lines: ApplyLines; ticker: Ticker; clock: Clock; tty: boolean; stopping: () => boolean },
): void => {
  const { tally, lines, ticker, clock } = at;
  switch (event.type) {
    case 'plan.ready':
      tally.total = event.pending;
      return;
    case 'operation.done':
      tally.finished(clock.now(), event.kind, event.outcome);
      // Stopped: the rest is skipped at once; the last line and the report count it.
      if (event.outcome === 'skipped') {
        if (!at.stopping()) lines.update();
        return;
      }
      if (event.outcome === 'failed') {
        lines.permanent(
          `✗ ${event.action} ${event.kind}/${event.id} failed${event.status !== null ? ` (HTTP ${event.status})` : ''}: ${event.error ?? 'no message'}`,
        );
      }
      lines.update();
      return;
    case 'request':
      tally.requests += 1;
      lines.update();
      return;
    case 'ratelimit.paused': {
      const started = tally.paused(clock.now(), event.ms);
      if (!at.tty && started) lines.permanent(pausedLine(event.ms, 'the apply'));
      lines.update();
      ticker.holdUntil(tally.pausedUntil);
      return;
    }
    case 'ratelimit.waiting':
      tally.waitingUntil = Math.max(tally.waitingUntil, clock.now() + event.ms);
      ticker.holdUntil(tally.waitingUntil);
      return;
    case 'request.waiting':
      lines.permanent(waitingLine(event));
      lines.update();
      return;
    case 'lease.waiting':
    case 'lease.taken':
    case 'lease.lost':
      lines.permanent(leaseEventLine(event) ?? event.type);
      lines.update();
      return;
    default:
      return;
  }
};

export const createApplyProgress = (options: ProgressOptions): ApplyProgress => {
  const { stream, tty, clock } = options;
  const reading = createReadProgress({ stream, clock, ...(options.signal ? { signal: options.signal } : {}) });
  const tally = new ApplyTally(options.bulkKinds ?? new Set<string>());
  const stopping = () => options.signal?.aborted === true;
  const lines = applyLines(options, tally, stopping);
  /** While a pause or the rate holds the apply back: a line at least every 10 s (TTY: the line redrawn). */
  const ticker = holdTicker(clock, options.signal, lines.lastLineAt, () => lines.update());

  return {
    emit: (event) => {
      if (tally.startedAt !== undefined) return onApplyEvent(event, { tally, lines, ticker, clock, tty, stopping });
      reading.emit(event);
      if (event.type === 'plan.ready') tally.total = event.pending;
    },
    reading,
    start(pending) {
      reading.finish();
      const at = clock.now();
      tally.start(at, pending);
      lines.started(at);
      ticker.start();
      lines.update(true);
    },
    finish() {
      reading.finish();
      ticker.stop();
      if (tally.startedAt === undefined) return;
      if (tty) lines.clearLine();
      else if (lines.doneSinceLine() || tally.skipped > 0) lines.update(true);
      tally.startedAt = undefined;
    },
  };
};
