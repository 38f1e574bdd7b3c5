/**
 * One apply per source at a time. A lease is a small record in the workspace itself, kept through
 * the ownership store (`src/ownership/store.ts`; by default an entity at a deterministic tag per
 * source id): who holds it and until when.
 * The holder renews it while it runs; a crashed holder's lease simply expires. A second apply
 * waits a bounded time for it, saying at once who holds it (events `lease.waiting`, then at least
 * every 10 s), then fails naming the holder. Whether a lease is live is judged by the server's
 * clock or by observation, never by one runner's wall clock (`lease-judge.ts`). The operator's
 * `--break-lease` takes it whoever holds it; a holder whose lease was taken notices at its next
 * renewal (it reads before it writes) and starts no further change.
 *
 * The API has no compare-and-swap, so taking the lease is write-then-confirm: write our claim,
 * wait `settleMs` (longer than the time two claims can overlap: a read and a write), read it
 * back; whoever's claim is there then holds it, the other waits again.
 *
 * The lease also carries the source's pending creates (Crossplane's `external-create-pending`):
 * before a POST that has no client-chosen identity (an Initiative), the create is recorded here;
 * it is cleared once the result is known. A later run that finds it pending looks for the object
 * and waits it out (bounded) instead of creating it again.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CortexSyncError } from '../core/errors.js';
import type { PendingCreates } from '../core/pending-creates.js';
import type { ApiClient } from '../api/types.js';
import { OWNERSHIP_STORE } from '../kinds/ownership.js';
import { type LeaseRecord, type LeaseStore, MAX_APPLIED_MARKS } from '../ownership/store.js';
import { type EngineContext, type EngineEvent, monotonicNow, NO_EVENTS } from './context.js';
import { formatLeaseTime, judgeLease, serverClock } from './lease-judge.js';
import type { PlanLogSink } from './plan-log.js';
import { recordingClient } from './recording-client.js';

export type { LeaseRecord, PendingCreate } from '../ownership/store.js';

/** The lease's id for a source in the default store (as the plan log names its writes). */
export const leaseTag = (sourceId: string): string => OWNERSHIP_STORE.lease.id(sourceId);

/** The source's lease record in the default store, if there is one that can be read. */
export const readLease = async (client: ApiClient, sourceId: string): Promise<LeaseRecord | undefined> =>
  (await OWNERSHIP_STORE.lease.read(client, sourceId)).lease;

/** Writes the record to the default store; returns the answer's `Date` header. */
export const writeLease = (client: ApiClient, record: LeaseRecord): Promise<string | undefined> =>
  OWNERSHIP_STORE.lease.write(client, record);

export interface LeaseSettings {
  /** Who is asking: shown to the other apply ("host run 1a2b3c4d"). */
  holder: string;
  /** How long a second apply waits for the lease before failing. */
  waitMs: number;
  /**
   * How long a lease lasts without renewal: a holder renews every third of it, and a record seen
   * unchanged this long is free whatever expiry it claims (a crashed holder's lease ends).
   */
  ttlMs: number;
  /** Wait between writing a claim and reading it back. */
  settleMs: number;
  /** Wait between two looks at a lease someone else holds, or for a pending create. */
  pollMs: number;
  /** How long after it was recorded a create whose outcome is unknown may still appear. */
  pendingWindowMs: number;
  /** A waiting apply says who holds the lease at once, then at least this often. */
  tellEveryMs: number;
  /** Take the lease whoever holds it (the operator's `--break-lease`). */
  breakLease: boolean;
  /**
   * How long a lease let go for waiting applies is theirs alone (seen unchanged this long, anyone
   * may take it: a waiter that is gone holds nothing). Default: five polls.
   */
  handoffMs?: number;
}

/** How long a released record that names waiters is theirs alone (`LeaseSettings.handoffMs`). */
const handoffOf = (settings: LeaseSettings): number => settings.handoffMs ?? 5 * settings.pollMs;

/** At most this many waiters are named in a record (anyone may write one; the newest are kept). */
const MAX_WAITERS = 8;

/** How much earlier than `tellEveryMs` a waiting apply looks again, to say who holds the lease in time. */
const TELL_MARGIN_MS = 1_000;

export const DEFAULT_LEASE_SETTINGS: Omit<LeaseSettings, 'holder'> = {
  waitMs: 120_000,
  ttlMs: 60_000,
  settleMs: 1_000,
  pollMs: 2_000,
  pendingWindowMs: 120_000,
  tellEveryMs: 10_000,
  breakLease: false,
};

