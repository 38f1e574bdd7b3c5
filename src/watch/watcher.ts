/**
 * `cortex-sync watch` without its command line: a source, triggers, the serial runner, the HTTP
 * port, metrics and logs, wired around the engine's `reconcile`. Every run re-reads
 * `cortex-sync.yaml` (a commit may change it) and applies; nothing here throws out of the loop.
 * What a run records passes the secret redaction before it is kept, and the port redacts again.
 *
 * Between runs it keeps the parse results (`ManifestCache`), the live state of its source
 * (`LiveCache`: a run after a change reads only the objects it touched; a heal run, and any run
 * after one that was not a clean apply, reads everything) and, for a while after an apply, the
 * apply lease (`LingeringLease`).
 */
import { performance } from 'node:perf_hooks';
import type { ApiClient } from '../api/types.js';
import type { Diagnostic } from '../core/model.js';
import { printable } from '../core/printable.js';
import type { SyncConfig } from '../engine/config.js';
import { type Clock, fanOut, systemClock, type EventSink } from '../engine/context.js';
import { leaseEventLine } from '../engine/lease-events.js';
import type { LiveCache } from '../engine/live-cache.js';
import type { ManifestCache, ManifestCacheOptions } from '../source/manifest-cache.js';
import { createWatchClient } from './engine-adapter.js';
import { AppliedRevision } from './applied-revision.js';
import { DriftWatch, type DriftWatchOptions } from './drift-proposals.js';
import { VERSION } from '../version.js';
import { RunHistory } from './history.js';
import { type Logger, secretRedactor } from './log.js';
import { WatchMetrics } from './metrics.js';
import { DEFAULT_PRUNE_SETTLE_MS } from './defaults.js';
import { RemovalSettle } from './removal-settle.js';
import { type Judged, judgeError } from './run-record.js';
import { logRun, runRecordOf, WarningLog } from './run-entry.js';
import { type BackoffOptions, type RunVerdict, SerialRunner, type StopResult, type Trigger } from './runner.js';
import { startServer } from './server.js';
import type { Source } from './source.js';
import { RecentDeliveries, RejectionBurst } from './webhook.js';
import { BodyBudget } from './webhook-body.js';
import { createScrapeCache } from './metrics-cache.js';
import type { PlanLogRotation } from './plan-log-rotation.js';
import { ClientKeeper, reconcileSnapshot, type RunSetting } from './watch-run.js';

export { DEFAULT_LEASE_LINGER_MS, DEFAULT_PRUNE_SETTLE_MS } from './defaults.js';

/** How old the kept live state may get before a run reads everything, when the heal interval is off. */
const LIVE_STATE_MAX_AGE_MS = 600_000;

export interface WatcherOptions {
  source: Source;
  /** The configuration for a manifest root (flags, environment, its `cortex-sync.yaml`). */
  resolveConfig: (dir: string) => Promise<{ config: SyncConfig; diagnostics: Diagnostic[] }>;
  apiKey: string;
  /** Every other secret the watcher knows (git token, URL credentials): never on any surface. */
  secrets?: readonly string[];
  host: string;
  port: number;
  /** DNS names `/status`, `/metrics` and the probes answer on besides addresses and `localhost`. */
  allowedHosts?: readonly string[];
  /** 0 = off. */
  healIntervalMs: number;
  webhookSecret?: string;
  /** The followed branch, for webhooks (undefined: every push). */
  branch?: string;
  /** JSON Lines of every API operation, appended run after run. */
  planLogFile: string;
  /** When the plan log is rotated, and how many old files are kept (default: never rotated). */
  planLogRotation?: PlanLogRotation;
  logger: Logger;
  backoff?: Partial<BackoffOptions>;
  /** A delete or archive needs its manifest missing on two looks this far apart; 0 = one look. */
  pruneSettleMs?: number;
  /** How long the apply lease is kept after a clean apply; 0 = released after each (default 20 s). */
  leaseLingerMs?: number;
  clock?: Clock;
  /** A clock that never jumps, for the settle time (default `performance.now`). */
  monotonicNow?: () => number;
  /** Extra observers of the engine's events (tests, benchmarks). */
  events?: EventSink;
  /** Called once the port listens, before the first run starts (the command prints the address first). */
  onListening?: (url: string) => void;
  /** How parse results are kept between runs (default: a file is trusted once still for 2 s). */
  manifestCache?: ManifestCacheOptions;
  /** Builds the API client (default: the real one); tests may wrap it. */
  createClient?: (config: SyncConfig, apiKey: string, events: EventSink, clock: Clock) => ApiClient;
  /** The metrics to record into (default: new ones); kept by a watcher of many sources across leadership terms. */
  metrics?: WatchMetrics;
  /** Where `--on-drift pr` opens its pull requests (none: it reports only), and how (tests). */
  drift?: Pick<DriftWatchOptions, 'github' | 'pulls'>;
}

