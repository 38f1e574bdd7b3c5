/**
 * The `scorecard` kind: the pure half (`model.ts`) and the IO half against `/api/v1/scorecards`
 * (`api.ts`). A plan lists every scorecard (so an Initiative's `scorecardTag` is checked against
 * the workspace) and reads the descriptor of each one this repository declares or manages; a read
 * by identity reads those descriptors alone. Writes are one upsert by tag, removals a DELETE.
 */
import { CortexSyncError, InterruptedError, isApiError } from '../../core/errors.js';
import type { Diagnostic, LiveObject } from '../../core/model.js';
import { countOf } from '../../core/plural.js';
import { estimateReadMs, formatDuration } from '../shared/read-estimate.js';
import type { ApplyContext, ExportFetchContext, FetchContext, KindChange, KindHandler } from '../types.js';
import type { ApiClient } from '../../api/types.js';
import { deleteScorecard, type ListedScorecard, listScorecards, readDescriptor, upsertScorecard } from './api.js';
import { withLiveKept } from './keep-live.js';
import { KIND, scorecardModel } from './model.js';
import { canonicalDesiredScorecard, canonicalLiveScorecard } from './normalize.js';
import type { LiveScorecard, ScorecardManifest } from './schema.js';

type ScorecardChange = KindChange<ScorecardManifest, LiveScorecard>;

/** Scorecards whose descriptors export reads between two looks at the stop signal. */
export const SCORECARDS_PER_CHUNK = 50;

/** Statuses of the list that mean this key may not read scorecards (permission, or a workspace without them). */
const UNREADABLE_STATUSES = new Set([403, 404]);

const unreadableWarning = (status: number): Diagnostic => ({
  severity: 'warning',
  code: 'scorecards-unreadable',
  message: `the scorecard list could not be read (HTTP ${status}: permission or feature); Initiative scorecards were not checked`,
});

/** A scorecard only listed: what it is, not what it holds (never compared nor exported). */
const listedOnly = (item: ListedScorecard): LiveObject<LiveScorecard> => ({
  kind: KIND,
  id: item.tag,
  state: { tag: item.tag, name: item.name ?? null, draft: item.isDraft ?? null, listedOnly: true },
});

/** The descriptors of `tags` (those that exist), keyed by the tag each descriptor holds. */
const readAll = async (client: ApiClient, tags: readonly string[]): Promise<LiveObject<LiveScorecard>[]> => {
  const read = await Promise.all(tags.map((tag) => readDescriptor(client, tag)));
  return read
    .filter((state): state is LiveScorecard => state !== undefined)
    .map((state) => ({ kind: KIND, id: state.tag, state }));
};

/** One object per id: a descriptor read wins over a list entry. */
const byId = (objects: readonly LiveObject<LiveScorecard>[]): LiveObject<LiveScorecard>[] => {
  const out = new Map<string, LiveObject<LiveScorecard>>();
  for (const obj of objects) {
    const known = out.get(obj.id);
    if (known === undefined || (known.state as { listedOnly?: boolean }).listedOnly) out.set(obj.id, obj);
  }
  return [...out.values()];
};

/**
 * Every scorecard: the list, and the descriptor of each one declared here or managed by this
 * source (read by tag, so one the list leaves out is still found). A key that may not list
 * scorecards, with none declared or managed here, reads none and says so (references to
 * scorecards are then not judged); otherwise it fails the plan.
 */
const fetchLive = async (ctx: FetchContext<ScorecardManifest>): Promise<LiveObject<LiveScorecard>[]> => {
  const ours = [...new Set([...ctx.desired.map((d) => d.id), ...ctx.managedIds])].sort();
  let listed: ListedScorecard[];
  try {
    listed = await listScorecards(ctx.client);
  } catch (error) {
    if (isApiError(error) && error.status !== undefined && UNREADABLE_STATUSES.has(error.status) && ours.length === 0) {
      ctx.unreadable?.(unreadableWarning(error.status));
      return [];
    }
    throw error;
  }
  return byId([...(await readAll(ctx.client, ours)), ...listed.map(listedOnly)]);
};

/**
 * The scorecards with these tags: the descriptor of each, one GET per tag, as `live.fetch` reads
 * the ones declared or managed here (a tag with none, a 404, is left out). The list is not read:
 * what it is for (the workspace's other scorecards an Initiative may name, whether this key may
 * list scorecards at all) is the bulk read's, and a caller that keeps it reads in full whenever
 * the list was not readable (`FetchContext.unreadable`).
 */