/** How the lease was held when the wait ran out. */
interface HeldHow {
  /** Kept idle between runs by a watcher (the record says so). */
  idle?: boolean;
  /** Let go for another apply that waited for it (its holder name). */
  reservedFor?: string;
}

/** The lease is held by another apply and did not come free in time. */
export class LeaseHeldError extends CortexSyncError {
  constructor(
    readonly holder: string,
    readonly expiresAt: number,
    waitedMs: number,
    since?: number,
    how: HeldHow = {},
  ) {
    super('APPLY_FAILED', leaseHeldMessage(holder, expiresAt, Math.round(waitedMs / 1000), since, how));
    this.name = 'LeaseHeldError';
  }
}

/** A holder name as a message shows it: anyone can write one into the record. */
const shortName = (name: string): string => (name.length <= 120 ? name : `${name.slice(0, 120)}…`);

const leaseHeldMessage = (
  holder: string,
  expiresAt: number,
  waited: number,
  since: number | undefined,
  how: HeldHow,
) => {
  const held = `held by ${shortName(holder)}${since !== undefined ? ` since ${formatLeaseTime(since)}` : ''}`;
  if (how.reservedFor !== undefined)
    return `the apply lease of this source was let go for another apply that waited for it first (${shortName(how.reservedFor)}); waited ${waited} s. Try again when it has finished`;
  if (how.idle === true)
    return `the apply lease of this source is kept idle by a watcher between its runs (${held}, lease until ${formatLeaseTime(expiresAt)}); a watcher lets it go within seconds of an apply asking for it, and this apply waited ${waited} s. Try again with a longer lease wait (CORTEX_SYNC_LEASE_WAIT, or leaseWaitSeconds in cortex-sync.yaml); a watcher that is gone stops renewing it, and it frees itself`;
  return `another apply of this source is running (${held}, lease until ${formatLeaseTime(expiresAt)}); waited ${waited} s. Try again when it has finished; if you know it is gone, the operator can pass --break-lease`;
};

/** The lease this apply held was taken by another while it ran: the changes not yet started were left out. */
export class LeaseLostError extends CortexSyncError {
  constructor(
    readonly sourceId: string,
    readonly holder: string,
    options?: { cause?: unknown },
  ) {
    super(
      'APPLY_FAILED',
      `the apply lease of source \`${sourceId}\` was taken by ${holder} while this apply ran (--break-lease): changes not yet started were left out; see the plan log, then apply again`,
      options,
    );
    this.name = 'LeaseLostError';
  }
}

export interface HeldLease {
  /** The pending creates carried by this lease (from earlier runs, and this one's). */
  pending: PendingCreates;
  /** Aborted when another apply took the lease (`--break-lease`) while this one held it. */
  lost: AbortSignal;
  /** Who took it, once `lost` is aborted. */
  lostTo(): string | undefined;
  /**
   * Is it still this holder's? Reads the record: `false` when another apply took it (`lost` is
   * then aborted); a read that fails throws. For a lease kept between runs (`lease-keeper.ts`).
   */
  stillHeld(): Promise<boolean>;
  /** The applies waiting for it, as the record said at this holder's last read of it. */
  waiters(): readonly string[];
  /**
   * Kept idle between runs (true: written at once unless the record says so already, so that a
   * waiting apply asks for it), or busy again (false: said by the next write of the record, a
   * renewal or a pending create).
   */
  setIdle(idle: boolean): Promise<void>;
  /**
   * Stops renewing and releases the lease (unless it was lost), keeping the creates still pending
   * for the next run, and the applies waiting for it (theirs to take first).
   */
  release(): Promise<void>;
  /** Remembers a clean apply in the record (`LeaseRecord.applied`), written at once. */
  markApplied(mark: string): Promise<void>;
}

/** What the lease needs of a run; without `events`, nobody is told about waits. */
type LeaseContext = Pick<EngineContext, 'client' | 'clock' | 'signal'> & Partial<Pick<EngineContext, 'events'>>;

/**
 * Takes the source's lease: waits while another holder's lease is live (up to `waitMs`; see
 * `lease-judge.ts` for what "live" means), saying at once who holds it and then every
 * `tellEveryMs`; with `breakLease`, takes it at once whoever holds it. Then claims it and
 * confirms the claim, and renews it every third of `ttlMs` until released, or until `hold` (by
 * default the context's signal) aborts: a lease kept between runs is held by its keeper's signal,
 * not one run's.
 */
