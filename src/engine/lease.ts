/**
 * One apply per source at a time. A lease is a small record in the workspace itself (an entity of
 * the ownership-record type at a deterministic tag per source id): who holds it and until when.
 * The holder renews it while it runs; a crashed holder's lease simply expires. A second apply
 * waits a bounded time for it, then fails naming the holder.
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
import { stringify } from 'yaml';
import { z } from 'zod';
import type { ApiClient } from '../api/types.js';
import { encodePathSegment } from '../api/types.js';
import { CortexSyncError } from '../core/errors.js';
import type { PendingCreates } from '../core/pending-creates.js';
import type { EngineContext } from './context.js';
import type { PlanLogSink } from './plan-log.js';
import { recordingClient } from './recording-client.js';
import { createInventoryType, INVENTORY_ENTITY_TYPE, inventoryTag } from './inventory.js';

/** The lease record's tag for a source id (same slug and hash as its inventory). */
export const leaseTag = (sourceId: string): string =>
  `cortex-sync-lease-${inventoryTag(sourceId).slice(INVENTORY_ENTITY_TYPE.length + 1)}`;

export interface PendingCreate {
  /** `kind/id` of the object being created. */
  key: string;
  /** When the create was recorded (ms since the epoch). */
  since: number;
}

export interface LeaseRecord {
  source: string;
  holder: string;
  /** Milliseconds since the epoch; 0 = released. */
  expiresAt: number;
  pending: PendingCreate[];
}

const leaseDescriptorSchema = z
  .object({
    info: z
      .object({
        'x-cortex-definition': z
          .object({
            lease: z
              .object({
                source: z.string(),
                holder: z.string(),
                expiresAt: z.number(),
                pending: z.array(z.object({ key: z.string(), since: z.number() }).loose()).default([]),
              })
              .loose(),
          })
          .loose(),
      })
      .loose(),
  })
  .loose();

export interface LeaseSettings {
  /** Who is asking: shown to the other apply ("host pid 123 since …"). */
  holder: string;
  /** How long a second apply waits for the lease before failing. */
  waitMs: number;
  /** How long a lease lasts without renewal (a crashed holder's lease expires after this). */
  ttlMs: number;
  /** Wait between writing a claim and reading it back. */
  settleMs: number;
  /** Wait between two looks at a lease someone else holds, or for a pending create. */
  pollMs: number;
  /** How long after it was recorded a create whose outcome is unknown may still appear. */
  pendingWindowMs: number;
}

export const DEFAULT_LEASE_SETTINGS: Omit<LeaseSettings, 'holder'> = {
  waitMs: 120_000,
  ttlMs: 60_000,
  settleMs: 1_000,
  pollMs: 2_000,
  pendingWindowMs: 120_000,
};

/** The lease is held by another apply and did not come free in time. */
export class LeaseHeldError extends CortexSyncError {
  constructor(
    readonly holder: string,
    readonly expiresAt: number,
    waitedMs: number,
  ) {
    super(
      'APPLY_FAILED',
      `another apply of this source is running (held by ${holder}, lease until ${new Date(expiresAt).toISOString()}); waited ${Math.round(waitedMs / 1000)} s. Try again when it has finished`,
    );
    this.name = 'LeaseHeldError';
  }
}

export const readLease = async (client: ApiClient, sourceId: string): Promise<LeaseRecord | undefined> => {
  const tag = leaseTag(sourceId);
  const res = await client.request<unknown>({
    operation: `read apply lease \`${tag}\``,
    method: 'GET',
    path: `/api/v1/catalog/${encodePathSegment(tag)}/openapi`,
    acceptStatus: [404],
  });
  if (res.status === 404) return undefined;
  const parsed = leaseDescriptorSchema.safeParse(res.body);
  if (!parsed.success) return undefined;
  const lease = parsed.data.info['x-cortex-definition'].lease;
  return { source: lease.source, holder: lease.holder, expiresAt: lease.expiresAt, pending: lease.pending };
};

export const writeLease = async (client: ApiClient, record: LeaseRecord): Promise<void> => {
  const tag = leaseTag(record.source);
  await client.request({
    operation: `write apply lease \`${tag}\``,
    method: 'POST',
    path: '/api/v1/open-api',
    body: stringify({
      openapi: '3.0.1',
      info: {
        title: `cortex-sync apply lease: ${record.source}`,
        description: 'Which cortex-sync apply of this source is running. Written by cortex-sync; do not edit.',
        'x-cortex-tag': tag,
        'x-cortex-type': INVENTORY_ENTITY_TYPE,
        'x-cortex-definition': { lease: record },
      },
    }),
    contentType: 'application/openapi;charset=UTF-8',
    idempotent: true,
  });
};

/** Makes sure the record type exists (a first apply creates it; two first applies may race). */
const ensureRecordType = async (client: ApiClient): Promise<void> => {
  const exists = async (): Promise<boolean> => {
    const res = await client.request({
      operation: `read entity type \`${INVENTORY_ENTITY_TYPE}\``,
      method: 'GET',
      path: `/api/v1/catalog/definitions/${INVENTORY_ENTITY_TYPE}`,
      acceptStatus: [404],
    });
    return res.status !== 404;
  };
  if (await exists()) return;
  try {
    await createInventoryType(client);
  } catch (error) {
    if (!(await exists())) throw error;
  }
};

