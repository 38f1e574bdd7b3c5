/**
 * Live Initiatives → manifests under `.cortex/initiatives/` (`export`). Pure.
 *
 * Left out: `cid` (looked up by name), `scorecardName`, dates, what the API adds to levels and
 * rules, an empty description, empty level/rule lists (the schema's default) and empty filter
 * parts. `targetDate` is written as `YYYY-MM-DD`.
 */
import { manifestPath } from '../shared/file-name.js';
import type { JsonObject, LiveObject } from '../../core/model.js';
import { nameLists } from '../shared/name-lists.js';
import type { ManifestFile } from '../types.js';
import type { LiveInitiative } from './schema.js';

const FOLDER = '.cortex/initiatives';

const schedule = (value: LiveInitiative['notificationSchedule']): JsonObject | undefined => {
  if (!value) return undefined;
  const out: JsonObject = { isDisabled: value.isDisabled ?? false };
  if (value.timeInterval !== null && value.timeInterval !== undefined) out.timeInterval = value.timeInterval;
  if (value.timeUnit) out.timeUnit = value.timeUnit;
  if (value.replyToEmails && value.replyToEmails.length > 0) out.replyToEmails = [...value.replyToEmails];
  return out;
};

/** The manifest document of one live Initiative, keys in the order of the API's request body. */
const initiativeManifestDocument = (obj: LiveObject<LiveInitiative>): JsonObject => {
  const i = obj.state;
  const document: JsonObject = { name: i.name };
  if (i.description) document.description = i.description;
  document.scorecardTag = i.scorecardTag;
  document.targetDate = /^\d{4}-\d{2}-\d{2}/.test(i.targetDate) ? i.targetDate.slice(0, 10) : i.targetDate;
  document.isDraft = i.isDraft ?? false;
  const ranks = [...new Set((i.emphasizedLevels ?? []).map((l) => l.rank))].sort((a, b) => a - b);
  if (ranks.length > 0) document.emphasizedLevels = ranks.map((rank) => ({ rank }));
  const rules = (i.emphasizedRules ?? []).map((r) => r.expression);
  if (rules.length > 0) document.emphasizedRules = [...new Set(rules)].map((expression) => ({ expression }));
  const types = nameLists(i.filter?.types);
  const groups = nameLists(i.filter?.groups);
  const filter: JsonObject = {
    ...(types ? { types } : {}),
    ...(groups ? { groups } : {}),
    ...(i.filter?.query ? { query: i.filter.query } : {}),
  };
  if (Object.keys(filter).length > 0) document.filter = filter;
  const notifications = schedule(i.notificationSchedule);
  if (notifications) document.notificationSchedule = notifications;
  return document;
};

/** One file per Initiative, named by its name. */
export const toManifestFiles = (live: readonly LiveObject<LiveInitiative>[]): ManifestFile[] =>
  live.map((obj) => ({
    path: manifestPath(FOLDER, obj.id),
    document: initiativeManifestDocument(obj),
    ids: [obj.id],
  }));