/** What one source's loop needs: the watcher's options without its port. */
export type SourceLoopOptions = Omit<WatcherOptions, 'host' | 'port' | 'allowedHosts' | 'branch' | 'onListening'>;

/** One source's triggers and serial runner, without a port (a watcher of many sources serves them all on one). */
export interface SourceLoop {
  history: RunHistory;
  metrics: WatchMetrics;
  runner: SerialRunner;
  /** Starts the source's triggers and the first run. */
  start(): Promise<void>;
  /** What `/status` says of this source. */
  status(): Record<string, unknown>;
  readiness(): { ready: boolean; reason: string };
  manifestCache(): ManifestCache | undefined;
  liveCache(): LiveCache | undefined;
  /** Stops triggers, aborts the current run (in-flight work finishes) within `timeoutMs`, gives back the kept lease. */
  stop(timeoutMs: number): Promise<StopResult>;
}

export interface RunningWatcher {
  url: string;
  history: RunHistory;
  metrics: WatchMetrics;
  runner: SerialRunner;
  /** The parse results kept between runs (none before the first run). */
  manifestCache(): ManifestCache | undefined;
  /** The live state kept between runs (none before the first run). */
  liveCache(): LiveCache | undefined;
  /** Stops triggers, aborts the current run (in-flight work finishes) within `timeoutMs`, closes the port. */
  stop(timeoutMs: number): Promise<StopResult>;
}

/** What the watcher is made of, shared by its run, its port and its stop. */
interface Parts {
  options: SourceLoopOptions;
  log: Logger;
  redact: (text: string) => string;
  shown: (text: string) => string;
  history: RunHistory;
  metrics: WatchMetrics;
  setting: RunSetting;
  isStopping: () => boolean;
}

/** The watcher's parts before anything runs: redaction, history, metrics, events, what a run keeps. */
const assemble = (options: SourceLoopOptions, lifetime: AbortSignal, isStopping: () => boolean): Parts => {
  const clock = options.clock ?? systemClock;
  const log = options.logger;
  const redact = secretRedactor([options.apiKey, options.webhookSecret ?? '', ...(options.secrets ?? [])]);
  /** A line of text a run produced, as it may be shown: no secret, no control character. */
  const shown = (text: string): string => printable(redact(text));
  const metrics = options.metrics ?? new WatchMetrics();
  const history = new RunHistory();
  // The lease's waits and takeovers go to the log as they happen (who holds it, since when).
  const leaseLog: EventSink = {
    emit: (event) => {
      const line = leaseEventLine(event);
      if (line !== undefined) log.info(line, { event: event.type });
    },
  };
  const events = fanOut(metrics.events, leaseLog, ...(options.events ? [options.events] : []));
  const clients = new ClientKeeper(options.createClient ?? createWatchClient, {
    apiKey: options.apiKey,
    events,
    clock,
    ...(options.leaseLingerMs !== undefined ? { leaseLingerMs: options.leaseLingerMs } : {}),
    lifetime,
  });
  const applied = new AppliedRevision(() => history.lastApplied()?.revision, log, shown);
  const setting: RunSetting = {
    resolveConfig: options.resolveConfig,
    planLogFile: options.planLogFile,
    ...(options.planLogRotation ? { planLogRotation: options.planLogRotation } : {}),
    ...(options.manifestCache ? { manifestCache: options.manifestCache } : {}),
    clock,
    monotonic: options.monotonicNow ?? (() => performance.now()),
    events,
    log,
    shown,
    settle: new RemovalSettle(options.pruneSettleMs ?? DEFAULT_PRUNE_SETTLE_MS),
    clients,
    liveMaxAgeMs: options.healIntervalMs > 0 ? options.healIntervalMs : LIVE_STATE_MAX_AGE_MS,
    drift: new DriftWatch({
      ...options.drift,
      source: options.source,
      log,
      registry: metrics.registry,
      redact,
      appliedRevision: () => applied.current(),
      userAgent: `cortex-sync/${VERSION}`,
      now: () => clock.now(),
    }),
    applied,
  };
  return { options, log, redact, shown, history, metrics, setting, isStopping };
};

