/**
 * One run of the watcher against the engine: the client and apply lease kept between runs, the
 * parse results and the live state kept per source, the settle check on removals, and the plan
 * log. `reconcileSnapshot` turns a synced snapshot into what the run came to (`Judged`).
 */
import { resolve } from 'node:path';
import type { ApiClient } from '../api/types.js';
import { hasErrors, type Diagnostic, type Plan } from '../core/model.js';
import type { SyncConfig } from '../engine/config.js';
import { type Clock, createEngineContext, type EventSink } from '../engine/context.js';
import { LingeringLease } from '../engine/lease-keeper.js';
import { LiveCache } from '../engine/live-cache.js';
import { openPlanLog } from '../engine/plan-log.js';
import { ManifestCache, type ManifestCacheOptions } from '../source/manifest-cache.js';
import { DEFAULT_LEASE_LINGER_MS } from './defaults.js';
import { applyOnce } from './engine-adapter.js';
import type { Logger } from './log.js';
import { type PlanLogRotation, rotatePlanLog } from './plan-log-rotation.js';
import { type AppliedRevision, watchMarkOf } from './applied-revision.js';
import { type DriftHeld, type DriftWatch, judgeDriftHeld } from './drift-proposals.js';
import type { RemovalCheck, RemovalSettle } from './removal-settle.js';
import { formatDiagnostic, type Judged, judgeDeferred, judgeInvalidConfig, judgeResult } from './run-record.js';
import type { Trigger } from './runner.js';
import type { SourceSnapshot } from './source.js';

/** The runs that load only the files their source said changed (`ManifestCache.noteChanges`). */
const NOTED_TRIGGERS: ReadonlySet<Trigger> = new Set(['file-change', 'commit', 'webhook']);

const warningsOf = (diagnostics: readonly Diagnostic[]): string[] =>
  diagnostics.filter((d) => d.severity === 'warning').map(formatDiagnostic);

/** Builds the API client for a configuration (the watcher's option, or the real one). */
type MakeClient = (config: SyncConfig, apiKey: string, events: EventSink, clock: Clock) => ApiClient;

interface HeldClient {
  key: string;
  client: ApiClient;
  leases: LingeringLease;
}

/**
 * The API client and its apply lease, kept between runs while the API settings stay the same;
 * another base URL, rate or concurrency closes them and starts anew.
 */
export class ClientKeeper {
  private held: HeldClient | undefined;

  constructor(
    private readonly make: MakeClient,
    private readonly settings: {
      apiKey: string;
      events: EventSink;
      clock: Clock;
      leaseLingerMs?: number;
      /** Aborted at stop: a lease kept between runs is renewed no more. */
      lifetime: AbortSignal;
    },
  ) {}

  async clientFor(config: SyncConfig): Promise<HeldClient> {
    const key = `${config.baseUrl} ${config.requestsPerMinute} ${config.concurrency}`;
    if (this.held?.key === key) return this.held;
    await this.held?.leases.close();
    await this.held?.client.close();
    const { apiKey, events, clock, lifetime } = this.settings;
    const made = this.make(config, apiKey, events, clock);
    const leases = new LingeringLease({
      lingerMs: this.settings.leaseLingerMs ?? DEFAULT_LEASE_LINGER_MS,
      client: made,
      clock,
      events,
      signal: lifetime,
    });
    this.held = { key, client: made, leases };
    return this.held;
  }

  /** Gives back a lease kept after the last apply, so that another apply need not wait for it. */
  async releaseLease(): Promise<void> {
    await this.held?.leases.close();
  }

  async closeClient(): Promise<void> {
    await this.held?.client.close();
  }
}

/** What one run needs from the watcher, and what is kept between runs. */
export interface RunSetting {
  resolveConfig: (dir: string) => Promise<{ config: SyncConfig; diagnostics: Diagnostic[] }>;
  planLogFile: string;
  planLogRotation?: PlanLogRotation;
  manifestCache?: ManifestCacheOptions;
  clock: Clock;
  monotonic: () => number;
  events: EventSink;
  log: Logger;
  /** A line of text as it may be shown: no secret, no control character. */
  shown: (text: string) => string;
  settle: RemovalSettle;
  clients: ClientKeeper;
  liveMaxAgeMs: number;
  /** What was parsed, kept for the life of the watcher: a run re-reads only the files that changed. */
  parsed?: { dir: string; cache: ManifestCache };
  /** The live state of the source as the last clean apply left it: a run reads only what changed. */
  live?: { key: string; cache: LiveCache };
  /** What a heal run does with drift (`--on-drift`): held runs write nothing. */
  drift?: DriftWatch;
  /** The revision last applied, read from the source's lease record while this process applied none. */
  applied?: AppliedRevision;
}

