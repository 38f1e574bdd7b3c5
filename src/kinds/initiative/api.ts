/**
 * Initiative API calls. `POST /api/v1/initiatives` is not idempotent (every call creates a new
 * Initiative) and a response can be lost, so a create always looks the name up first and retries
 * only after looking again: a repeated or retried apply never creates a second Initiative.
 */
import type { ApiClient } from '../../api/types.js';
import { encodePathSegment } from '../../api/types.js';
import { CortexSyncError, isApiError } from '../../core/errors.js';
import { canonicalDesiredInitiative, canonicalLiveInitiative, initiativeRequestBody } from './normalize.js';
import type { InitiativeManifest, LiveInitiative } from './schema.js';
import { liveInitiativeSchema } from './schema.js';

/** How many times a create may send its POST (each one preceded by a fresh look-up by name). */
export const MAX_CREATE_ATTEMPTS = 3;

/**
 * Reads every Initiative. The list hides drafts and expired Initiatives unless asked, so both
 * are asked for: otherwise a manifest of a draft would look absent and be created again.
 */
export const listInitiatives = async (client: ApiClient): Promise<LiveInitiative[]> => {
  const items = await client.paginate<unknown>(
    {
      operation: 'list Initiatives',
      method: 'GET',
      path: '/api/v1/initiatives',
      query: { includeDrafts: true, includeExpired: true },
    },
    'initiatives',
  );
  return items.map((item, index) => {
    const parsed = liveInitiativeSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unreadable';
      throw new CortexSyncError(
        'API',
        `list Initiatives returned an Initiative that cannot be read (item ${index}, ${where})`,
      );
    }
    return parsed.data;
  });
};

/** The error for two live Initiatives sharing a name: the controller does not guess which one is meant. */
export const duplicateNameError = (name: string, cids: readonly string[]): CortexSyncError =>
  new CortexSyncError(
    'PLAN',
    `${cids.length} live Initiatives are named "${name}" (cids ${cids.join(', ')}); an Initiative is identified by its name, so rename or delete all but one in Cortex`,
  );

/** The one live Initiative named `name`, if any; throws a `PLAN` error when several share it. */
export const findInitiativeByName = (live: readonly LiveInitiative[], name: string): LiveInitiative | undefined => {
  const matches = live.filter((i) => i.name === name);
  if (matches.length > 1)
    throw duplicateNameError(
      name,
      matches.map((i) => i.cid),
    );
  return matches[0];
};

/** Could the request have been processed although it failed (lost response, timeout, 5xx, 429)? */
const mayHaveBeenProcessed = (error: unknown): boolean =>
  isApiError(error) &&
  (error.code === 'NETWORK' ||
    error.code === 'TIMEOUT' ||
    (error.status !== undefined && (error.status >= 500 || error.status === 429)));

const sameAsManifest = (live: LiveInitiative, spec: InitiativeManifest): boolean =>
  JSON.stringify(canonicalLiveInitiative(live)) === JSON.stringify(canonicalDesiredInitiative(spec));

/**
 * Replaces the Initiative `cid` with the manifest. Returns false when it does not exist (404).
 * A PUT is a full replace, so it is safe to retry (the client does).
 */
export const putInitiative = async (client: ApiClient, cid: string, spec: InitiativeManifest): Promise<boolean> => {
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

/**
 * Creates the Initiative, unless one with its name already exists (then it is updated by its
 * cid). Before every POST, including a retry after a failure that may have been processed, the
 * list is read again and searched for the name. At most `maxAttempts` POSTs are sent.
 */
export const createInitiative = async (
  client: ApiClient,
  spec: InitiativeManifest,
  maxAttempts: number = MAX_CREATE_ATTEMPTS,
): Promise<void> => {
  let lastError: unknown;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const existing = findInitiativeByName(await listInitiatives(client), spec.name);
    if (existing) {
      if (sameAsManifest(existing, spec)) return;
      if (await putInitiative(client, existing.cid, spec)) return;
      continue; // deleted between the read and the PUT: look again
    }
    try {
      await client.request({
        operation: `create Initiative "${spec.name}"`,
        method: 'POST',
        path: '/api/v1/initiatives',
        body: initiativeRequestBody(spec),
        idempotent: false,
      });
      return;
    } catch (error) {
      if (!mayHaveBeenProcessed(error)) throw error;
      lastError = error;
    }
  }
  if (lastError !== undefined) {
    // The last POST may have been processed: one more look decides whether the create happened.
    const created = findInitiativeByName(await listInitiatives(client), spec.name);
    if (created && sameAsManifest(created, spec)) return;
  }
  throw (
    lastError ??
    new CortexSyncError('APPLY_FAILED', `create Initiative "${spec.name}" did not settle after ${maxAttempts} attempts`)
  );
};

/** Updates the Initiative `cid`; if it vanished meanwhile, creates it (with the create's look-up by name). */
export const updateInitiative = async (client: ApiClient, cid: string, spec: InitiativeManifest): Promise<void> => {
  if (await putInitiative(client, cid, spec)) return;
  await createInitiative(client, spec);
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
