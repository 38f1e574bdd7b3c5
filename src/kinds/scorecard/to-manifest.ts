/**
 * Live scorecards → manifests under `.cortex/scorecards/` (`export`). Pure.
 *
 * Written: the descriptor's fields the manifest schema knows, in the vendor's descriptor order.
 * What the server fills in on its own (`draft`, the ladder's name, level colours, rule weights and
 * titles, notifications, exemptions, evaluation) is written as the server answers it: a later
 * write replaces the whole scorecard, so a setting left out would not be compared and could turn
 * into the server's default. Left out: fields the schema does not know (rule identifiers, dates),
 * empty texts, a filter with none of `types`, `groups` or `query`, an empty rule filter.
 */
import { CortexSyncError } from '../../core/errors.js';
import type { JsonObject, JsonValue, LiveObject } from '../../core/model.js';
import { manifestPath } from '../shared/file-name.js';
import type { ManifestFile } from '../types.js';
import type { LiveScorecard } from './schema.js';

const FOLDER = '.cortex/scorecards';

type LiveFilter = LiveScorecard['filter'];

const nameList = (values: readonly string[] | null | undefined): string[] | undefined => {
  const kept = (values ?? []).filter((v) => v.trim() !== '');
  return kept.length > 0 ? kept : undefined;
};

const includeExclude = (value: { include?: string[] | null; exclude?: string[] | null } | null | undefined) => {
  const include = nameList(value?.include);
  const exclude = nameList(value?.exclude);
  if (!include && !exclude) return undefined;
  return { ...(include ? { include } : {}), ...(exclude ? { exclude } : {}) };
};

/** A filter's known fields; undefined when nothing is left (or, for the scorecard's own, no selector). */
const filterOf = (filter: LiveFilter, needsSelector: boolean): JsonObject | undefined => {
  if (!filter) return undefined;
  const out: JsonObject = {};
  if (filter.kind) out.kind = filter.kind;
  const types = includeExclude(filter.types);
  const groups = includeExclude(filter.groups);
  if (types) out.types = types;
  if (groups) out.groups = groups;
  if (filter.query) out.query = filter.query;
  if (filter.category) out.category = filter.category;
  if (needsSelector && !types && !groups && !filter.query) return undefined;
  return Object.keys(out).length > 0 ? out : undefined;
};

/** The boolean or number settings of a group, as answered; undefined when none. */
const settingsOf = (given: Readonly<Record<string, unknown>> | null | undefined, keys: readonly string[]) => {
  const out: JsonObject = {};
  for (const key of keys) {
    const value = given?.[key];
    if (typeof value === 'boolean' || (typeof value === 'number' && Number.isInteger(value) && value >= 1)) {
      out[key] = value;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
};

const put = (target: JsonObject, key: string, value: JsonValue | undefined): void => {
  if (value !== undefined && value !== null && value !== '') target[key] = value;
};

/** The manifest document of one live scorecard. */
export const scorecardManifestDocument = (obj: LiveObject<LiveScorecard>): JsonObject => {
  const s = obj.state;
  if ((s as { listedOnly?: unknown }).listedOnly === true) {
    throw new CortexSyncError('INTERNAL', `scorecard ${obj.id} was only listed, not read: it cannot be exported`);
  }
  const document: JsonObject = { tag: s.tag, name: s.name || s.tag };
  put(document, 'description', s.description);
  document.draft = s.draft ?? false;
  put(document, 'notifications', settingsOf(s.notifications, ['enabled', 'scoreDropNotificationsEnabled']));
  put(document, 'exemptions', settingsOf(s.exemptions, ['enabled', 'autoApprove']));
  put(document, 'evaluation', settingsOf(s.evaluation, ['window']));
  put(document, 'filter', filterOf(s.filter, true));
  const levels = [...(s.ladder?.levels ?? [])].sort((a, b) => a.rank - b.rank);
  if (levels.length > 0) {
    const ladder: JsonObject = {};
    put(ladder, 'name', s.ladder?.name);
    ladder.levels = levels.map((l) => {
      const level: JsonObject = { name: l.name, rank: l.rank };
      put(level, 'color', l.color);
      put(level, 'description', l.description);
      return level;
    });
    document.ladder = ladder;
  }
  document.rules = (s.rules ?? []).map((r) => {
    const rule: JsonObject = {};
    put(rule, 'title', r.title);
    rule.expression = r.expression;
    put(rule, 'description', r.description);
    put(rule, 'failureMessage', r.failureMessage);
    if (typeof r.weight === 'number') rule.weight = r.weight;
    put(rule, 'level', r.level);
    put(rule, 'filter', filterOf(r.filter, false));
    return rule;
  });
  return document;
};

/** One file per scorecard, named by its tag. */
export const toManifestFiles = (live: readonly LiveObject<LiveScorecard>[]): ManifestFile[] =>
  live.map((obj) => ({
    path: manifestPath(FOLDER, obj.id),
    document: scorecardManifestDocument(obj),
    ids: [obj.id],
  }));