/**
 * The runner's run: sync the source, reconcile the snapshot, record and log what it came to.
 * `onDeferred` is told when a run waits to confirm removals (the watcher triggers the look).
 */
const runOnce = (parts: Parts, onDeferred: (retryInMs: number) => void) => {
  const { options, log, history, metrics, shown, setting } = parts;
  const warnings = new WarningLog(log, shown);
  let runs = 0;
  return async (trigger: Trigger, signal: AbortSignal): Promise<RunVerdict> => {
    runs += 1;
    const runId = `run-${runs}`;
    const startedAt = setting.clock.now();
    const observedFrom = setting.monotonic();
    let revision: string | undefined;
    let sourceChanged = false;
    let judged: Judged;
    let where: 'source' | 'engine' = 'source';
    try {
      const snapshot = await options.source.sync(signal);
      revision = snapshot.revision;
      sourceChanged = (snapshot.changedFiles?.length ?? 0) > 0;
      log.info('run started', { runId, revision, trigger });
      where = 'engine';
      judged = await reconcileSnapshot(setting, snapshot, signal, observedFrom, trigger);
    } catch (error) {
      judged = judgeError(error, signal, where);
    }
    // A run that did not apply cleanly leaves nothing kept: the next one reads everything.
    if (judged.result !== 'applied') setting.live?.cache.invalidate();
    warnings.note(runId, revision, judged.warnings);
    const durationMs = setting.clock.now() - startedAt;
    const record = runRecordOf({ runId, trigger, revision, startedAt, durationMs }, judged, shown);
    const previous = history.lastApplied();
    // Drift: a heal run found changes though the repository did not change since the last apply.
    const drifted = trigger === 'heal' && previous?.revision === record.revision && !sourceChanged;
    // What the run's plan writes, the ownership record included (the report's count).
    const pending = judged.report?.pending ?? 0;
    metrics.recordRun(record, judged.report, drifted ? pending : 0);
    history.add(record);
    if (record.result === 'deferred' && record.retryInMs !== undefined) onDeferred(record.retryInMs);
    logRun(log, record, judged, pending);
    return judged.verdict;
  };
};

/** The port: probes, `/metrics` (redacted again), `/status`, and the signed webhook. */
const serve = (options: WatcherOptions, parts: Parts, loop: SourceLoop, rejections: RejectionBurst) => {
  const { log, redact, shown, metrics } = parts;
  const { runner } = loop;
  const scrape = createScrapeCache({
    render: async () => redact(await metrics.text()),
    version: () => metrics.version,
  });
  return startServer(options.host, options.port, {
    healthy: () => ({ ok: !parts.isStopping(), reason: parts.isStopping() ? 'shutting down' : 'ok' }),
    ready: () => loop.readiness(),
    metrics: async () => ({ contentType: metrics.contentType, text: await scrape() }),
    status: () => loop.status(),
    onPush: (revision) => {
      log.info('webhook: push received', revision ? { revision: shown(revision) } : {});
      runner.trigger('webhook');
    },
    webhookSecret: options.webhookSecret,
    branch: options.branch,
    deliveries: new RecentDeliveries(),
    bodies: new BodyBudget(),
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    redact,
    onWebhookAnswered: (status, rejected) => {
      metrics.recordWebhook(status);
      if (rejected !== undefined) rejections.note(status, rejected);
    },
  });
};

