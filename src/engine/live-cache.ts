/**
 * The live state a long-lived caller (the watcher) keeps between runs of one source, so that a
 * run after a change reads only what the change touched: the objects the changed manifests
 * declare, read by identity (`live.fetchByIds`), and the ownership records (one read of every
 * source's, and by tag the records of the sources those objects name that the list left out, as a
 * full read does); everything else is as the last run left it. The plan then covers the touched objects
 * alone (`LiveState.scope`) and is the plan a full read would make for them: each object's plan
 * depends only on its own manifest and live state; references, the ownership record's writes and
 * the leftovers are judged over every manifest against the kept state.
 *
 * The whole workspace is read instead (`FullReadReason`) whenever the kept state could mislead:
 * nothing is kept (the first run; after a run that was not a clean apply, or that removed objects),
 * the caller asks (the heal interval), it is older than `maxAgeMs`, the settings changed, an
 * object was removed from the manifests (a prune or a leftover is never judged on a partial read:
 * that run reads everything at once, so removals wait for no timer), an object other objects have
 * as their type changed (its schema judges them), a changed kind has no read by identity or could
 * not be read at the last full read (a key that may not list it: only a whole read judges it), more
 * objects changed than reading them one by one is worth, a manifest now names a kind only read
 * that was not read, another source's record or this source's own changed since, a changed object
 * exists live outside this source's record or with another source's marker, or one it manages is
 * gone live (a 404 where the kept state had it).
 *
 * What is kept is updated from what a run applied: the objects it read, the manifests it applied,
 * and this source's record as it wrote it; an object written since its read is known to exist,
 * and is read again whenever a change touches it again. A run that throws, fails a step, is
 * interrupted, refused, deferred or not approved leaves nothing kept. Plan-mode runs leave it as
 * it was. Kept in memory only: a restarted process starts with a full read.
 */
import { createHash } from 'node:crypto';
import { deepEqual } from '../core/diff.js';
import {
  type DesiredObject,
  type JsonValue,
  type KindName,
  type LiveObject,
  type ObjectKey,
  objectKey,
  type ReconcileResult,
} from '../core/model.js';
import type { FullReadReason, ReadReport } from '../core/outcome.js';
import { othersFingerprint, sortedMeta } from '../ownership/index-records.js';
import type { OwnershipIndex, RecordMeta } from '../ownership/store.js';
import type { SyncConfig } from './config.js';
import { fetchLiveState, type LiveState, readNamedRecords, referencedReadOnlyKinds } from './fetch-live.js';
import type { LiveReader, PlannedPass } from './stages/run.js';
import { typingsOf } from '../core/kind-contract.js';
import { referencesOf } from '../core/references.js';
import type { AnyKindHandler } from '../kinds/types.js';
import { kindsWithoutSingleRead, readByKeys, readStoreUses, unreadableById } from './recheck.js';

/** Objects read one by one cost about two requests each; beyond half a full read's, read everything. */
const REQUESTS_PER_OBJECT = 2;

/** What one clean apply left: enough to plan the next change on. */
interface Kept {
  config: string;
  /** When the whole workspace was last read (the caller's clock). */
  fullReadAt: number;
  /** GET requests of that read. */
  fullReadGets: number;
  desired: Map<ObjectKey, DesiredObject>;
  live: Map<ObjectKey, LiveObject>;
  seen: readonly LiveObject[];
  /** Every other source's records, as read; this source's keys and settings, as last written. */
  others: string;
  ownKeys: ReadonlySet<ObjectKey>;
  ownExists: boolean;
  ownMeta: string;
  referenced: LiveObject[];
  referencedKinds: ReadonlySet<KindName>;
  unreadable: Set<KindName>;
  referencedDiagnostics: LiveState['diagnostics'];
}

/** A full read a run made, and what it cost. */
interface FullRead {
  state: LiveState;
  at: number;
  gets: number;
  readOnly: ReadonlySet<KindName>;
}

