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
import { entityFilterSets, type EntityFilterLike, sortedSet, textOrNull, uniqueSortedBy } from '../shared/canonical.js';
import type { InitiativeManifest, LiveInitiative } from './schema.js';

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
  filter?: EntityFilterLike | null;
  notificationSchedule?: ScheduleLike | null;
}

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

const canonicalInitiative = (i: ComparableInitiative, stated: StatedSchedule): JsonValue => ({
  name: i.name,
  description: textOrNull(i.description),
  scorecardTag: i.scorecardTag,
  targetDate: canonicalDate(i.targetDate),
  isDraft: i.isDraft ?? false,
  emphasizedLevels: uniqueSortedBy(i.emphasizedLevels, (l) => l.rank).map(({ rank }) => ({ rank })),
  emphasizedRules: uniqueSortedBy(i.emphasizedRules, (r) => r.expression).map(({ expression }) => ({ expression })),
  // `null`, not left out: a PUT replaces the whole Initiative, so a plan shows a filter the
  // manifest leaves out as cleared (and saved plans' digests cover the form as written).
  filter: entityFilterSets(i.filter, { empty: null }),
  notificationSchedule: canonicalSchedule(i.notificationSchedule, stated),
});

/** Canonical form of a manifest. */
export const canonicalDesiredInitiative = (spec: InitiativeManifest): JsonValue =>
  canonicalInitiative(spec, statedIn(spec));

/** Canonical form of an API response, compared with the manifest `declared` (when there is one). */
export const canonicalLiveInitiative = (state: LiveInitiative, declared?: InitiativeManifest): JsonValue =>
  canonicalInitiative(state, statedIn(declared));

/** Does the live Initiative already equal its manifest (their canonical forms are the same)? */
export const liveEqualsManifest = (live: LiveInitiative, spec: InitiativeManifest): boolean =>
  JSON.stringify(canonicalLiveInitiative(live, spec)) === JSON.stringify(canonicalDesiredInitiative(spec));

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
