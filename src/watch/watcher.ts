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
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ApiClient } from '../api/types.js';
import { hasErrors, type Plan } from '../core/model.js';
import type { Diagnostic } from '../core/model.js';
import { printable } from '../core/printable.js';
import type { SyncConfig } from '../engine/config.js';
import { type Clock, createEngineContext, fanOut, systemClock, type EventSink } from '../engine/context.js';
import { leaseEventLine } from '../engine/lease-events.js';
import { LingeringLease } from '../engine/lease-keeper.js';
import { LiveCache } from '../engine/live-cache.js';
import { openPlanLog } from '../engine/plan-log.js';
import { ManifestCache, type ManifestCacheOptions } from '../source/manifest-cache.js';
import { applyOnce, createWatchClient } from './engine-adapter.js';
import { type ChangedObjects, RunHistory, type RunRecord } from './history.js';
import { type Logger, secretRedactor } from './log.js';
import { WatchMetrics } from './metrics.js';
import { DEFAULT_LEASE_LINGER_MS, DEFAULT_PRUNE_SETTLE_MS } from './defaults.js';
import { type RemovalCheck, RemovalSettle } from './removal-settle.js';
import {
  formatDiagnostic,
  type Judged,
  judgeDeferred,
  judgeError,
  judgeInvalidConfig,
  judgeResult,
} from './run-record.js';
import { type BackoffOptions, SerialRunner, type StopResult, type Trigger } from './runner.js';
import { startServer } from './server.js';
import type { Source, SourceSnapshot } from './source.js';
import { RecentDeliveries, RejectionBurst } from './webhook.js';
import { BodyBudget } from './webhook-body.js';
import { createScrapeCache } from './metrics-cache.js';
import { type PlanLogRotation, rotatePlanLog } from './plan-log-rotation.js';

export { DEFAULT_LEASE_LINGER_MS, DEFAULT_PRUNE_SETTLE_MS } from './defaults.js';

/** How old the kept live state may get before a run reads everything, when the heal interval is off. */
export const LIVE_STATE_MAX_AGE_MS = 600_000;

const warningsOf = (diagnostics: readonly Diagnostic[]): string[] =>
  diagnostics.filter((d) => d.severity === 'warning').map(formatDiagnostic);

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

/** The runs that load only the files their source said changed (`ManifestCache.noteChanges`). */
const NOTED_TRIGGERS: ReadonlySet<Trigger> = new Set(['file-change', 'commit', 'webhook']);