const fetchByIds = (
  ids: readonly string[],
  ctx: FetchContext<ScorecardManifest>,
): Promise<LiveObject<LiveScorecard>[]> => readAll(ctx.client, [...new Set(ids)].sort());

/** `export`: every scorecard's descriptor, in chunks between which the run may stop. */
const exportLive = async (ctx: ExportFetchContext<ScorecardManifest>): Promise<LiveObject<LiveScorecard>[]> => {
  let listed: ListedScorecard[];
  try {
    listed = await listScorecards(ctx.client);
  } catch (error) {
    if (isApiError(error) && error.status !== undefined && UNREADABLE_STATUSES.has(error.status)) {
      ctx.progress(`Scorecards not exported: this key may not list them (HTTP ${error.status}).`);
      return [];
    }
    throw error;
  }
  const tags = [...new Set(listed.map((s) => s.tag))].sort();
  if (tags.length > SCORECARDS_PER_CHUNK) {
    ctx.progress(
      `Reading the descriptors of ${countOf(tags.length, 'scorecard')}: one request each, ` +
        `${formatDuration(estimateReadMs(tags.length, ctx.requestsPerMinute))} at ${ctx.requestsPerMinute} requests/minute.`,
    );
  }
  const out: LiveObject<LiveScorecard>[] = [];
  for (let i = 0; i < tags.length; i += SCORECARDS_PER_CHUNK) {
    if (ctx.signal.aborted) throw new InterruptedError();
    out.push(...(await readAll(ctx.client, tags.slice(i, i + SCORECARDS_PER_CHUNK))));
  }
  return byId(out);
};

/** Does the live scorecard already equal its manifest (in what the manifest states)? */
const liveEqualsManifest = (live: LiveScorecard, spec: ScorecardManifest): boolean =>
  JSON.stringify(canonicalLiveScorecard(live, spec)) === JSON.stringify(canonicalDesiredScorecard(spec));

const apply = async (change: ScorecardChange, ctx: ApplyContext): Promise<void> => {
  switch (change.action) {
    case 'noop':
      return;
    case 'update':
      // An adopted scorecard that already equals its manifest needs no write (ownership is in the record).
      if (liveEqualsManifest(change.live.state, change.desired.spec)) return;
      // What the manifest leaves out is written as it is live, as the plan said (`keep-live.ts`).
      return upsertScorecard(ctx.client, withLiveKept(change.desired.spec, change.live.state).spec);
    case 'create':
      return upsertScorecard(ctx.client, change.desired.spec);
    case 'delete':
      return deleteScorecard(ctx.client, change.id);
    case 'archive':
      throw new CortexSyncError('INTERNAL', 'scorecards cannot be archived; prune deletes them');
  }
};

/** Which manifest field an API refusal most likely concerns (by its message), for a located diagnostic. */
const FIELD_HINTS: readonly [RegExp, string][] = [
  [/filter|query|\btypes?\b|group/i, 'filter'],
  [/ladder|\blevels?\b|\brank\b|colou?r/i, 'ladder'],
  [/\brules?\b|expression|weight/i, 'rules'],
  [/evaluation|window/i, 'evaluation'],
  [/\btag\b/i, 'tag'],
];

const explainFailure = (change: ScorecardChange, error: Error): Diagnostic[] => {
  const doc = change.desired?.doc;
  if (!doc || !isApiError(error) || error.status === undefined || error.status >= 500) return [];
  const text = error.apiMessage ?? '';
  const field = FIELD_HINTS.find(([pattern]) => pattern.test(text))?.[1];
  const at = field ? doc.locate([field]) : { line: doc.line, column: doc.column };
  return [
    {
      severity: 'error',
      code: 'api-violation',
      message: `Cortex refused scorecard ${change.id} (HTTP ${error.status})${text ? `: ${text}` : ''}`,
      file: doc.file,
      line: at.line,
      column: at.column,
      ...(field ? { field } : {}),
      kind: KIND,
      id: change.id,
    },
  ];
};

/** The `scorecard` kind. */
export const scorecardKind: KindHandler<ScorecardManifest, LiveScorecard> = {
  ...scorecardModel,
  live: { ...scorecardModel.live, fetch: fetchLive, fetchByIds },
  write: { ...scorecardModel.write, apply, explainFailure },
  export: { ...scorecardModel.export, read: exportLive },
};
