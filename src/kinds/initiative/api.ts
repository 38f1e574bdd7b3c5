/**
 * Initiative API calls. `POST /api/v1/initiatives` is not idempotent (every call creates a new
 * Initiative) and a response can be lost or come late, so a create looks the name up first, is
 * recorded as pending before its POST, and is never sent twice: a repeated, retried or
 * concurrent apply never creates a second Initiative (see `createInitiative`).
 */
import type { ApiClient } from '../../api/types.js';
import { encodePathSegment } from '../../api/types.js';
import { CortexSyncError, isApiError } from '../../core/errors.js';
import type { PendingCreates } from '../../core/pending-creates.js';
import { initiativeRequestBody, liveEqualsManifest } from './normalize.js';
import type { InitiativeManifest, LiveInitiative } from './schema.js';
import { liveInitiativeSchema } from './schema.js';
import { readOneOrAbsent, readPagedList } from '../shared/api-reads.js';

/** How many times a create looks the name up and finds it vanished before its PUT (a race with a delete). */
const MAX_CREATE_ATTEMPTS = 3;

/**
 * Reads every Initiative. The list hides drafts and expired Initiatives unless asked, so both
 * are asked for: otherwise a manifest of a draft would look absent and be created again.
 */
export const listInitiatives = (client: ApiClient): Promise<LiveInitiative[]> =>
  readPagedList(client, {
    request: {
      operation: 'list Initiatives',
      method: 'GET',
      path: '/api/v1/initiatives',
      query: { includeDrafts: true, includeExpired: true },
    },
    list: 'initiatives',
    item: liveInitiativeSchema,
    itemName: 'an Initiative',
  });

/** The error for two live Initiatives sharing a name: the controller does not guess which one is meant. */
export const duplicateNameError = (name: string, cids: readonly string[]): CortexSyncError =>
  new CortexSyncError(
    'PLAN',
    `${cids.length} live Initiatives are named "${name}" (cids ${cids.join(', ')}); an Initiative is identified by its name, so rename or delete all but one in Cortex`,
  );

/** The one live Initiative named `name`, if any; throws a `PLAN` error when several share it. */
const findInitiativeByName = (live: readonly LiveInitiative[], name: string): LiveInitiative | undefined => {
  const matches = live.filter((i) => i.name === name);
  if (matches.length > 1)
    throw duplicateNameError(
      name,
      matches.map((i) => i.cid),
    );
  return matches[0];
};

/**
 * What a failed POST may have done. `unknown`: no answer reached us (a lost response, a timeout,
 * a gateway that gave up waiting: 502/504), so the server may still create it. `answered`: the
 * server answered 5xx, so it has finished with the request: one look settles it. Anything else was
 * refused and created nothing.
 */
const failedCreateOutcome = (error: unknown): 'unknown' | 'answered' | 'refused' => {
  if (!isApiError(error)) return 'refused';
  if (error.code === 'NETWORK' || error.code === 'TIMEOUT') return 'unknown';
  if (error.status === 502 || error.status === 504) return 'unknown';
  return error.status !== undefined && error.status >= 500 ? 'answered' : 'refused';
};

/**
 * Replaces the Initiative `cid` with the manifest. Returns false when it does not exist (404).
 * A PUT is a full replace, so it is safe to retry (the client does).
 */
const putInitiative = async (client: ApiClient, cid: string, spec: InitiativeManifest): Promise<boolean> => {
  const res = await client.request({
    operation: `update Initiative "${spec.name}"`,
    method: 'PUT',
    path: `/api/v1/initiatives/${encodePathSegment(cid)}`,
    body: initiativeRequestBody(spec),
    idempotent: true,
    acceptStatus: [404],
  });
  return res.status !== 404;
};

/** The key under which a create of this Initiative is recorded as pending. */
export const pendingKey = (name: string): string => `initiative/${name}`;

/**
 * Looks for the Initiative by name until it appears or `until` passes (at least once). Used when a
 * create's outcome is unknown: the server may still be processing a POST whose answer was lost.
 */
const lookUntil = async (
  client: ApiClient,
  name: string,
  pending: PendingCreates | undefined,
  until: number,
): Promise<LiveInitiative | undefined> => {
  for (;;) {
    const found = findInitiativeByName(await listInitiatives(client), name);
    if (found || pending === undefined || pending.now() >= until) return found;
    await pending.sleep(Math.max(1, Math.min(pending.pollMs, until - pending.now())));
  }
};

/** Brings an existing Initiative in line with the manifest. False when it vanished meanwhile. */
const settle = async (client: ApiClient, existing: LiveInitiative, spec: InitiativeManifest): Promise<boolean> =>
  liveEqualsManifest(existing, spec) || putInitiative(client, existing.cid, spec);