export const acquireLease = async (
  ctx: LeaseContext,
  sourceId: string,
  settings: LeaseSettings,
  store: LeaseStore = OWNERSHIP_STORE.lease,
  hold: AbortSignal = ctx.signal,
): Promise<HeldLease> => {
  const { client, clock, signal } = ctx;
  const events = ctx.events ?? NO_EVENTS;
  const mono = () => monotonicNow(clock);
  const server = serverClock(mono, () => clock.now());
  await store.prepare(client);
  const started = mono();
  let watched: { fingerprint: string; since: number } | undefined;
  let toldAt: number | undefined;
  let taken: Extract<EngineEvent, { type: 'lease.taken' }>['from'];
  let record: LeaseRecord | undefined;
  for (;;) {
    const read = await store.read(client, sourceId);
    const serverNow = server.observe(read.date) !== undefined ? server.now() : undefined;
    const now = mono();
    if (watched?.fingerprint !== read.seen?.fingerprint)
      watched = read.seen && { fingerprint: read.seen.fingerprint, since: now };
    const judged = judgeLease({
      lease: read.seen,
      me: settings.holder,
      serverNow,
      unchangedForMs: watched ? now - watched.since : 0,
      ttlMs: settings.ttlMs,
      handoffMs: handoffOf(settings),
    });
    const seen = read.seen;
    const waited = now - started;
    const about = seen && {
      holder: seen.holder,
      ...(seen.since !== undefined ? { since: seen.since } : {}),
      ...(Number.isFinite(seen.expiresAt) ? { until: seen.expiresAt } : {}),
    };
    if (judged.state === 'held' && !settings.breakLease) {
      const how: HeldHow = {
        ...(seen?.idle === true && judged.reservedFor === undefined ? { idle: true } : {}),
        ...(judged.reservedFor !== undefined ? { reservedFor: judged.reservedFor } : {}),
      };
      if (waited >= settings.waitMs)
        throw new LeaseHeldError(seen?.holder ?? '?', seen?.expiresAt ?? NaN, waited, seen?.since, how);
      // A holder that only keeps the lease idle lets it go for an apply that says it waits (a
      // write that fails is tried again at the next look: the ask is advice, the wait goes on).
      if (how.idle === true && read.lease !== undefined && !(seen?.waiting ?? []).includes(settings.holder)) {
        const asked = askedToLetGo(read.lease, settings.holder, server.now());
        server.observe(await store.write(client, asked).catch(() => undefined));
      }
      // Looked again a little early, so that the line (after the read) is never later than promised.
      const tellAfter = settings.tellEveryMs - Math.min(TELL_MARGIN_MS, settings.tellEveryMs / 10);
      if (toldAt === undefined || now - toldAt >= tellAfter) {
        events.emit({
          type: 'lease.waiting',
          sourceId,
          ...(about ?? { holder: '?' }),
          untilBelieved: judged.untilBelieved,
          waitedMs: waited,
          waitLimitMs: settings.waitMs,
          ...how,
        });
        toldAt = now;
      }
      const nextTell = toldAt + tellAfter - now;
      await clock.sleep(Math.max(1, Math.min(settings.pollMs, nextTell, settings.waitMs - waited)), signal);
      continue;
    }
    if (about && judged.state === 'held') taken = { ...about, why: 'broken' };
    else if (about && judged.state === 'free' && judged.why !== 'none' && judged.why !== 'ours')
      taken = { ...about, why: judged.why };
    const at = server.now();
    const claim: LeaseRecord = {
      source: sourceId,
      holder: settings.holder,
      expiresAt: at + settings.ttlMs,
      since: at,
      beat: 0,
      pending: read.lease?.pending ?? [],
      ...(read.lease?.applied ? { applied: read.lease.applied } : {}),
    };
    server.observe(await store.write(client, claim));
    let confirmed: Awaited<ReturnType<LeaseStore['read']>>;
    try {
      await clock.sleep(settings.settleMs, signal);
      confirmed = await store.read(client, sourceId);
    } catch (error) {
      // Stopped (or the read failed) between the claim and its confirmation: the claim is given back.
      await giveBack(client, store, claim).catch(() => {});
      throw error;
    }
    server.observe(confirmed.date);
    if (confirmed.lease?.holder === settings.holder) {
      record = {
        ...claim,
        pending: confirmed.lease.pending,
        ...(confirmed.lease.applied ? { applied: confirmed.lease.applied } : {}),
      };
      break;
    }
    if (mono() - started >= settings.waitMs)
      throw new LeaseHeldError(confirmed.seen?.holder ?? '?', confirmed.seen?.expiresAt ?? NaN, mono() - started);
  }
  const waitedMs = mono() - started;
  // Taking a lease the last apply released is the usual case, not contention: nothing to say.
  const waited = toldAt !== undefined;
  if (waited || (taken !== undefined && taken.why !== 'released'))
    events.emit({ type: 'lease.taken', sourceId, waitedMs, waited, ...(taken ? { from: taken } : {}) });
  return holdLease({ ...ctx, signal: hold }, record, settings, server, store);
};