export interface HeldLease {
  /** The pending creates carried by this lease (from earlier runs, and this one's). */
  pending: PendingCreates;
  /** Stops renewing and releases the lease, keeping the creates still pending for the next run. */
  release(): Promise<void>;
}

/**
 * Takes the source's lease: waits while another holder's lease is live (up to `waitMs`), then
 * claims it and confirms the claim. Renews it every third of `ttlMs` until released.
 */
export const acquireLease = async (
  ctx: Pick<EngineContext, 'client' | 'clock' | 'signal'>,
  sourceId: string,
  settings: LeaseSettings,
): Promise<HeldLease> => {
  const { client, clock, signal } = ctx;
  await ensureRecordType(client);
  const started = clock.now();
  let record: LeaseRecord | undefined;
  for (;;) {
    const current = await readLease(client, sourceId);
    const now = clock.now();
    if (current && current.holder !== settings.holder && current.expiresAt > now) {
      if (now - started >= settings.waitMs) throw new LeaseHeldError(current.holder, current.expiresAt, now - started);
      await clock.sleep(Math.min(settings.pollMs, Math.max(1, settings.waitMs - (now - started))), signal);
      continue;
    }
    const claim: LeaseRecord = {
      source: sourceId,
      holder: settings.holder,
      expiresAt: now + settings.ttlMs,
      pending: current?.pending ?? [],
    };
    await writeLease(client, claim);
    await clock.sleep(settings.settleMs, signal);
    const confirmed = await readLease(client, sourceId);
    if (confirmed?.holder === settings.holder) {
      record = { ...claim, pending: confirmed.pending };
      break;
    }
  }
  return holdLease(ctx, record, settings);
};

const holdLease = (
  { client, clock, signal }: Pick<EngineContext, 'client' | 'clock' | 'signal'>,
  initial: LeaseRecord,
  settings: LeaseSettings,
): HeldLease => {
  let record = initial;
  // Every write goes through one chain, so renewals and pending-create updates never interleave.
  let writes: Promise<void> = Promise.resolve();
  const update = (change: (r: LeaseRecord) => LeaseRecord): Promise<void> => {
    const next = writes.then(async () => {
      record = change(record);
      await writeLease(client, record);
    });
    writes = next.catch(() => {});
    return next;
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
      await update((r) => ({ ...r, expiresAt: clock.now() + settings.ttlMs })).catch(() => {});
    }
  })();

  return {
    pending: {
      windowMs: settings.pendingWindowMs,
      pollMs: settings.pollMs,
      now: () => clock.now(),
      sleep: (ms) => clock.sleep(ms, signal),
      since: (key) => record.pending.find((p) => p.key === key)?.since,
      record: (key) =>
        update((r) => ({ ...r, pending: [...r.pending.filter((p) => p.key !== key), { key, since: clock.now() }] })),
      clear: (key) =>
        record.pending.some((p) => p.key === key)
          ? update((r) => ({ ...r, pending: r.pending.filter((p) => p.key !== key) }))
          : Promise.resolve(),
    },
    release: async () => {
      stop.abort();
      await renewing;
      await update((r) => ({ ...r, expiresAt: 0 }));
    },
  };
};

/** A holder name another apply can act on: the host, this run's id, and when it started. */
export const newHolderName = (now: number): string =>
  `${hostname()} run ${randomUUID().slice(0, 8)} since ${new Date(now).toISOString()}`;

/** What `applyUnderLease` needs from a run. */
export interface LeasedRun {
  mode: 'plan' | 'apply';
  sourceId: string | undefined;
  settings: LeaseSettings;
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
  ctx: Pick<EngineContext, 'client' | 'clock' | 'signal'>,
  hasWork: (planned: R) => boolean,
  body: (mode: 'plan' | 'apply', pending: PendingCreates | undefined) => Promise<R>,
): Promise<R> => {
  if (run.mode !== 'apply' || run.sourceId === undefined) return body(run.mode, undefined);
  const planned = await body('plan', undefined);
  if (!hasWork(planned)) return body('apply', undefined);
  const lease = await acquireLease(ctx, run.sourceId, run.settings);
  try {
    return await body('apply', lease.pending);
  } finally {
    await lease.release().catch(() => {});
  }
};

/** The lease settings of a run: defaults, the configured wait, and a holder name unique to this run. */
export const leaseSettingsFor = (config: { leaseWaitMs?: number }, holder: string): LeaseSettings => ({
  ...DEFAULT_LEASE_SETTINGS,
  ...(config.leaseWaitMs !== undefined ? { waitMs: config.leaseWaitMs } : {}),
  holder,
});

/** The run's context with a client that writes the lease's requests to the plan log (as `inventory` steps). */
export const withLoggedLease = <C extends Pick<EngineContext, 'client' | 'clock' | 'signal'>>(
  ctx: C,
  sourceId: string | undefined,
  log: PlanLogSink | undefined,
): C =>
  sourceId === undefined || log === undefined
    ? ctx
    : {
        ...ctx,
        client: recordingClient(
          { client: ctx.client, clock: ctx.clock },
          { kind: 'inventory', id: leaseTag(sourceId), action: 'update' },
          log,
        ).client,
      };
