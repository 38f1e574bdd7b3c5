/**
 * One reconcile at a time. Triggers that arrive during a run coalesce into ONE follow-up run; a
 * run that fails for a reason that may pass (the API, the network, git) is retried with
 * exponential backoff up to a cap, and nothing a run does can stop the loop. `stop()` refuses new
 * triggers, aborts the current run's signal (no new operations start; in-flight ones finish) and
 * waits for it up to a deadline.
 */

/** `settle`: the second look at removals after the settle time. */
export type Trigger = 'startup' | 'commit' | 'file-change' | 'webhook' | 'heal' | 'retry' | 'settle';

export interface RunVerdict {
  ok: boolean;
  /** A failure worth retrying on its own (API, network, git); false for bad manifests or a refused plan. */
  retry: boolean;
}

export interface BackoffOptions {
  /** First retry delay; default 5 s. */
  baseMs: number;
  /** Longest delay; default 5 min. */
  maxMs: number;
}

interface RunnerOptions {
  run: (trigger: Trigger, signal: AbortSignal) => Promise<RunVerdict>;
  backoff?: Partial<BackoffOptions>;
  /** A run that threw (a bug or an unexpected failure): reported, then treated as retryable. */
  onCrash?: (error: unknown) => void;
  /** Called when a retry is scheduled. */
  onBackoff?: (delayMs: number, failures: number) => void;
}

export interface RunnerState {
  running: boolean;
  pending?: Trigger;
  /** Consecutive failed runs (0 after a success). */
  failures: number;
  /** When a retry is scheduled: its delay, and whether the delay has reached the cap. */
  backoff?: { delayMs: number; atCap: boolean; at: number };
  stopped: boolean;
}

export type StopResult = 'idle' | 'finished' | 'timed-out';

export const backoffDelay = (failures: number, options: BackoffOptions): number =>
  Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, failures - 1));

export class SerialRunner {
  private readonly backoffOptions: BackoffOptions;
  private current: { promise: Promise<void>; controller: AbortController } | undefined;
  private pending: Trigger | undefined;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoff: RunnerState['backoff'];
  private stopped = false;

  constructor(private readonly options: RunnerOptions) {
    this.backoffOptions = { baseMs: 5000, maxMs: 300_000, ...options.backoff };
  }

  /** Asks for a run. Ignored after `stop()`; coalesced while a run is in progress. */
  trigger(trigger: Trigger): void {
    if (this.stopped) return;
    // While backing off, the heal interval waits for the scheduled retry; news (a commit, a
    // webhook, a file change) runs at once.
    if (trigger === 'heal' && this.backoff) return;
    if (this.current) {
      this.pending ??= trigger;
      return;
    }
    this.start(trigger);
  }

  state(): RunnerState {
    return {
      running: this.current !== undefined,
      ...(this.pending ? { pending: this.pending } : {}),
      failures: this.failures,
      ...(this.backoff ? { backoff: this.backoff } : {}),
      stopped: this.stopped,
    };
  }

  /** Resolves when no run is in progress or pending (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.current) await this.current.promise;
  }

  async stop(timeoutMs: number): Promise<StopResult> {
    this.stopped = true;
    this.pending = undefined;
    clearTimeout(this.retryTimer);
    this.backoff = undefined;
    const current = this.current;
    if (!current) return 'idle';
    current.controller.abort(new Error('shutting down'));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<StopResult>((resolve) => {
      timer = setTimeout(() => resolve('timed-out'), timeoutMs);
    });
    const result = await Promise.race([current.promise.then((): StopResult => 'finished'), deadline]);
    clearTimeout(timer);
    return result;
  }

  private start(trigger: Trigger): void {
    clearTimeout(this.retryTimer);
    this.backoff = undefined;
    const controller = new AbortController();
    const promise = this.execute(trigger, controller.signal).finally(() => {
      this.current = undefined;
      const next = this.pending;
      this.pending = undefined;
      if (next && !this.stopped) this.start(next);
    });
    this.current = { promise, controller };
  }

  private async execute(trigger: Trigger, signal: AbortSignal): Promise<void> {
    let verdict: RunVerdict;
    try {
      verdict = await this.options.run(trigger, signal);
    } catch (error) {
      this.options.onCrash?.(error);
      verdict = { ok: false, retry: true };
    }
    if (verdict.ok) {
      this.failures = 0;
      return;
    }
    this.failures += 1;
    if (!verdict.retry || this.stopped || this.pending) return;
    const delayMs = backoffDelay(this.failures, this.backoffOptions);
    this.backoff = { delayMs, atCap: delayMs >= this.backoffOptions.maxMs, at: Date.now() + delayMs };
    this.options.onBackoff?.(delayMs, this.failures);
    this.retryTimer = setTimeout(() => {
      this.backoff = undefined;
      this.trigger('retry');
    }, delayMs);
    this.retryTimer.unref?.();
  }
}