/** `lease` with `holder` named among the applies waiting for it (the newest few kept). */
const askedToLetGo = (lease: LeaseRecord, holder: string, now: number): LeaseRecord => ({
  ...lease,
  waiting: [...(lease.waiting ?? []).filter((w) => w.holder !== holder), { holder, since: now }].slice(-MAX_WAITERS),
});

/** Releases a claim that may be in place (a run stopped while taking the lease), unless another holder's is there now. */
const giveBack = async (client: ApiClient, store: LeaseStore, claim: LeaseRecord): Promise<void> => {
  const read = await store.read(client, claim.source);
  if (read.lease?.holder !== claim.holder) return;
  await store.write(client, { ...read.lease, expiresAt: 0 });
};

const holdLease = (
  { client, clock, signal, events = NO_EVENTS }: LeaseContext,
  initial: LeaseRecord,
  settings: LeaseSettings,
  server: ReturnType<typeof serverClock>,
  store: LeaseStore,
): HeldLease => {
  let record = initial;
  const lost = new AbortController();
  let lostTo: string | undefined;
  // Every write goes through one chain, so renewals and pending-create updates never interleave.
  let writes: Promise<void> = Promise.resolve();
  /** Whether the record as last written says idle (a kept run changes only the memory until its next write). */
  let writtenIdle = false;
  const update = (change: (r: LeaseRecord) => LeaseRecord): Promise<void> => {
    const next = writes.then(async () => {
      if (lost.signal.aborted) return;
      record = { ...change(record), beat: (record.beat ?? 0) + 1 };
      const idle = record.idle === true;
      server.observe(await store.write(client, record));
      writtenIdle = idle;
    });
    writes = next.catch(() => {});
    return next;
  };
  /**
   * Still ours? A renewal or release first reads the record: one that names another holder was
   * broken (never overwrite it). A read that fails says nothing: that write is skipped (the next
   * renewal tries again; a lease not released expires).
   */
  const stillOurs = async (): Promise<boolean> => {
    const read = await store.read(client, record.source).catch(() => undefined);
    if (read === undefined) return false;
    return judgeHolder(read);
  };
  const judgeHolder = (read: Awaited<ReturnType<LeaseStore['read']>>): boolean => {
    server.observe(read.date);
    const holder = read.seen?.holder;
    if (holder === undefined || holder === settings.holder) {
      // The applies that asked for it are kept in what this holder writes next.
      const { waiting: _gone, ...rest } = record;
      const waiting = read.lease?.waiting?.slice(-MAX_WAITERS);
      record = waiting?.length ? { ...rest, waiting } : rest;
      return true;
    }
    lostTo = holder;
    events.emit({ type: 'lease.lost', sourceId: record.source, holder });
    lost.abort(new LeaseLostError(record.source, holder));
    return false;
  };

  const stop = new AbortController();
  const renewing = (async () => {
    for (;;) {
      try {
        // A stopped run (its signal aborted) stops renewing too: like a crashed one, its lease expires.
        await clock.sleep(Math.max(1, Math.floor(settings.ttlMs / 3)), AbortSignal.any([stop.signal, signal]));
      } catch {
        return;
      }
      if (await stillOurs()) await update((r) => ({ ...r, expiresAt: server.now() + settings.ttlMs })).catch(() => {});
      if (lost.signal.aborted) return;
    }
  })();

  /** A pending create recorded in the future (a holder's clock ahead) counts from now: it is waited for at most a window. */
  const sinceOf = (key: string): number | undefined => {
    const since = record.pending.find((p) => p.key === key)?.since;
    return since === undefined ? undefined : Math.min(since, server.now());
  };

  return {
    pending: {
      windowMs: settings.pendingWindowMs,
      pollMs: settings.pollMs,
      now: () => server.now(),
      sleep: (ms) => clock.sleep(ms, signal),
      since: sinceOf,
      record: (key) =>
        update((r) => ({ ...r, pending: [...r.pending.filter((p) => p.key !== key), { key, since: server.now() }] })),
      clear: (key) =>
        record.pending.some((p) => p.key === key)
          ? update((r) => ({ ...r, pending: r.pending.filter((p) => p.key !== key) }))
          : Promise.resolve(),
    },
    lost: lost.signal,
    lostTo: () => lostTo,
    stillHeld: async () => {
      if (lost.signal.aborted) return false;
      return judgeHolder(await store.read(client, record.source));
    },
    waiters: () => (record.waiting ?? []).map((w) => w.holder),
    setIdle: async (idle) => {
      const { idle: _was, ...rest } = record;
      record = idle ? { ...rest, idle: true } : rest;
      if (idle && !writtenIdle) await update((r) => r);
    },
    markApplied: (mark) =>
      update((r) => ({
        ...r,
        applied: [...(r.applied ?? []), { mark, at: server.now() }].slice(-MAX_APPLIED_MARKS),
      })),
    release: async () => {
      stop.abort();
      await renewing;
      if (lost.signal.aborted || !(await stillOurs())) return;
      await update(({ idle: _idle, ...r }) => ({ ...r, expiresAt: 0 }));
    },
  };
};