/**
 * The Initiative with this cid (`GET /api/v1/initiatives/{cid}`), `undefined` on a 404: the read
 * by identity that confirms an Initiative a list left out. Any other failure is thrown.
 */
export const getInitiative = (client: ApiClient, cid: string): Promise<LiveInitiative | undefined> =>
  readOneOrAbsent(client, {
    request: {
      operation: `read Initiative ${cid}`,
      method: 'GET',
      path: `/api/v1/initiatives/${encodePathSegment(cid)}`,
    },
    item: liveInitiativeSchema,
    itemName: 'an Initiative',
  });

/** The cid of a create's answer, when it has one. */
const cidOfAnswer = (body: unknown): string | undefined => {
  const cid = (body as { cid?: unknown } | null | undefined)?.cid;
  return typeof cid === 'string' && cid !== '' ? cid : undefined;
};

/**
 * Creates the Initiative, unless one with its name already exists (then it is updated by its cid).
 * `POST /api/v1/initiatives` has no client-chosen identity, so a POST is never repeated blindly:
 * - a create an earlier run recorded as pending (its outcome unknown: a timeout, a kill) is looked
 *   for by name until its window has passed, and only then created again;
 * - before the POST the create is recorded as pending in the workspace (`pending`);
 * - after a timeout or a lost response nothing is sent again: the name is looked up until the
 *   window passes; if it still is not there, the create fails and stays pending, so the next run
 *   looks before it creates.
 * Without `pending` (no lease) the same holds, with one look instead of a bounded wait.
 */
export const createInitiative = async (
  client: ApiClient,
  spec: InitiativeManifest,
  pending?: PendingCreates,
): Promise<string | undefined> => {
  const key = pendingKey(spec.name);
  const since = pending?.since(key);
  if (pending !== undefined && since !== undefined) {
    const earlier = await lookUntil(client, spec.name, pending, since + pending.windowMs);
    if (earlier && (await settle(client, earlier, spec))) {
      await pending.clear(key);
      return earlier.cid;
    }
  }
  for (let attempt = 1; attempt <= MAX_CREATE_ATTEMPTS; attempt++) {
    const existing = findInitiativeByName(await listInitiatives(client), spec.name);
    if (existing) {
      if (await settle(client, existing, spec)) {
        await pending?.clear(key);
        return existing.cid;
      }
      continue; // deleted between the read and the PUT: look again
    }
    await pending?.record(key);
    let answer: unknown;
    try {
      ({ body: answer } = await client.request<unknown>({
        operation: `create Initiative "${spec.name}"`,
        method: 'POST',
        path: '/api/v1/initiatives',
        body: initiativeRequestBody(spec),
        idempotent: false,
      }));
    } catch (error) {
      const outcome = failedCreateOutcome(error);
      if (outcome === 'refused') {
        await pending?.clear(key);
        throw error;
      }
      // The server may have created it (or, without an answer, may still): never POST again; look
      // for it instead, once after a 5xx answer, until the pending window passes without one.
      const now = pending?.now() ?? 0;
      const until = outcome === 'unknown' ? now + (pending?.windowMs ?? 0) : now;
      const created = await lookUntil(client, spec.name, pending, until);
      if (created && (await settle(client, created, spec))) {
        await pending?.clear(key);
        return created.cid;
      }
      if (outcome === 'answered') {
        // The server finished with the request and nothing was created: an ordinary API failure.
        await pending?.clear(key);
        throw error;
      }
      throw new CortexSyncError(
        'APPLY_FAILED',
        `create Initiative "${spec.name}": the outcome is unknown (${error instanceof Error ? error.message : String(error)}) and it has not appeared; it was not sent again, and the next apply looks for it before creating it`,
        { cause: error },
      );
    }
    await pending?.clear(key);
    return cidOfAnswer(answer);
  }
  throw new CortexSyncError(
    'APPLY_FAILED',
    `create Initiative "${spec.name}" did not settle after ${MAX_CREATE_ATTEMPTS} attempts`,
  );
};

/**
 * Updates the Initiative `cid`; if it vanished meanwhile, creates it (with the create's look-up by
 * name). Returns the cid it has now.
 */
export const updateInitiative = async (
  client: ApiClient,
  cid: string,
  spec: InitiativeManifest,
  pending?: PendingCreates,
): Promise<string | undefined> => {
  if (await putInitiative(client, cid, spec)) return cid;
  return createInitiative(client, spec, pending);
};

/** Deletes the Initiative `cid`; one already gone counts as deleted. */
export const deleteInitiative = async (client: ApiClient, cid: string, name: string): Promise<void> => {
  await client.request({
    operation: `delete Initiative "${name}"`,
    method: 'DELETE',
    path: `/api/v1/initiatives/${encodePathSegment(cid)}`,
    idempotent: true,
    acceptStatus: [404],
  });
};
