/**
 * The watcher's Prometheus metrics, in a registry of its own (never prom-client's global one, so
 * two watchers in one process, or a test, never share counters). Fed by run records, the run
 * reports of the engine (plan counts, stage durations) and its events (`request`, `ratelimit.paused`).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RunReport } from '../core/outcome.js';
import type { EngineEvent, EventSink } from '../engine/context.js';
import type { RunRecord } from './history.js';

export class WatchMetrics {
  readonly registry = new Registry();
  private changes = 0;
  private readonly runs = new Counter({
    name: 'cortex_sync_reconcile_runs_total',
    help: 'Reconcile runs by result (applied, partial, invalid, refused, failed, interrupted).',
    labelNames: ['result'],
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'cortex_sync_reconcile_duration_seconds',
    help: 'Wall time of a reconcile run (sync, load, read, plan, apply).',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
    registers: [this.registry],
  });
  private readonly stageDuration = new Histogram({
    name: 'cortex_sync_reconcile_stage_duration_seconds',
    help: 'Wall time of a stage of a reconcile run (load, read-live, validate, plan, lease, recheck, approve, apply, record; the reading stages again under the apply lease when the re-check found a change).',
    labelNames: ['stage'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  private readonly reads = new Counter({
    name: 'cortex_sync_reconcile_reads_total',
    help: 'How runs read the live workspace: path "incremental" (only the objects a change touched) or "full" with the reason (no-cache, heal, cache-expired, config-changed, manifest-removed, type-changed, no-single-read, kind-unreadable, many-changes, reference-kinds, ownership-changed, not-in-record, gone-live, reference-changed).',
    labelNames: ['path', 'reason'],
    registers: [this.registry],
  });
  private readonly lastSuccess = new Gauge({
    name: 'cortex_sync_last_success_timestamp_seconds',
    help: 'When the last run that applied without failures finished (Unix time).',
    registers: [this.registry],
  });
  private readonly planObjects = new Gauge({
    name: 'cortex_sync_plan_objects',
    help: 'Objects in the last plan, by kind and action (kind "inventory": writes of the ownership record).',
    labelNames: ['kind', 'action'],
    registers: [this.registry],
  });
  private readonly drift = new Counter({
    name: 'cortex_sync_drift_changes_total',
    help: 'Changes found with no new revision (the workspace drifted from the repository, e.g. an edit in the UI).',
    registers: [this.registry],
  });
  private readonly requests = new Counter({
    name: 'cortex_sync_api_requests_total',
    help: 'API request attempts by method and status (status "error" when no response arrived).',
    labelNames: ['method', 'status'],
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: 'cortex_sync_api_rate_limited_total',
    help: 'API answers with status 429 (too many requests).',
    registers: [this.registry],
  });
  private readonly paused = new Counter({
    name: 'cortex_sync_api_paused_seconds_total',
    help: 'Time the client paused all requests for Retry-After.',
    registers: [this.registry],
  });
  private readonly lastRunOk = new Gauge({
    name: 'cortex_sync_last_run_ok',
    help: 'Whether the last finished run applied the source (1; also while removals wait for their second look) or not (0: invalid, refused, partial, failed, interrupted; why: /status).',
    registers: [this.registry],
  });
  private readonly webhooks = new Counter({
    name: 'cortex_sync_webhook_deliveries_total',
    help: 'Webhook deliveries by the status answered (202 triggered a run; 401 bad or missing signature; 200 ping or replay).',
    labelNames: ['status'],
    registers: [this.registry],
  });
  private readonly revision = new Gauge({
    name: 'cortex_sync_applied_revision_info',
    help: 'The git revision last applied without failures (value 1).',
    labelNames: ['revision'],
    registers: [this.registry],
  });

  /** The engine's events, as metrics. */
  readonly events: EventSink = {
    emit: (event: EngineEvent) => {
      if (event.type === 'request' || event.type === 'ratelimit.paused') this.changes += 1;
      if (event.type === 'request') {
        this.requests.inc({ method: event.method, status: event.status === null ? 'error' : String(event.status) });
        if (event.status === 429) this.rateLimited.inc();
      } else if (event.type === 'ratelimit.paused') {
        this.paused.inc(event.ms / 1000);
      }
    },
  };

  /** A finished run: its record, the engine's report when it got that far, and the changes it found that no revision explains. */
  recordRun(record: RunRecord, report: RunReport | undefined, drift: number): void {
    this.changes += 1;
    this.runs.inc({ result: record.result });
    this.duration.observe(record.durationMs / 1000);
    if (report && report.outcome !== 'invalid') {
      this.planObjects.reset();
      for (const [kind, tally] of Object.entries(report.planned))
        for (const [action, n] of Object.entries(tally ?? {})) if (n > 0) this.planObjects.set({ kind, action }, n);
    }
    for (const s of report?.stages ?? []) this.stageDuration.observe({ stage: s.stage }, s.durationMs / 1000);
    if (report?.read) this.reads.inc({ path: report.read.path, reason: report.read.reason ?? '' });
    if (drift > 0) this.drift.inc(drift);
    this.lastRunOk.set(record.result === 'applied' || record.result === 'deferred' ? 1 : 0);
    if (record.result === 'applied') {
      this.lastSuccess.set(Date.parse(record.startedAt) / 1000 + record.durationMs / 1000);
      if (record.revision) {
        this.revision.reset();
        this.revision.set({ revision: record.revision }, 1);
      }
    }
  }

  /** A webhook delivery was answered with `status`. */
  recordWebhook(status: number): void {
    this.changes += 1;
    this.webhooks.inc({ status: String(status) });
  }

  /** Changes whenever a metric does (a rendering of an unchanged version may be reused). */
  get version(): number {
    return this.changes;
  }

  /** The exposition text of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