/** A holder name another apply can act on: the host and this run's id (when it took the lease is in the record). */
export const newHolderName = (): string => `${hostname()} run ${randomUUID().slice(0, 8)}`;

/** What `applyUnderLease` needs from a run. */
interface LeasedRun {
  mode: 'plan' | 'apply';
  sourceId: string | undefined;
  settings: LeaseSettings;
  /** Where the lease is kept (default: the registry's store). */
  store?: LeaseStore;
}

/**
 * Runs an apply under the source's lease, taking it only when there is something to write: the
 * run is first planned without it (a refused or invalid plan writes nothing, not even a lease),
 * and when the plan has work, planned again and applied under the lease (so the plan applied is
 * the one read while no other apply of the source runs) with the lease's pending creates. A
 * plan, a run without a source id, a refused plan or an apply with nothing to write runs without
 * a lease (the price: an apply reads the workspace twice).
 */
export const applyUnderLease = async <R>(
  run: LeasedRun,
  ctx: LeaseContext,
  hasWork: (planned: R) => boolean,
  body: (mode: 'plan' | 'apply', pending: PendingCreates | undefined, lost: AbortSignal | undefined) => Promise<R>,
): Promise<R> => {
  if (run.mode !== 'apply' || run.sourceId === undefined) return body(run.mode, undefined, undefined);
  const planned = await body('plan', undefined, undefined);
  if (!hasWork(planned)) return body('apply', undefined, undefined);
  const lease = await acquireLease(ctx, run.sourceId, run.settings, run.store);
  let result: R;
  try {
    result = await body('apply', lease.pending, lease.lost);
  } catch (error) {
    const lostTo = lease.lostTo();
    throw lostTo !== undefined ? new LeaseLostError(run.sourceId, lostTo, { cause: error }) : error;
  } finally {
    await lease.release().catch(() => {});
  }
  // Another apply broke this one's lease: what was written is in the plan log and the record; the
  // run fails rather than report a complete apply.
  const lostTo = lease.lostTo();
  if (lostTo !== undefined) throw new LeaseLostError(run.sourceId, lostTo);
  return result;
};

/** The lease settings of a run: defaults, the configured wait, `--break-lease`, and a holder name unique to this run. */
export const leaseSettingsFor = (
  config: { leaseWaitMs?: number; breakLease?: boolean },
  holder: string,
): LeaseSettings => ({
  ...DEFAULT_LEASE_SETTINGS,
  ...(config.leaseWaitMs !== undefined ? { waitMs: config.leaseWaitMs } : {}),
  breakLease: config.breakLease === true,
  holder,
});

/** The run's context with a client that writes the lease's requests to the plan log (as `inventory` steps). */
export const withLoggedLease = <C extends LeaseContext>(
  ctx: C,
  sourceId: string | undefined,
  log: PlanLogSink | undefined,
  store: LeaseStore = OWNERSHIP_STORE.lease,
): C =>
  sourceId === undefined || log === undefined
    ? ctx
    : {
        ...ctx,
        client: recordingClient(
          { client: ctx.client, clock: ctx.clock },
          { kind: 'inventory', id: store.id(sourceId), action: 'update' },
          log,
        ).client,
      };
