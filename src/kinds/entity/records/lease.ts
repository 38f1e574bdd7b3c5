/**
 * The apply lease's record stored as an entity (of the ownership-record type at a tag derived
 * from the source id): reading and writing it. Every read and write returns the answer's `Date`
 * header: the server's clock is the one the lease's times are judged by (`engine/lease-judge.ts`).
 * A record that does not parse is reported as `unreadable`, never as absent. The engine reaches
 * this through the ownership port (`src/ownership/store.ts`).
 */
import { stringify } from 'yaml';
import { z } from 'zod';
import type { ApiClient } from '../../../api/types.js';
import { encodePathSegment } from '../../../api/types.js';
import type { LeaseRead, LeaseRecord } from '../../../ownership/store.js';
import { createInventoryType, INVENTORY_ENTITY_TYPE, inventoryTag, recordTypeExists } from './inventory.js';

export type { LeaseRead, LeaseRecord, LeaseWaiter, PendingCreate } from '../../../ownership/store.js';

/** The lease record's tag for a source id (same slug and hash as its inventory). */
export const leaseTag = (sourceId: string): string =>
  `cortex-sync-lease-${inventoryTag(sourceId).slice(INVENTORY_ENTITY_TYPE.length + 1)}`;

const leaseSchema = z
  .object({
    source: z.string(),
    holder: z.string(),
    expiresAt: z.number(),
    since: z.number().optional().catch(undefined),
    beat: z.number().optional().catch(undefined),
    idle: z.boolean().optional().catch(undefined),
    waiting: z
      .array(z.object({ holder: z.string(), since: z.number() }).loose())
      .optional()
      .catch(undefined),
    pending: z.array(z.object({ key: z.string(), since: z.number() }).loose()).default([]),
    applied: z
      .array(z.object({ mark: z.string(), at: z.number() }).loose())
      .optional()
      .catch(undefined),
  })
  .loose();

const leaseDescriptorSchema = z
  .object({ info: z.object({ 'x-cortex-definition': z.object({ lease: z.unknown() }).loose() }).loose() })
  .loose();

export const readLeaseAnswer = async (client: ApiClient, sourceId: string): Promise<LeaseRead> => {
  const tag = leaseTag(sourceId);
  const res = await client.request<unknown>({
    operation: `read apply lease \`${tag}\``,
    method: 'GET',
    path: `/api/v1/catalog/${encodePathSegment(tag)}/openapi`,
    acceptStatus: [404],
  });
  const date = res.headers.date;
  if (res.status === 404) return { lease: undefined, seen: undefined, date };
  const descriptor = leaseDescriptorSchema.safeParse(res.body);
  const raw = descriptor.success ? descriptor.data.info['x-cortex-definition'].lease : res.body;
  const fingerprint = JSON.stringify(raw) ?? 'undefined';
  const parsed = leaseSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      lease: undefined,
      seen: { holder: 'an unreadable lease record', expiresAt: NaN, fingerprint, unreadable: true },
      date,
    };
  }
  const l = parsed.data;
  const lease: LeaseRecord = {
    source: l.source,
    holder: l.holder,
    expiresAt: l.expiresAt,
    ...(l.since !== undefined ? { since: l.since } : {}),
    ...(l.beat !== undefined ? { beat: l.beat } : {}),
    ...(l.idle === true ? { idle: true } : {}),
    ...(l.waiting?.length ? { waiting: l.waiting.map((w) => ({ holder: w.holder, since: w.since })) } : {}),
    pending: l.pending,
    ...(l.applied?.length ? { applied: l.applied.map((a) => ({ mark: a.mark, at: a.at })) } : {}),
  };
  return {
    lease,
    seen: {
      holder: l.holder,
      expiresAt: l.expiresAt,
      ...(l.since !== undefined ? { since: l.since } : {}),
      ...(l.idle === true ? { idle: true } : {}),
      ...(l.waiting?.length ? { waiting: l.waiting.map((w) => w.holder) } : {}),
      fingerprint,
    },
    date,
  };
};

/** Writes the record; returns the answer's `Date` header. */
export const writeLease = async (client: ApiClient, record: LeaseRecord): Promise<string | undefined> => {
  const tag = leaseTag(record.source);
  const res = await client.request({
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
  return res.headers.date;
};

/** Makes sure the record type exists (a first apply creates it; two first applies may race). */
export const ensureRecordType = async (client: ApiClient): Promise<void> => {
  if (await recordTypeExists(client)) return;
  try {
    await createInventoryType(client);
  } catch (error) {
    if (!(await recordTypeExists(client))) throw error;
  }
};