/** A configuration as compared between runs (the key left out). */
const configFingerprint = (config: SyncConfig): string => {
  const { apiKey: _key, ...rest } = config;
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex');
};

/** Is `b` the same manifest of the same object as `a` (content and file; lines may move)? */
const sameDeclaration = (a: DesiredObject | undefined, b: DesiredObject): boolean =>
  a !== undefined &&
  (a === b || (a.source.file === b.source.file && deepEqual(a.spec as JsonValue, b.spec as JsonValue)));

interface LiveCacheOptions {
  /** What is kept is read again in full once it is this old (the heal interval). */
  maxAgeMs: number;
  /**
   * The most changed objects a run reads one by one (default: as many as cost at most half the
   * last full read's requests, at two requests each).
   */
  maxObjects?: number;
}

/** One run's use of the cache: its reader, then what it came to. */
export interface LiveCacheRun {
  readLive: LiveReader;
  /** The whole workspace, whatever is kept (the read again under the apply lease, when a re-check failed). */
  readFull: LiveReader;
  /** How the run's first read went (`undefined` until it read). */
  read(): Pick<ReadReport, 'path' | 'reason' | 'objects'> | undefined;
  /** The run ended with `result`; `applied`: the pass whose plan was applied. */
  settle(result: ReconcileResult, applied: PlannedPass | undefined): void;
  /** The run threw. */
  fail(): void;
}

export class LiveCache {
  private kept: Kept | undefined;
  private readonly maxAgeMs: number;
  private readonly maxObjects: number | undefined;

  constructor(options: LiveCacheOptions) {
    this.maxAgeMs = options.maxAgeMs;
    this.maxObjects = options.maxObjects;
  }

  /** Is anything kept (for tests and logs)? */
  get warm(): boolean {
    return this.kept !== undefined;
  }

  /** Forgets what is kept: the next run reads everything. */
  invalidate(): void {
    this.kept = undefined;
  }

  /**
   * A run of `config` at `now`: `full` makes it read everything (the heal interval), `mode` plan
   * leaves what is kept as it is.
   */
  begin(run: { config: SyncConfig; now: number; mode: 'plan' | 'apply'; full?: FullReadReason }): LiveCacheRun {
    const fingerprint = configFingerprint(run.config);
    let read: Pick<ReadReport, 'path' | 'reason' | 'objects'> | undefined;
    const fullReads: FullRead[] = [];
    const kept = this.kept;

    const whyFull = (): FullReadReason | undefined => {
      if (run.full !== undefined) return run.full;
      if (kept === undefined) return 'no-cache';
      if (run.now - kept.fullReadAt >= this.maxAgeMs || run.now < kept.fullReadAt) return 'cache-expired';
      if (kept.config !== fingerprint) return 'config-changed';
      return undefined;
    };

    const fullRead = async (request: Parameters<LiveReader>[0], reason: FullReadReason): Promise<LiveState> => {
      const before = request.client.stats().requestsByMethod.GET;
      const state = await fetchLiveState({ ...request, holders: true });
      fullReads.push({
        state,
        at: run.now,
        gets: request.client.stats().requestsByMethod.GET - before,
        // The kinds only read that this read read (whether or not it found any of their objects).
        readOnly: referencedReadOnlyKinds(request.handlers, request.readOnlyKinds, request.desired),
      });
      read ??= { path: 'full', reason };
      return state;
    };

    const readLive: LiveReader = async (request) => {
      const reason = whyFull();
      if (reason !== undefined || kept === undefined || request.sourceId === undefined)
        return fullRead(request, reason ?? 'no-cache');
      const incremental = await incrementalRead(request, request.sourceId, kept, this.maxObjects);
      if (typeof incremental === 'string') return fullRead(request, incremental);
      read ??= { path: 'incremental', objects: incremental.scope?.size ?? 0 };
      return incremental;
    };

    return {
      readLive,
      readFull: (request) => fullRead(request, 'no-cache'),
      read: () => read,
      fail: () => {
        if (run.mode === 'apply') this.kept = undefined;
      },
      settle: (result, applied) => {
        if (run.mode === 'plan') return;
        this.kept = this.keptAfter(result, applied, fingerprint, kept, fullReads);
      },
    };
  }

