/**
 * `cortex-sync watch` without its command line: a source, triggers, the serial runner, the HTTP
 * port, metrics and logs, wired around the engine's `reconcile`. Every run re-reads
 * `cortex-sync.yaml` (a commit may change it) and applies; nothing here throws out of the loop.
 */
import type { ApiClient } from '../api/types.js';
import { hasErrors } from '../core/model.js';
import type { Diagnostic } from '../core/model.js';
import type { SyncConfig } from '../engine/config.js';
import { type Clock, fanOut, systemClock, type EventSink } from '../engine/context.js';
import { leaseEventLine } from '../engine/lease-events.js';
import { openPlanLog } from '../engine/plan-log.js';
import { ManifestCache, type ManifestCacheOptions } from '../source/manifest-cache.js';
import { applyOnce, createWatchClient } from './engine-adapter.js';
import { RunHistory, type RunRecord } from './history.js';
import type { Logger } from './log.js';
import { WatchMetrics } from './metrics.js';
import { formatDiagnostic, type Judged, judgeError, judgeResult } from './run-record.js';
import { type BackoffOptions, SerialRunner, type StopResult, type Trigger } from './runner.js';
import { startServer } from './server.js';
import type { Source, SourceSnapshot } from './source.js';

export interface WatcherOptions {
  source: Source;
  /** The configuration for a manifest root (flags, environment, its `cortex-sync.yaml`). */
  resolveConfig: (dir: string) => Promise<{ config: SyncConfig; diagnostics: Diagnostic[] }>;
  apiKey: string;
  host: string;
  port: number;
  /** 0 = off. */
  healIntervalMs: number;
  webhookSecret?: string;
  /** The followed branch, for webhooks (undefined: every push). */
  branch?: string;
  /** JSON Lines of every API operation, appended run after run. */
  planLogFile: string;
  logger: Logger;
  backoff?: Partial<BackoffOptions>;
  clock?: Clock;
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
  /** Stops triggers, aborts the current run (in-flight work finishes) within `timeoutMs`, closes the port. */
  stop(timeoutMs: number): Promise<StopResult>;
}

