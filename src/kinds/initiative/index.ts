/**
 * The `initiative` kind: the pure half (`model.ts`) and the IO half against
 * `/api/v1/initiatives` (`api.ts`: look-ups by name, creates that never duplicate).
 */
import { explainRefusal } from '../shared/explain-refusal.js';
import { CortexSyncError } from '../../core/errors.js';
import type { LiveObject } from '../../core/model.js';
import type { ApplyContext, FetchContext, KindChange, KindHandler } from '../types.js';
import {
  createInitiative,
  deleteInitiative,
  duplicateNameError,
  getInitiative,
  listInitiatives,
  updateInitiative,
} from './api.js';
import { initiativeModel } from './model.js';
import { liveEqualsManifest } from './normalize.js';
import type { InitiativeManifest, LiveInitiative } from './schema.js';

type InitiativeChange = KindChange<InitiativeManifest, LiveInitiative>;

const cidOf = (live: LiveObject<LiveInitiative>, action: string): string => {
  const cid = live.serverId;
  if (!cid) throw new CortexSyncError('INTERNAL', `${action} of initiative "${live.id}" has no live cid`);
  return cid;
};

/** Which manifest field an API refusal most likely concerns (by its message), for a located diagnostic. */
const FIELD_HINTS: readonly [RegExp, string][] = [
  [/target\s*date/i, 'targetDate'],
  [/\brules?\b|expression/i, 'emphasizedRules'],
  [/\blevels?\b|\brank\b/i, 'emphasizedLevels'],
  [/scorecard/i, 'scorecardTag'],
  [/notification|time\s*unit|email/i, 'notificationSchedule'],
  [/filter|query|group|type/i, 'filter'],
];

/**
 * Every Initiative, drafts and expired ones included. Two live Initiatives sharing a name that
 * this repository declares or manages stop the plan with a `PLAN` error naming both cids;
 * duplicates it has nothing to do with are left out (they are not its to change or prune).
 */
const fetchLive = (ctx: FetchContext<InitiativeManifest>): Promise<LiveObject<LiveInitiative>[]> =>
  liveInitiatives(ctx, new Set([...ctx.desired.map((d) => d.id), ...ctx.managedIds]));

/**
 * The Initiatives with these names. An Initiative is known by its name, which the API cannot look
 * up; one whose cid this source's record keeps (`ctx.serverIds`) is read by that cid
 * (`GET /initiatives/{cid}`: a list can leave it out), and is the one named so when that read
 * answers it under this name. The others, and any whose cid answers 404 or another name (deleted,
 * renamed in the UI, or a record edited by hand), are looked for in the list (one request for any
 * number of names), as `live.fetch` would read them: never taken for another Initiative by its cid.
 */
const fetchByIds = async (
  ids: readonly string[],
  ctx: FetchContext<InitiativeManifest>,
): Promise<LiveObject<LiveInitiative>[]> => {
  const wanted = new Set(ids);
  const found: LiveObject<LiveInitiative>[] = [];
  await Promise.all(
    [...wanted].map(async (name) => {
      const cid = ctx.serverIds?.get(name);
      if (cid === undefined) return;
      const live = await getInitiative(ctx.client, cid);
      if (live?.name === name && live.cid === cid) found.push(liveObject(live));
    }),
  );
  const rest = new Set([...wanted].filter((name) => !found.some((o) => o.id === name)));
  if (rest.size === 0) return found;
  return [...found, ...(await liveInitiatives(ctx, rest)).filter((o) => rest.has(o.id))];
};

const liveObject = (i: LiveInitiative): LiveObject<LiveInitiative> => ({
  kind: 'initiative',
  id: i.name,
  serverId: i.cid,
  state: i,
});

/** Every Initiative but those sharing a name; `ours` sharing one stops the plan (see `live.fetch`). */
const liveInitiatives = async (
  ctx: FetchContext<InitiativeManifest>,
  ours: ReadonlySet<string>,
): Promise<LiveObject<LiveInitiative>[]> => {
  const live = await listInitiatives(ctx.client);
  const byName = new Map<string, LiveInitiative[]>();
  for (const i of live) byName.set(i.name, [...(byName.get(i.name) ?? []), i]);
  const objects: LiveObject<LiveInitiative>[] = [];
  for (const [name, same] of byName) {
    if (same.length > 1) {
      if (ours.has(name))
        throw duplicateNameError(
          name,
          same.map((i) => i.cid),
        );
      continue;
    }
    const [only] = same;
    if (only) objects.push(liveObject(only));
  }
  return objects;
};

const apply = async (change: InitiativeChange, ctx: ApplyContext): Promise<void> => {
  switch (change.action) {
    case 'noop':
      return;
    case 'create': {
      const cid = await createInitiative(ctx.client, change.desired.spec, ctx.options.pendingCreates);
      if (cid !== undefined) ctx.assigned?.(cid);
      return;
    }
    case 'update': {
      // An adopted Initiative that already equals its manifest needs no write (ownership is in
      // the inventory); a PUT could even be refused, e.g. once its targetDate has passed.
      if (liveEqualsManifest(change.live.state, change.desired.spec)) return;
      const cid = await updateInitiative(
        ctx.client,
        cidOf(change.live, change.action),
        change.desired.spec,
        ctx.options.pendingCreates,
      );
      if (cid !== undefined) ctx.assigned?.(cid);
      return;
    }
    case 'delete':
      return deleteInitiative(ctx.client, cidOf(change.live, change.action), change.id);
    case 'archive':
      throw new CortexSyncError('INTERNAL', 'Initiatives cannot be archived; prune deletes them');
  }
};

const explainFailure = explainRefusal({
  kind: 'initiative',
  name: (id) => `Initiative "${id}"`,
  fieldHints: FIELD_HINTS,
});

/** The `initiative` kind. */
export const initiativeKind: KindHandler<InitiativeManifest, LiveInitiative> = {
  ...initiativeModel,
  live: { ...initiativeModel.live, fetch: fetchLive, fetchByIds },
  write: { apply, explainFailure },
};