/** One source's loop: its runner, its triggers (the source's own, the heal interval), nothing listening. */
export const createSourceLoop = (options: SourceLoopOptions): SourceLoop & { parts: Parts } => {
  /** Aborted at stop: a lease kept between runs is renewed no more. */
  const lifetime = new AbortController();
  let stopping = false;
  let healTimer: NodeJS.Timeout | undefined;
  let settleTimer: NodeJS.Timeout | undefined;
  const parts = assemble(options, lifetime.signal, () => stopping);
  const { log, shown, history, metrics, setting } = parts;

  const runner: SerialRunner = new SerialRunner({
    run: runOnce(parts, (retryInMs) => {
      if (stopping) return;
      clearTimeout(settleTimer);
      settleTimer = setTimeout(() => runner.trigger('settle'), retryInMs + 1);
    }),
    ...(options.backoff ? { backoff: options.backoff } : {}),
    onCrash: (error) =>
      log.error('run crashed', { error: shown(error instanceof Error ? error.message : String(error)) }),
    onBackoff: (delayMs, failures) => log.warn('retrying after a failed run', { delayMs, failures }),
  });

  return {
    parts,
    history,
    metrics,
    runner,
    manifestCache: () => setting.parsed?.cache,
    liveCache: () => setting.live?.cache,
    start: async () => {
      await options.source.watch(
        (trigger) => runner.trigger(trigger),
        (error) => log.warn('source check failed', { error: shown(error.message) }),
      );
      if (options.healIntervalMs > 0) {
        healTimer = setInterval(() => runner.trigger('heal'), options.healIntervalMs);
      }
      runner.trigger('startup');
    },
    status: () => ({
      source: options.source.description,
      appliedRevision: history.lastApplied()?.revision ?? null,
      ...runner.state(),
      ...(options.source.state ? { sourceEvents: options.source.state() } : {}),
      ...(setting.drift?.state() ? { drift: setting.drift.state() } : {}),
      runs: history.runs(),
    }),
    readiness: () => history.readiness(runner.state(), stopping),
    stop: async (timeoutMs) => {
      stopping = true;
      clearInterval(healTimer);
      clearTimeout(settleTimer);
      await options.source.close();
      const running = runner.state().running;
      if (running) log.info('stopping: letting the current run finish its in-flight work', { timeoutMs });
      const result = await runner.stop(timeoutMs);
      if (result === 'timed-out') log.warn('stopping: the current run did not finish in time', { timeoutMs });
      // A lease kept after the last apply is given back, so that another apply need not wait for it.
      await setting.clients.releaseLease();
      lifetime.abort();
      await setting.clients.closeClient();
      return result;
    },
  };
};

export const startWatcher = async (options: WatcherOptions): Promise<RunningWatcher> => {
  const loop = createSourceLoop(options);
  const { log } = loop.parts;
  const rejections = new RejectionBurst((msg, fields) => log.warn(msg, fields));
  const server = await serve(options, loop.parts, loop, rejections);

  options.onListening?.(server.url);
  await loop.start();

  return {
    url: server.url,
    history: loop.history,
    metrics: loop.metrics,
    runner: loop.runner,
    manifestCache: () => loop.manifestCache(),
    liveCache: () => loop.liveCache(),
    stop: async (timeoutMs) => {
      rejections.flush();
      const result = await loop.stop(timeoutMs);
      await server.close();
      log.info('stopped', { result });
      return result;
    },
  };
};