export const startWatcher = async (options: WatcherOptions): Promise<RunningWatcher> => {
  const clock = options.clock ?? systemClock;
  const log = options.logger;
  const history = new RunHistory();
  const metrics = new WatchMetrics();
  // The lease's waits and takeovers go to the log as they happen (who holds it, since when).
  const leaseLog: EventSink = {
    emit: (event) => {
      const line = leaseEventLine(event);
      if (line !== undefined) log.info(line, { event: event.type });
    },
  };
  const events = fanOut(metrics.events, leaseLog, ...(options.events ? [options.events] : []));
  const makeClient = options.createClient ?? createWatchClient;
  let client: { key: string; client: ApiClient } | undefined;
  /** What was parsed, kept for the life of the watcher: a run re-reads only the files that changed. */
  let parsed: { dir: string; cache: ManifestCache } | undefined;
  let runs = 0;
  let stopping = false;
  let healTimer: NodeJS.Timeout | undefined;

  const clientFor = async (config: SyncConfig): Promise<ApiClient> => {
    const key = `${config.baseUrl} ${config.requestsPerMinute} ${config.concurrency}`;
    if (client?.key === key) return client.client;
    await client?.client.close();
    client = { key, client: makeClient(config, options.apiKey, events, clock) };
    return client.client;
  };

  const reconcileSnapshot = async (snapshot: SourceSnapshot, signal: AbortSignal): Promise<Judged> => {
    const { config, diagnostics } = await options.resolveConfig(snapshot.dir);
    if (hasErrors(diagnostics)) {
      const errors = diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic);
      return { result: 'invalid', verdict: { ok: false, retry: false }, errors, fields: {} };
    }
    // A new manifest root (another checkout path) starts an empty cache.
    if (parsed?.dir !== config.dir) parsed = { dir: config.dir, cache: new ManifestCache(options.manifestCache) };
    const planLog = openPlanLog(options.planLogFile);
    try {
      const ctx = { client: await clientFor(config), clock, signal, events };
      const result = await applyOnce(config, planLog, ctx, parsed.cache);
      return judgeResult(result);
    } finally {
      await planLog.close().catch(() => {});
    }
  };

  const run = async (trigger: Trigger, signal: AbortSignal) => {
    runs += 1;
    const runId = `run-${runs}`;
    const started = clock.now();
    let revision: string | undefined;
    let sourceChanged = false;
    let judged: Judged;
    try {
      const snapshot = await options.source.sync(signal);
      revision = snapshot.revision;
      sourceChanged = (snapshot.changedFiles?.length ?? 0) > 0;
      log.info('run started', { runId, revision, trigger });
      judged = await reconcileSnapshot(snapshot, signal);
    } catch (error) {
      judged = judgeError(error, signal);
    }
    const record: RunRecord = {
      runId,
      trigger,
      ...(revision ? { revision } : {}),
      startedAt: new Date(started).toISOString(),
      durationMs: clock.now() - started,
      result: judged.result,
      ...judged.fields,
      errors: judged.errors,
    };
    const previous = history.lastApplied();
    // Drift: a heal run found changes though the repository did not change since the last apply.
    const drifted = trigger === 'heal' && previous?.revision === revision && !sourceChanged;
    const pending = judged.changes?.filter((c) => c.action !== 'noop').length ?? 0;
    metrics.recordRun(record, judged.changes, drifted ? pending : 0);
    history.add(record);
    const fields = {
      runId,
      ...(revision ? { revision } : {}),
      trigger,
      result: record.result,
      durationMs: record.durationMs,
      ...(record.summary ? { summary: record.summary } : {}),
      ...(record.writes !== undefined ? { writes: record.writes } : {}),
      ...(record.errors.length ? { errors: record.errors } : {}),
    };
    if (judged.verdict.ok) log.info(pending > 0 ? 'run applied changes' : 'run found nothing to change', fields);
    else log.error(`run ${record.result}`, fields);
    return judged.verdict;
  };

  const runner = new SerialRunner({
    run,
    ...(options.backoff ? { backoff: options.backoff } : {}),
    onCrash: (error) => log.error('run crashed', { error: error instanceof Error ? error.message : String(error) }),
    onBackoff: (delayMs, failures) => log.warn('retrying after a failed run', { delayMs, failures }),
  });

  const server = await startServer(options.host, options.port, {
    healthy: () => ({ ok: !stopping, reason: stopping ? 'shutting down' : 'ok' }),
    ready: () => history.readiness(runner.state()),
    metrics: async () => ({ contentType: metrics.contentType, text: await metrics.text() }),
    status: () => ({
      source: options.source.description,
      appliedRevision: history.lastApplied()?.revision ?? null,
      ...runner.state(),
      runs: history.runs(),
    }),
    onPush: (revision) => {
      log.info('webhook: push received', revision ? { revision } : {});
      runner.trigger('webhook');
    },
    webhookSecret: options.webhookSecret,
    branch: options.branch,
    onWebhookRejected: (status, reason) => log.warn('webhook rejected', { status, reason }),
  });

  options.onListening?.(server.url);
  await options.source.watch(
    (trigger) => runner.trigger(trigger),
    (error) => log.warn('source check failed', { error: error.message }),
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
    stop: async (timeoutMs) => {
      stopping = true;
      clearInterval(healTimer);
      await options.source.close();
      const running = runner.state().running;
      if (running) log.info('stopping: letting the current run finish its in-flight work', { timeoutMs });
      const result = await runner.stop(timeoutMs);
      if (result === 'timed-out') log.warn('stopping: the current run did not finish in time', { timeoutMs });
      await client?.client.close();
      await server.close();
      log.info('stopped', { result });
      return result;
    },
  };
};