  /** What a run leaves kept (see the module comment). */
  private keptAfter(
    result: ReconcileResult,
    applied: PlannedPass | undefined,
    config: string,
    before: Kept | undefined,
    fullReads: readonly FullRead[],
  ): Kept | undefined {
    if (result.status !== 'applied' || applied === undefined || applied.sourceId === undefined) return undefined;
    const report = result.report;
    if (report.interrupted || report.results.some((r) => r.outcome !== 'ok')) return undefined;
    if ((report.inventory ?? []).some((r) => r.outcome !== 'ok')) return undefined;
    if (result.plan.changes.some((c) => c.action === 'delete' || c.action === 'archive')) return undefined;
    if ((result.plan.handOvers ?? []).length > 0) return undefined;
    const sourceId = applied.sourceId;
    const state = applied.state;
    // The plan's own full read, when it made one; else the full read this incremental state rests on.
    const full = fullReads.find((f) => f.state === state);
    const base =
      full ?? (before && { at: before.fullReadAt, gets: before.fullReadGets, readOnly: before.referencedKinds });
    if (base === undefined) return undefined;

    // This source's record as this run left it.
    const index = state.inventories;
    const ownKeys = new Set(index.bySource.get(sourceId) ?? []);
    let ownMeta: RecordMeta | undefined = index.meta.get(sourceId);
    let ownExists = index.bySource.has(sourceId);
    for (const { write } of report.inventory ?? []) {
      for (const key of write.add) ownKeys.add(key);
      for (const key of write.remove) ownKeys.delete(key);
      ownMeta = applied.steps?.meta ?? ownMeta;
      ownExists = true;
    }
    return {
      config,
      fullReadAt: base.at,
      fullReadGets: base.gets,
      desired: new Map(applied.desired.map((o) => [objectKey(o.kind, o.id), o])),
      live: new Map(state.live.map((o) => [objectKey(o.kind, o.id), o])),
      seen: state.seen ?? [],
      others: othersFingerprint(index, sourceId),
      ownKeys,
      ownExists,
      ownMeta: JSON.stringify(sortedMeta(ownMeta)),
      referenced: state.referenced,
      referencedKinds: base.readOnly,
      unreadable: state.unreadable,
      // The warnings of the kinds only read (those about the records come with every read of them).
      referencedDiagnostics: state.diagnostics.filter((d) => !state.ownership.diagnostics.includes(d)),
    };
  }
}

/**
 * The objects `touched` reference whose live state their plan is judged against
 * (`live.referencesReadLive`), of managed kinds read by identity, not touched themselves:
 * each once.
 */
const referencedTargets = (
  touched: readonly DesiredObject[],
  handlers: readonly AnyKindHandler[],
  lookup: (kind: KindName) => AnyKindHandler,
): { kind: KindName; id: string }[] => {
  const managed = new Set(handlers.filter((h) => h.live.fetchByIds !== undefined).map((h) => h.kind));
  const seen = new Set(touched.map((o) => objectKey(o.kind, o.id)));
  const out: { kind: KindName; id: string }[] = [];
  for (const obj of touched) {
    const handler = lookup(obj.kind);
    const readLive = new Set(handler.live.referencesReadLive ?? []);
    for (const ref of referencesOf(handler, obj)) {
      const key = objectKey(ref.kind, ref.id);
      if (!readLive.has(ref.kind) || !managed.has(ref.kind) || seen.has(key)) continue;
      seen.add(key);
      out.push({ kind: ref.kind, id: ref.id });
    }
  }
  return out;
};

