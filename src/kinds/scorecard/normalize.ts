/**
 * Canonical comparable form of a scorecard, computed the same way for a manifest and for the
 * descriptor the API answers, so that equal forms mean "nothing to do" whatever the server
 * rewrites when it stores a scorecard.
 *
 * - Key order never matters; levels are keyed by rank and rules by expression (the server may
 *   reorder them, and a plan then shows `rules["git != null"].weight` rather than two lists).
 * - Always compared: `tag`, `name`, `description`, the levels' names and descriptions, each rule's
 *   expression, level, description and failure message, and the filter's `types`, `groups` and
 *   `query` (absent, `null` and empty are the same).
 * - Compared only where the manifest states them, since the server fills them in on its own (a
 *   default it chooses, not one guessed here): `draft`, the ladder's `name`, each level's `color`
 *   (without `#`, any case), each rule's `title`, `weight` and `filter`, the filter's `kind` and
 *   `category`, and each setting of `notifications`, `exemptions` and `evaluation`.
 * - Ignored: what the server adds that a manifest cannot hold (rule identifiers, dates).
 */
import type { JsonObject, JsonValue } from '../../core/model.js';
import {
  type EntityFilterLike,
  entityFilterSets,
  entry,
  nonEmpty,
  textOrNull,
  uniqueSortedBy,
} from '../shared/canonical.js';
import type { LiveScorecard, ScorecardManifest } from './schema.js';

interface FilterLike extends EntityFilterLike {
  kind?: string | null;
  category?: string | null;
}

interface LevelLike {
  name: string;
  rank: number;
  color?: string | null;
  description?: string | null;
}

interface RuleLike {
  title?: string | null;
  expression: string;
  description?: string | null;
  failureMessage?: string | null;
  weight?: number | null;
  level?: string | null;
  filter?: FilterLike | null;
}

type Settings = Readonly<Record<string, unknown>>;

/** The fields of a scorecard that are compared, whichever side they come from. */
interface ComparableScorecard {
  tag: string;
  name?: string | null;
  description?: string | null;
  draft?: boolean | null;
  notifications?: Settings | null;
  exemptions?: Settings | null;
  evaluation?: Settings | null;
  filter?: FilterLike | null;
  ladder?: { name?: string | null; levels?: readonly LevelLike[] | null } | null;
  rules?: readonly RuleLike[] | null;
}

const SETTINGS = {
  notifications: ['enabled', 'scoreDropNotificationsEnabled'],
  exemptions: ['enabled', 'autoApprove'],
  evaluation: ['window'],
} as const;

type SettingGroup = keyof typeof SETTINGS;

/** What of a scorecard the manifest states, where the server would otherwise choose. */
interface Stated {
  draft: boolean;
  ladderName: boolean;
  filterKind: boolean;
  filterCategory: boolean;
  settings: Record<SettingGroup, ReadonlySet<string>>;
  /** By rank: the level states its colour. */
  levelColor: ReadonlySet<number>;
  /** By expression: what the rule states of `title`, `weight` and `filter` (and of its `kind`, `category`). */
  rules: ReadonlyMap<string, StatedRule>;
}

interface StatedRule {
  title: boolean;
  weight: boolean;
  filter?: { kind: boolean; category: boolean };
}

const NOTHING_STATED: Stated = {
  draft: false,
  ladderName: false,
  filterKind: false,
  filterCategory: false,
  settings: { notifications: new Set(), exemptions: new Set(), evaluation: new Set() },
  levelColor: new Set(),
  rules: new Map(),
};

/** What `spec` states (nothing, without a manifest). */
export const statedIn = (spec: ScorecardManifest | undefined): Stated => {
  if (spec === undefined) return NOTHING_STATED;
  const settingsOf = (group: SettingGroup): ReadonlySet<string> => {
    const given = spec[group] as Settings | undefined;
    return new Set(SETTINGS[group].filter((key) => given?.[key] !== undefined));
  };
  return {
    draft: spec.draft !== undefined,
    ladderName: spec.ladder?.name !== undefined,
    filterKind: spec.filter?.kind !== undefined,
    filterCategory: spec.filter?.category !== undefined,
    settings: {
      notifications: settingsOf('notifications'),
      exemptions: settingsOf('exemptions'),
      evaluation: settingsOf('evaluation'),
    },
    levelColor: new Set((spec.ladder?.levels ?? []).filter((l) => l.color !== undefined).map((l) => l.rank)),
    rules: new Map(
      spec.rules.map((r): [string, StatedRule] => [
        r.expression,
        {
          title: r.title !== undefined,
          weight: r.weight !== undefined,
          ...(r.filter !== undefined
            ? { filter: { kind: r.filter.kind !== undefined, category: r.filter.category !== undefined } }
            : {}),
        },
      ]),
    ),
  };
};