export const startWatcher = async (options: WatcherOptions): Promise<RunningWatcher> => {
  const clock = options.clock ?? systemClock;
  const monotonic = options.monotonicNow ?? (() => performance.now());
  const log = options.logger;
  const redact = secretRedactor([options.apiKey, options.webhookSecret ?? '', ...(options.secrets ?? [])]);
  /** A line of text a run produced, as it may be shown: no secret, no control character. */
  const shown = (text: string): string => printable(redact(text));
  const history = new RunHistory();
  const metrics = new WatchMetrics();
  const settle = new RemovalSettle(options.pruneSettleMs ?? DEFAULT_PRUNE_SETTLE_MS);
  // The lease's waits and takeovers go to the log as they happen (who holds it, since when).
  const leaseLog: EventSink = {
    emit: (event) => {
      const line = leaseEventLine(event);
      if (line !== undefined) log.info(line, { event: event.type });
    },
  };
  const events = fanOut(metrics.events, leaseLog, ...(options.events ? [options.events] : []));
  const makeClient = options.createClient ?? createWatchClient;
  /** Aborted at stop: a lease kept between runs is renewed no more. */
  const lifetime = new AbortController();
  let client: { key: string; client: ApiClient; leases: LingeringLease } | undefined;
  /** What was parsed, kept for the life of the watcher: a run re-reads only the files that changed. */
  let parsed: { dir: string; cache: ManifestCache } | undefined;
  /** The live state of the source as the last clean apply left it: a run reads only what changed. */
  let live: { key: string; cache: LiveCache } | undefined;
  const liveMaxAgeMs = options.healIntervalMs > 0 ? options.healIntervalMs : LIVE_STATE_MAX_AGE_MS;
  let runs = 0;
  let stopping = false;
  let healTimer: NodeJS.Timeout | undefined;
  let settleTimer: NodeJS.Timeout | undefined;

  const clientFor = async (config: SyncConfig): Promise<NonNullable<typeof client>> => {
    const key = `${config.baseUrl} ${config.requestsPerMinute} ${config.concurrency}`;
    if (client?.key === key) return client;
    await client?.leases.close();
    await client?.client.close();
    const made = makeClient(config, options.apiKey, events, clock);
    const leases = new LingeringLease({
      lingerMs: options.leaseLingerMs ?? DEFAULT_LEASE_LINGER_MS,
      client: made,
      clock,
      events,
      signal: lifetime.signal,
    });
    client = { key, client: made, leases };
    return client;
  };

  const reconcileSnapshot = async (
    snapshot: SourceSnapshot,
    signal: AbortSignal,
    observedFrom: number,
    trigger: Trigger,
  ): Promise<Judged> => {
    // A run that stops before its load would lose the changes its snapshot named (the source tells
    // each change once): the next load reads everything instead.
    const unread = () => parsed?.cache.noteChanges(['.']);
    const { config, diagnostics } = await options.resolveConfig(snapshot.dir).catch((error: unknown) => {
      unread();
      throw error;
    });
    if (hasErrors(diagnostics)) {
      unread();
      return judgeInvalidConfig(diagnostics);
    }
    // A new manifest root (another checkout path) starts an empty cache.
    if (parsed?.dir !== config.dir) parsed = { dir: config.dir, cache: new ManifestCache(options.manifestCache) };
    // What the source says changed; a source that cannot say (a git checkout) makes the load walk.
    // Its paths are relative to the snapshot's folder: for another manifest root, anything may have changed.
    const sameRoot = resolve(config.dir) === resolve(snapshot.dir);
    parsed.cache.noteChanges(sameRoot ? (snapshot.changedFiles ?? ['.']) : ['.']);
    // Another root, source id or API starts with nothing kept of the live state.
    const liveKey = JSON.stringify([config.dir, config.sourceId ?? '', config.baseUrl]);
    if (live?.key !== liveKey) live = { key: liveKey, cache: new LiveCache({ maxAgeMs: liveMaxAgeMs }) };
    let deferred: RemovalCheck | undefined;
    const cache = parsed.cache;
    const approve = async (plan: Plan): Promise<boolean> => {
      // The plan follows this run's load: did it walk, or look only at the noted paths?
      const check = settle.check(plan, observedFrom, monotonic(), cache.lastLoadWalked);
      if (!check.approved) deferred = check;
      return check.approved;
    };
    if (options.planLogRotation) {
      await rotatePlanLog(options.planLogFile, options.planLogRotation).catch((error: unknown) =>
        log.warn('could not rotate the plan log: appending to it', {
          file: options.planLogFile,
          error: shown(error instanceof Error ? error.message : String(error)),
        }),
      );
    }
    const planLog = openPlanLog(options.planLogFile);
    try {
      const held = await clientFor(config);
      const ctx = createEngineContext(held.client, { clock, signal, events });
      const result = await applyOnce(config, planLog, ctx, {
        session: {
          manifestCache: parsed.cache,
          // A run for a change the source told of (a file event, a commit, a webhook) looks only at
          // what it named; every other run (the first, the heal interval, the look that confirms a
          // removal, a retry) walks every file.
          onlyNotedChanges: NOTED_TRIGGERS.has(trigger),
          liveCache: live.cache,
          // The heal interval's run reads everything (drift anywhere, not only where files changed).
          ...(trigger === 'heal' ? { fullRead: 'heal' as const } : {}),
          leases: held.leases,
        },
        approve,
      });
      const judged =
        deferred && result.run.outcome === 'not-approved'
          ? judgeDeferred(result, deferred)
          : judgeResult(result, { heal: trigger === 'heal' });
      // The settings' own warnings (cortex-sync.yaml) are the revision's too.
      return { ...judged, warnings: [...warningsOf(diagnostics), ...(judged.warnings ?? [])] };
    } finally {
      await planLog.close().catch(() => {});
    }
  };

  const run = async (trigger: Trigger, signal: AbortSignal) => {
    runs += 1;
    const runId = `run-${runs}`;
    const started = clock.now();
    const observedFrom = monotonic();
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
      judged = await reconcileSnapshot(snapshot, signal, observedFrom, trigger);
    } catch (error) {
      judged = judgeError(error, signal, where);
    }
    // A run that did not apply cleanly leaves nothing kept: the next one reads everything.
    if (judged.result !== 'applied') live?.cache.invalidate();
    logWarnings(runId, revision, judged.warnings);
    const { waitingRemovals, changed, ...fields } = judged.fields;
    const record: RunRecord = {
      runId,
      trigger,
      ...(revision ? { revision: shown(revision) } : {}),
      startedAt: new Date(started).toISOString(),
      durationMs: clock.now() - started,
      result: judged.result,
      reason: judged.reason,
      ...fields,
      ...(waitingRemovals ? { waitingRemovals: waitingRemovals.map(shown) } : {}),
      ...(changed ? { changed: shownChanged(changed) } : {}),
      errors: judged.errors.map(shown),
      ...(judged.report?.read ? { read: judged.report.read } : {}),
    };
    const previous = history.lastApplied();
    // Drift: a heal run found changes though the repository did not change since the last apply.
    const drifted = trigger === 'heal' && previous?.revision === record.revision && !sourceChanged;
    // What the run's plan writes, the ownership record included (the report's count).
    const pending = judged.report?.pending ?? 0;
    metrics.recordRun(record, judged.report, drifted ? pending : 0);
    history.add(record);
    if (record.result === 'deferred' && record.retryInMs !== undefined && !stopping) {
      clearTimeout(settleTimer);
      settleTimer = setTimeout(() => runner.trigger('settle'), record.retryInMs + 1);
    }
    const logged = {
      runId,
      ...(record.revision ? { revision: record.revision } : {}),
      trigger,
      result: record.result,
      reason: record.reason,
      durationMs: record.durationMs,
      ...(record.summary ? { summary: record.summary } : {}),
      ...(record.writes !== undefined ? { writes: record.writes } : {}),
      ...(record.changed ? { changed: record.changed } : {}),
      ...(judged.report ? { requests: judged.report.requests.sent } : {}),
      ...(record.read ? { read: record.read } : {}),
      ...(record.waitingRemovals ? { waitingRemovals: record.waitingRemovals, retryInMs: record.retryInMs } : {}),
      ...(record.errors.length ? { errors: record.errors } : {}),
    };
    if (record.result === 'deferred')
      log.info('run waits to confirm removals: their manifests must stay missing', logged);
    else if (judged.verdict.ok) log.info(pending > 0 ? 'run applied changes' : 'run found nothing to change', logged);
    else log.error(`run ${record.result}`, logged);
    return judged.verdict;
  };

  /**
   * Each warning of a revision is logged once, with its `file:line`: a run of the same revision
   * (a retry, the heal interval) logs only the warnings the previous run did not have; another
   * revision logs all of its own.
   */
  let warned: { revision: string; lines: Set<string> } | undefined;
  const logWarnings = (runId: string, revision: string | undefined, warnings: readonly string[] | undefined) => {
    if (warnings === undefined) return;
    const at = revision ?? '';
    const seen = warned?.revision === at ? warned.lines : new Set<string>();
    for (const line of new Set(warnings))
      if (!seen.has(line))
        log.warn('manifest warning', {
          runId,
          ...(revision ? { revision: shown(revision) } : {}),
          warning: shown(line),
        });
    warned = { revision: at, lines: new Set(warnings) };
  };
  /** What a run changed, its names escaped (they come from the repository). */
  const shownChanged = (changed: ChangedObjects): ChangedObjects =>
    Object.fromEntries(
      Object.entries(changed).map(([action, named]) => [action, { count: named.count, first: named.first.map(shown) }]),
    );

  const runner = new SerialRunner({
    run,
    ...(options.backoff ? { backoff: options.backoff } : {}),
    onCrash: (error) =>
      log.error('run crashed', { error: shown(error instanceof Error ? error.message : String(error)) }),
    onBackoff: (delayMs, failures) => log.warn('retrying after a failed run', { delayMs, failures }),
  });

  const rejections = new RejectionBurst((msg, fields) => log.warn(msg, fields));
  const scrape = createScrapeCache({
    render: async () => redact(await metrics.text()),
    version: () => metrics.version,
  });
  const server = await startServer(options.host, options.port, {
    healthy: () => ({ ok: !stopping, reason: stopping ? 'shutting down' : 'ok' }),
    ready: () => history.readiness(runner.state(), stopping),
    metrics: async () => ({ contentType: metrics.contentType, text: await scrape() }),
    status: () => ({
      source: options.source.description,
      appliedRevision: history.lastApplied()?.revision ?? null,
      ...runner.state(),
      ...(options.source.state ? { sourceEvents: options.source.state() } : {}),
      runs: history.runs(),
    }),
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

  options.onListening?.(server.url);
  await options.source.watch(
    (trigger) => runner.trigger(trigger),
    (error) => log.warn('source check failed', { error: shown(error.message) }),
  );
  if (options.healIntervalMs > 0) {
    healTimer = setInterval(() => runner.trigger('heal'), options.healIntervalMs);
  }
  runner.trigger('startup');

  return {
    url: server.url,
    history,
    metrics,
    runner,
    manifestCache: () => parsed?.cache,
    liveCache: () => live?.cache,
    stop: async (timeoutMs) => {
      stopping = true;
      clearInterval(healTimer);
      clearTimeout(settleTimer);
      rejections.flush();
      await options.source.close();
      const running = runner.state().running;
      if (running) log.info('stopping: letting the current run finish its in-flight work', { timeoutMs });
      const result = await runner.stop(timeoutMs);
      if (result === 'timed-out') log.warn('stopping: the current run did not finish in time', { timeoutMs });
      // A lease kept after the last apply is given back, so that another apply need not wait for it.
      await client?.leases.close();
      lifetime.abort();
      await client?.client.close();
      await server.close();
      log.info('stopped', { result });
      return result;
    },
  };
};