const isEmptyIndex = (index: OwnershipIndex): boolean => index.bySource.size + index.ignored.length === 0;

/** Do the records read now say what was kept: the same for every other source, and this one's as written? */
const recordsAsKept = (index: OwnershipIndex, kept: Kept, sourceId: string): boolean => {
  if (othersFingerprint(index, sourceId) !== kept.others) return false;
  const own = index.bySource.get(sourceId);
  if ((own !== undefined) !== kept.ownExists) return false;
  const keys = own ?? new Set<ObjectKey>();
  if (keys.size !== kept.ownKeys.size || [...keys].some((k) => !kept.ownKeys.has(k))) return false;
  return JSON.stringify(sortedMeta(index.meta.get(sourceId))) === kept.ownMeta;
};

type ReadRequest = Parameters<LiveReader>[0];

/** The handler of a kind the request manages. */
const lookupIn =
  (request: ReadRequest) =>
  (kind: KindName): AnyKindHandler => {
    const handler = request.handlers.find((h) => h.kind === kind);
    if (!handler) throw new Error(`no handler for kind ${kind}`);
    return handler;
  };

/**
 * What changed in the manifests since the last clean apply (`now`: every manifest by key;
 * `touched`: those changed), or why a read of those alone would not do.
 */
const touchedSince = (
  request: ReadRequest,
  kept: Kept,
  maxObjects: number | undefined,
): { now: Map<ObjectKey, DesiredObject>; touched: DesiredObject[] } | FullReadReason => {
  const now = new Map<ObjectKey, DesiredObject>();
  for (const obj of request.desired) {
    const key = objectKey(obj.kind, obj.id);
    if (!now.has(key)) now.set(key, obj);
  }
  if ([...kept.desired.keys()].some((key) => !now.has(key))) return 'manifest-removed';
  const touched = [...now].filter(([key, obj]) => !sameDeclaration(kept.desired.get(key), obj)).map(([, o]) => o);
  const types = new Set(request.handlers.flatMap((h) => typingsOf(h).map((typing) => typing.kind)));
  if (touched.some((o) => types.has(o.kind))) return 'type-changed';
  if (kindsWithoutSingleRead(touched, lookupIn(request)).length > 0) return 'no-single-read';
  // A kind the last full read could not read (its list refused): a read by identity cannot
  // tell what that read judges (a declared object of it fails the plan there).
  if (touched.some((o) => kept.unreadable.has(o.kind))) return 'kind-unreadable';
  const most = maxObjects ?? Math.floor(kept.fullReadGets / (REQUESTS_PER_OBJECT * 2));
  if (touched.length > most) return 'many-changes';
  const named = referencedReadOnlyKinds(request.handlers, request.readOnlyKinds, request.desired);
  if ([...named].some((k) => !kept.referencedKinds.has(k))) return 'reference-kinds';
  return { now, touched };
};

/**
 * Every source's record, read now: another source's must not have changed, nor this one's since
 * it was last written.
 */
const recordsNow = async (
  request: ReadRequest,
  sourceId: string,
  kept: Kept,
): Promise<{ ownership: LiveState['ownership']; seen: readonly LiveObject[] } | FullReadReason> => {
  const kinds = new Set(request.handlers.map((h) => h.kind));
  let seen = kept.seen;
  let ownership = await request.store.read(request.client, { sourceId, seen, kinds });
  if (!recordsAsKept(ownership.index, kept, sourceId) && isEmptyIndex(ownership.index)) {
    // No record at all where some were written: the store may not have looked (what it reads
    // them by, e.g. their type, was made after the last full read). Look again, with that read now.
    seen = await readStoreUses(request);
    ownership = await request.store.read(request.client, { sourceId, seen, kinds });
  }
  if (!recordsAsKept(ownership.index, kept, sourceId)) return 'ownership-changed';
  return { ownership, seen };
};