/** A filter's comparable form; `kind` and `category` only when stated. `null` when nothing is left. */
const canonicalFilter = (
  filter: FilterLike | null | undefined,
  stated: { kind: boolean; category: boolean },
): JsonObject | null =>
  // `null`, not left out: a descriptor is written whole, so a plan shows a filter the manifest
  // leaves out as cleared (and saved plans' digests cover the form as written).
  nonEmpty(
    {
      ...entityFilterSets(filter, { empty: undefined }),
      ...(stated.kind ? { kind: textOrNull(filter?.kind) } : {}),
      ...(stated.category ? { category: textOrNull(filter?.category) } : {}),
    },
    { empty: null },
  );

/** A colour as compared: no `#`, lower case (`#FFD700` and `ffd700` are one colour). */
const canonicalColor = (color: string | null | undefined): string | null =>
  color ? color.trim().replace(/^#/, '').toLowerCase() : null;

const settings = (given: Settings | null | undefined, keys: ReadonlySet<string>): JsonObject | undefined => {
  if (keys.size === 0) return undefined;
  const out: JsonObject = {};
  for (const key of [...keys].sort()) {
    const value = given?.[key];
    out[key] = typeof value === 'boolean' || typeof value === 'number' ? value : null;
  }
  return out;
};

/**
 * A key for a rule that two rules never share: the expression, with a counter for the rare live
 * scorecard that repeats one (a manifest may not).
 */
const ruleKeys = (rules: readonly RuleLike[]): string[] => {
  const seen = new Map<string, number>();
  return rules.map((r) => {
    const n = (seen.get(r.expression) ?? 0) + 1;
    seen.set(r.expression, n);
    return n === 1 ? r.expression : `${r.expression} (${n})`;
  });
};

const canonicalScorecard = (s: ComparableScorecard, stated: Stated): JsonValue => {
  const out: JsonObject = {
    tag: s.tag,
    name: textOrNull(s.name),
    description: textOrNull(s.description),
    filter: canonicalFilter(s.filter, { kind: stated.filterKind, category: stated.filterCategory }),
  };
  if (stated.draft) out.draft = s.draft ?? false;
  for (const group of Object.keys(SETTINGS) as SettingGroup[]) {
    const compared = settings(s[group], stated.settings[group]);
    if (compared !== undefined) out[group] = compared;
  }
  const levels = s.ladder?.levels ?? [];
  if (levels.length === 0 && !stated.ladderName) out.ladder = null;
  else {
    const byRank: JsonObject = {};
    // A rank repeated live: the first one counts.
    for (const level of uniqueSortedBy(levels, (l) => l.rank)) {
      byRank[String(level.rank)] = {
        name: level.name,
        // Inside a level or a rule, an absent text is left out: a plan then shows only what is there.
        ...entry('description', textOrNull(level.description)),
        ...(stated.levelColor.has(level.rank) ? { color: canonicalColor(level.color) } : {}),
      };
    }
    out.ladder = { levels: byRank, ...(stated.ladderName ? { name: textOrNull(s.ladder?.name) } : {}) };
  }
  const rules = s.rules ?? [];
  const keys = ruleKeys(rules);
  const byExpression: JsonObject = {};
  rules.forEach((rule, i) => {
    const key = keys[i] as string;
    const ruleStated = stated.rules.get(key);
    const item: JsonObject = {
      ...entry('level', textOrNull(rule.level)),
      ...entry('description', textOrNull(rule.description)),
      ...entry('failureMessage', textOrNull(rule.failureMessage)),
    };
    if (ruleStated?.title) item.title = textOrNull(rule.title);
    if (ruleStated?.weight) item.weight = rule.weight ?? null;
    if (ruleStated?.filter) item.filter = canonicalFilter(rule.filter, ruleStated.filter);
    byExpression[key] = item;
  });
  out.rules = byExpression;
  return out;
};

/** Canonical form of a manifest. */
export const canonicalDesiredScorecard = (spec: ScorecardManifest): JsonValue =>
  canonicalScorecard(spec, statedIn(spec));

/** Canonical form of an API answer, compared with the manifest `declared` (when there is one). */
export const canonicalLiveScorecard = (state: LiveScorecard, declared?: ScorecardManifest): JsonValue =>
  canonicalScorecard(state, statedIn(declared));