/** The plan log rotated before a run, when asked; a failure to rotate only appends to it. */
const rotateIfAsked = async (at: RunSetting): Promise<void> => {
  if (!at.planLogRotation) return;
  await rotatePlanLog(at.planLogFile, at.planLogRotation).catch((error: unknown) =>
    at.log.warn('could not rotate the plan log: appending to it', {
      file: at.planLogFile,
      error: at.shown(error instanceof Error ? error.message : String(error)),
    }),
  );
};

/**
 * The parse results and live state this run starts from: a new manifest root starts an empty
 * parse cache; another root, source id or API starts with nothing kept of the live state.
 */
const keptFor = (
  at: RunSetting,
  config: SyncConfig,
  snapshot: SourceSnapshot,
): { parsed: ManifestCache; live: LiveCache } => {
  // A new manifest root (another checkout path) starts an empty cache.
  if (at.parsed?.dir !== config.dir) at.parsed = { dir: config.dir, cache: new ManifestCache(at.manifestCache) };
  // What the source says changed; a source that cannot say (a git checkout) makes the load walk.
  // Its paths are relative to the snapshot's folder: for another manifest root, anything may have changed.
  const sameRoot = resolve(config.dir) === resolve(snapshot.dir);
  at.parsed.cache.noteChanges(sameRoot ? (snapshot.changedFiles ?? ['.']) : ['.']);
  // Another root, source id or API starts with nothing kept of the live state.
  const liveKey = JSON.stringify([config.dir, config.sourceId ?? '', config.baseUrl]);
  if (at.live?.key !== liveKey) at.live = { key: liveKey, cache: new LiveCache({ maxAgeMs: at.liveMaxAgeMs }) };
  return { parsed: at.parsed.cache, live: at.live.cache };
};

/** One apply of a synced snapshot: its settings, the kept caches, the settle check on removals. */
export const reconcileSnapshot = async (
  at: RunSetting,
  snapshot: SourceSnapshot,
  signal: AbortSignal,
  observedFrom: number,
  asked: Trigger,
): Promise<Judged> => {
  // A run that stops before its load would lose the changes its snapshot named (the source tells
  // each change once): the next load reads everything instead.
  const unread = () => at.parsed?.cache.noteChanges(['.']);
  const { config, diagnostics } = await at.resolveConfig(snapshot.dir).catch((error: unknown) => {
    unread();
    throw error;
  });
  if (hasErrors(diagnostics)) {
    unread();
    return judgeInvalidConfig(diagnostics);
  }
  const kept = keptFor(at, config, snapshot);
  const held = await at.clients.clientFor(config);
  // After a restart, a run at the commit the lease record says was applied is a heal run.
  const trigger = at.applied ? await at.applied.runAs(asked, snapshot, config, held.client) : asked;
  let deferred: RemovalCheck | undefined;
  let driftHeld: DriftHeld | undefined;
  const approve = async (plan: Plan): Promise<boolean> => {
    if (trigger === 'heal' && at.drift) {
      driftHeld = await at.drift.judge(plan, config, snapshot);
      if (driftHeld) return false;
    }
    // The plan follows this run's load: did it walk, or look only at the noted paths?
    const check = at.settle.check(plan, observedFrom, at.monotonic(), kept.parsed.lastLoadWalked);
    if (!check.approved) deferred = check;
    return check.approved;
  };
  await rotateIfAsked(at);
  const planLog = openPlanLog(at.planLogFile);
  try {
    const ctx = createEngineContext(held.client, { clock: at.clock, signal, events: at.events });
    const result = await applyOnce(config, planLog, ctx, {
      session: {
        manifestCache: kept.parsed,
        // A run for a change the source told of (a file event, a commit, a webhook) looks only at
        // what it named; every other run (the first, the heal interval, the look that confirms a
        // removal, a retry) walks every file.
        onlyNotedChanges: NOTED_TRIGGERS.has(trigger),
        liveCache: kept.live,
        // The heal interval's run reads everything (drift anywhere, not only where files changed).
        ...(trigger === 'heal' ? { fullRead: 'heal' as const } : {}),
        leases: held.leases,
      },
      approve,
      // Remembered in the lease record, so that a restart at this commit knows it was applied.
      ...(snapshot.commit === true ? { applyMark: () => watchMarkOf(snapshot.revision, config) } : {}),
    });
    const judged =
      driftHeld && result.run.outcome === 'not-approved'
        ? judgeDriftHeld(result, driftHeld, warningsOf(result.diagnostics))
        : deferred && result.run.outcome === 'not-approved'
          ? judgeDeferred(result, deferred)
          : judgeResult(result, { heal: trigger === 'heal' });
    // The settings' own warnings (cortex-sync.yaml) are the revision's too.
    return { ...judged, warnings: [...warningsOf(diagnostics), ...(judged.warnings ?? [])] };
  } finally {
    await planLog.close().catch(() => {});
  }
};