/**
 * The kept live state with the objects read again put in (`scope`: the touched ones), or why it
 * cannot stand: a touched object gone live or outside this source's record, a reference gone.
 */
const withFresh = (
  fresh: ReadonlyMap<ObjectKey, LiveObject>,
  changed: { now: ReadonlyMap<ObjectKey, DesiredObject>; touched: readonly DesiredObject[] },
  referenced: readonly { kind: KindName; id: string }[],
  kept: Kept,
  own: ReadonlySet<ObjectKey>,
  sourceId: string,
): { live: Map<ObjectKey, LiveObject>; scope: Set<ObjectKey> } | FullReadReason => {
  const live = new Map(kept.live);
  const scope = new Set<ObjectKey>();
  for (const obj of changed.touched) {
    const key = objectKey(obj.kind, obj.id);
    const found = fresh.get(key);
    scope.add(key);
    if (found === undefined) {
      // Gone live (deleted in the UI) while kept or recorded: what else went with it is unknown.
      if (kept.live.has(key) || own.has(key)) return 'gone-live';
      live.delete(key);
      continue;
    }
    // Live but not this source's: adopting or taking over is decided on a whole read.
    if (!own.has(key) || (found.owner !== undefined && found.owner !== sourceId)) return 'not-in-record';
    live.set(key, found);
  }
  for (const ref of referenced) {
    const key = objectKey(ref.kind, ref.id);
    const found = fresh.get(key);
    // Gone live since the last full read: what else went with it (and what the plan must put back first) is unknown.
    if (found === undefined) {
      // Kept, or written by the last apply (declared): it existed, so it went.
      if (kept.live.has(key) || changed.now.has(key)) return 'reference-changed';
      continue;
    }
    live.set(key, found);
  }
  return { live, scope };
};

/**
 * The kept state, the records read now and the changed objects read by identity, as a live state
 * whose `scope` is what changed; or why the whole workspace must be read instead.
 */
const incrementalRead = async (
  request: ReadRequest,
  sourceId: string,
  kept: Kept,
  maxObjects: number | undefined,
): Promise<LiveState | FullReadReason> => {
  const changed = touchedSince(request, kept, maxObjects);
  if (typeof changed === 'string') return changed;
  const records = await recordsNow(request, sourceId, kept);
  if (typeof records === 'string') return records;
  const { seen } = records;
  // What the changed objects reference (the scorecard an Initiative names), read again too: the
  // plan judges them against it (a level or rule removed in the UI since the last full read).
  const lookup = lookupIn(request);
  const referenced = referencedTargets(changed.touched, request.handlers, lookup);
  const fresh = await readByKeys({
    client: request.client,
    targets: [...changed.touched, ...referenced],
    lookup,
    handlers: request.handlers,
    desired: request.desired,
    readBefore: [...kept.live.values()],
    index: records.ownership.index,
    sourceId,
  }).catch(unreadableById);
  if (fresh === undefined) return 'no-single-read';
  // The sources a changed object names (its owner, its claimants) whose record the list left out,
  // read by their tags as a full read does: the list can leave one out the same way as at the kept
  // read, so the records' fingerprint alone does not show it (ADR 0004).
  const ownership = await readNamedRecords(
    request.client,
    request.handlers,
    changed.touched,
    [...fresh.values()],
    records.ownership,
    sourceId,
  );
  const own = ownership.index.bySource.get(sourceId) ?? new Set<ObjectKey>();
  const merged = withFresh(fresh, changed, referenced, kept, own, sourceId);
  if (typeof merged === 'string') return merged;
  return {
    live: [...merged.live.values()],
    ownership,
    inventories: ownership.index,
    referenced: kept.referenced,
    unreadable: kept.unreadable,
    diagnostics: [...ownership.diagnostics, ...kept.referencedDiagnostics],
    seen,
    scope: merged.scope,
  };
};
