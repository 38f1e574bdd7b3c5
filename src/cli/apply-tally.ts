/**
 * What an apply has done so far, counted from the engine's events, and the time it has left
 * (the longest of: the requests the remaining changes need at the client's rate now, the pace of
 * the last minute, and the whole run's pace with the pause still ahead counted). No output here:
 * `progress.ts` draws the lines.
 */

/** The API's rate-limit window: before a run has lasted this long (or met a 429), its pace says little. */
const RATE_WINDOW_MS = 60_000;

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

export class ApplyTally {
  total: number | undefined;
  done = 0;
  failed = 0;
  skipped = 0;
  requests = 0;
  startedAt: number | undefined;
  pausedUntil = 0;
  waitingUntil = 0;
  private pauseSeen = false;
  /** Operations of kinds written one request (or a few) per change. */
  private doneSingle = 0;
  private pendingByKind: ReadonlyMap<string, number> | undefined;
  private readonly finishedByKind = new Map<string, number>();
  private readonly pace = recentPace(RATE_WINDOW_MS);

  constructor(
    /** Kinds written in bulk (a few requests for all their changes). */
    private readonly bulk: ReadonlySet<string>,
  ) {}

  start(at: number, pendingByKind: ReadonlyMap<string, number> | undefined): void {
    this.pendingByKind = pendingByKind;
    this.startedAt = at;
    this.pace.add(at, 0);
  }

  /** An operation finished: skipped (the run stopped), done, or failed (done too). */
  finished(at: number, kind: string, outcome: string): void {
    this.finishedByKind.set(kind, (this.finishedByKind.get(kind) ?? 0) + 1);
    if (outcome === 'skipped') {
      this.skipped += 1;
      return;
    }
    this.done += 1;
    if (!this.bulk.has(kind)) {
      this.doneSingle += 1;
      this.pace.add(at, this.doneSingle);
    }
    if (outcome === 'failed') this.failed += 1;
  }

  /** A Retry-After pause from `at` for `ms`; true when none was in force. */
  paused(at: number, ms: number): boolean {
    const wasPaused = this.pausedUntil > at;
    this.pausedUntil = Math.max(this.pausedUntil, at + ms);
    this.pauseSeen = true;
    return !wasPaused;
  }

  /** What is left: changes written one by one, and bulk kinds still to write (a few requests each). */
  private left(): { single: number; bulkKinds: number } {
    if (!this.pendingByKind) return { single: (this.total ?? 0) - this.done - this.skipped, bulkKinds: 0 };
    let single = 0;
    let bulkKinds = 0;
    for (const [kind, n] of this.pendingByKind) {
      const rest = n - (this.finishedByKind.get(kind) ?? 0);
      if (rest <= 0) continue;
      if (this.bulk.has(kind)) bulkKinds += 1;
      else single += rest;
    }
    return { single, bulkKinds };
  }

  /**
   * The time left, in ms: the requests the remaining changes need (as many per change as so far; a
   * bulk kind as one request) at the client's `rate` per minute now, and never less than the recent
   * pace says (a slow server, a low concurrency), nor than the time a pause still holds.
   */
  etaMs(now: number, rate: number): number | undefined {
    const { total, doneSingle, startedAt } = this;
    if (total === undefined || doneSingle === 0 || startedAt === undefined) return undefined;
    const rest = this.left();
    if (rest.single + rest.bulkKinds <= 0) return undefined;
    const elapsed = now - startedAt;
    // The client's rate is its ceiling until the server says otherwise; the first seconds go at
    // the burst. Until a Retry-After pause or a full minute (the API's window) has shown what the
    // server allows, any estimate would be the ceiling's guess (3× short against a server that
    // allows 300 a minute), so none is shown.
    if (!this.pauseSeen && elapsed < RATE_WINDOW_MS) return undefined;
    const pauseLeft = Math.max(0, this.pausedUntil - now);
    const estimates: number[] = [];
    const perChange = this.requests / doneSingle;
    if (rate > 0) estimates.push(((perChange * rest.single + rest.bulkKinds) / rate) * 60_000 + pauseLeft);
    const perMs = this.pace.perMs(now);
    if (perMs !== undefined) estimates.push(rest.single / perMs + pauseLeft);
    // The whole run's pace, the pause still ahead included: a server's window (so many a minute,
    // then a pause) shows in it, where the rate learned from a few 429s is still far above.
    estimates.push(((elapsed + pauseLeft) / doneSingle) * rest.single);
    return Math.max(...estimates);
  }
}
