/**
 * Progress of an apply, from the engine's events. On a terminal: one line rewritten in place
 * (done/total, failures, requests, a Retry-After pause, an ETA from the rate budget). Elsewhere
 * (CI logs): a line every 10 s of the run's clock or every 100 operations, whichever comes first.
 * Every failure is printed as it happens, and a slow answer says what is being waited for.
 */
import type { Clock, EngineEvent, EventSink } from '../engine/context.js';
import { leaseEventLine } from '../engine/lease-events.js';

export const PROGRESS_EVERY_MS = 10_000;
export const PROGRESS_EVERY_OPERATIONS = 100;

export interface ProgressOptions {
  stream: NodeJS.WritableStream;
  /** A terminal: rewrite one line instead of appending lines. */
  tty: boolean;
  clock: Clock;
  /** The client's request budget, for the ETA (0 or undefined: no limit). */
  requestsPerMinute?: number;
}

export interface ApplyProgress extends EventSink {
  /** Starts counting: events before this (the reads of the plan) are not part of the apply. */
  start(): void;
  /** Clears the updating line (TTY) so what follows starts on a clean line. */
  finish(): void;
}

const seconds = (ms: number): string => `${Math.max(0, Math.round(ms / 1000))} s`;

/** `1m 05s`, `42 s`. */
export const duration = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
};

/** What a slow answer is holding up: the host and the operation. */
export const waitingLine = (event: Extract<EngineEvent, { type: 'request.waiting' }>): string =>
  `Waiting ${seconds(event.waitedMs)} for ${event.host} to answer ${event.method} ${event.operation}…`;

export const createApplyProgress = (options: ProgressOptions): ApplyProgress => {
  const { stream, tty, clock } = options;
  let total: number | undefined;
  let done = 0;
  let failed = 0;
  let requests = 0;
  let startedAt: number | undefined;
  let pausedUntil = 0;
  let lastLineAt = 0;
  let lastLineDone = 0;
  let lineShown = false;

  const eta = (now: number): string | undefined => {
    if (total === undefined || done === 0 || startedAt === undefined) return undefined;
    const remaining = total - done;
    if (remaining <= 0) return undefined;
    const observed = ((now - startedAt) / done) * remaining;
    const rpm = options.requestsPerMinute ?? 0;
    const byBudget = rpm > 0 ? ((Math.max(1, requests / done) * remaining) / rpm) * 60_000 : 0;
    return duration(Math.max(observed, byBudget));
  };

  const status = (now: number): string => {
    const parts = [`${done}/${total ?? '?'} done`, `${failed} failed`, `${requests} requests`];
    if (pausedUntil > now) parts.push(`paused ${seconds(pausedUntil - now)} for Retry-After`);
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

  const onEvent = (event: EngineEvent) => {
    switch (event.type) {
      case 'plan.ready':
        total = event.pending;
        return;
      case 'operation.done':
        if (startedAt === undefined) return;
        done += 1;
        if (event.outcome === 'failed') {
          failed += 1;
          permanent(
            `✗ ${event.action} ${event.kind}/${event.id} failed${event.status !== null ? ` (HTTP ${event.status})` : ''}: ${event.error ?? 'no message'}`,
          );
        }
        update();
        return;
      case 'request':
        if (startedAt === undefined) return;
        requests += 1;
        update();
        return;
      case 'ratelimit.paused': {
        if (startedAt === undefined) return;
        const now = clock.now();
        const wasPaused = pausedUntil > now;
        pausedUntil = Math.max(pausedUntil, now + event.ms);
        if (!tty && !wasPaused) permanent(`Paused ${seconds(event.ms)}: the API asked to wait (Retry-After).`);
        update();
        return;
      }
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
    start() {
      startedAt = clock.now();
      lastLineAt = startedAt;
      update(true);
    },
    finish() {
      if (startedAt === undefined) return;
      if (tty) clearLine();
      else if (done !== lastLineDone) update(true);
      startedAt = undefined;
    },
  };
};
