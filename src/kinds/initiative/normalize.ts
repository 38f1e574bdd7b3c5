/**
 * Canonical comparable form of an Initiative, computed the same way for a manifest and for an API
 * response, so that equal forms mean "nothing to do".
 *
 * - Compared: name, description, scorecardTag, targetDate, isDraft, the ranks of emphasizedLevels,
 *   the expressions of emphasizedRules, filter, notificationSchedule.
 * - Ignored: cid, scorecardName, dateCreated, dateUpdated, and the enrichment the API adds to
 *   levels (`name`, `color`) and rules (`title`, `description`).
 * - Sets are sorted (levels, rules, filter lists, reply-to emails); an absent, null or empty
 *   optional field is `null` (a PUT is a full replace: an omitted optional field is cleared).
 * - What the server may fill in on its own is compared only when the manifest states it: the
 *   `notificationSchedule` (Cortex may give an Initiative a default schedule) and its
 *   `replyToEmails`. No guessed server default is ever part of the comparison.
 */
import type { JsonObject, JsonValue } from '../../core/model.js';
import type { InitiativeManifest, LiveInitiative } from './schema.js';

interface IncludeExclude {
  include?: readonly string[] | null;
  exclude?: readonly string[] | null;
}

interface FilterLike {
  types?: IncludeExclude | null;
  groups?: IncludeExclude | null;
  query?: string | null;
}

interface ScheduleLike {
  isDisabled?: boolean | null;
  timeInterval?: number | null;
  timeUnit?: string | null;
  replyToEmails?: readonly string[] | null;
}

/** The fields of an Initiative that are compared, whichever side they come from. */
interface ComparableInitiative {
  name: string;
  description?: string | null;
  scorecardTag: string;
  targetDate: string;
  isDraft?: boolean | null;
  emphasizedLevels?: readonly { rank: number }[] | null;
  emphasizedRules?: readonly { expression: string }[] | null;
  filter?: FilterLike | null;
  notificationSchedule?: ScheduleLike | null;
}

const sortedSet = (values: readonly string[] | null | undefined): string[] =>
  [...new Set(values ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const canonicalIncludeExclude = (value: IncludeExclude | null | undefined): JsonObject | null => {
  const out: JsonObject = {};
  const include = sortedSet(value?.include);
  const exclude = sortedSet(value?.exclude);
  if (include.length > 0) out.include = include;
  if (exclude.length > 0) out.exclude = exclude;
  return Object.keys(out).length > 0 ? out : null;
};

const canonicalFilter = (filter: FilterLike | null | undefined): JsonObject | null => {
  const out: JsonObject = {};
  const types = canonicalIncludeExclude(filter?.types);
  const groups = canonicalIncludeExclude(filter?.groups);
  if (types) out.types = types;
  if (groups) out.groups = groups;
  if (filter?.query) out.query = filter.query;
  return Object.keys(out).length > 0 ? out : null;
};

/** What of the schedule the manifest states: only that is compared. */
interface StatedSchedule {
  schedule: boolean;
  replyToEmails: boolean;
}

const canonicalSchedule = (schedule: ScheduleLike | null | undefined, stated: StatedSchedule): JsonObject | null => {
  if (!schedule || !stated.schedule) return null;
  const out: JsonObject = {
    isDisabled: schedule.isDisabled ?? false,
    timeInterval: schedule.timeInterval ?? null,
    timeUnit: schedule.timeUnit ?? null,
  };
  if (stated.replyToEmails) out.replyToEmails = sortedSet(schedule.replyToEmails);
  return out;
};

const statedIn = (spec: InitiativeManifest | undefined): StatedSchedule => ({
  schedule: spec?.notificationSchedule !== undefined,
  replyToEmails: spec?.notificationSchedule?.replyToEmails !== undefined,
});

/** `2026-12-31T00:00:00Z` and `2026-12-31` are the same target date. */
const canonicalDate = (value: string): string => (/^\d{4}-\d{2}-\d{2}/.test(value) ? value.slice(0, 10) : value);

const canonicalInitiative = (i: ComparableInitiative, stated: StatedSchedule): JsonValue => {
  const ranks = [...new Set((i.emphasizedLevels ?? []).map((l) => l.rank))].sort((a, b) => a - b);
  const expressions = sortedSet((i.emphasizedRules ?? []).map((r) => r.expression));
  return {
    name: i.name,
    description: i.description ? i.description : null,
    scorecardTag: i.scorecardTag,
    targetDate: canonicalDate(i.targetDate),
    isDraft: i.isDraft ?? false,
    emphasizedLevels: ranks.map((rank) => ({ rank })),
    emphasizedRules: expressions.map((expression) => ({ expression })),
    filter: canonicalFilter(i.filter),
    notificationSchedule: canonicalSchedule(i.notificationSchedule, stated),
  };
};

/** Canonical form of a manifest. */
export const canonicalDesiredInitiative = (spec: InitiativeManifest): JsonValue =>
  canonicalInitiative(spec, statedIn(spec));

/** Canonical form of an API response, compared with the manifest `declared` (when there is one). */
export const canonicalLiveInitiative = (state: LiveInitiative, declared?: InitiativeManifest): JsonValue =>
  canonicalInitiative(state, statedIn(declared));

/** The request body of `POST /api/v1/initiatives` and `PUT /api/v1/initiatives/{cid}` (a full object). */
export const initiativeRequestBody = (spec: InitiativeManifest): JsonObject => {
  const body: JsonObject = {
    name: spec.name,
    scorecardTag: spec.scorecardTag,
    targetDate: spec.targetDate,
    isDraft: spec.isDraft,
    emphasizedLevels: spec.emphasizedLevels.map((l) => ({ rank: l.rank })),
    emphasizedRules: spec.emphasizedRules.map((r) => ({ expression: r.expression })),
  };
  if (spec.description !== undefined) body.description = spec.description;
  if (spec.filter !== undefined) body.filter = JSON.parse(JSON.stringify(spec.filter)) as JsonObject;
  if (spec.notificationSchedule !== undefined) {
    body.notificationSchedule = JSON.parse(JSON.stringify(spec.notificationSchedule)) as JsonObject;
  }
  return body;
};
