/**
 * Scorecard descriptors: the YAML the vendor's `POST /api/v1/scorecards/descriptor` takes (and its
 * CLI's `scorecards create -f`, GitOps `.cortex/scorecards/*.yaml`) and `GET .../descriptor` gives
 * back. `{tag, name, description, draft, ladder: {name, levels: [{name, rank, color, description}]},
 * rules: [{title, expression, weight, level, description, failureMessage, filter}], filter}`.
 *
 * The same shape is accepted in an emulator data file (`--data`), so scorecards can be put there by hand.
 */
import { stringify as toYaml } from 'yaml';
import { z } from 'zod';
import { isoSeconds } from '../util.js';
import type { ScorecardLevel, ScorecardRule, StoredScorecard } from './scorecards.js';

const nonEmpty = z.string().trim().min(1);

/** Colour the vendor UI gives a level that names none (inferred). */
const DEFAULT_LEVEL_COLOR = '#7cf376';

export const scorecardDescriptorSchema = z.looseObject({
  tag: nonEmpty,
  name: nonEmpty,
  description: z.string().nullish(),
  draft: z.boolean().optional(),
  ladder: z
    .looseObject({
      name: z.string().nullish(),
      levels: z.array(
        z.looseObject({
          name: nonEmpty,
          rank: z.number().int().min(1),
          color: z.string().nullish(),
          description: z.string().nullish(),
        }),
      ),
    })
    .nullish(),
  rules: z
    .array(
      z.looseObject({
        expression: nonEmpty,
        title: z.string().nullish(),
        description: z.string().nullish(),
        failureMessage: z.string().nullish(),
        weight: z.number().nullish(),
        level: z.string().nullish(),
        filter: z.unknown().optional(),
      }),
    )
    .default([]),
  filter: z.unknown().optional(),
  notifications: z
    .looseObject({ enabled: z.boolean().optional(), scoreDropNotificationsEnabled: z.boolean().optional() })
    .nullish(),
  exemptions: z.looseObject({ enabled: z.boolean().optional(), autoApprove: z.boolean().optional() }).nullish(),
  evaluation: z.looseObject({ window: z.number().int().min(1).optional() }).nullish(),
});
export type ScorecardDescriptor = z.infer<typeof scorecardDescriptorSchema>;

/** The answer to a scorecard `filter` the vendor refuses: "Invalid scorecard yaml", with no detail. */
export const INVALID_SCORECARD_YAML = 'Invalid scorecard yaml';

const FILTER_PARTS = ['types', 'groups', 'query'] as const;

/**
 * Is the scorecard's own `filter` one the vendor refuses? Its maintainers' notes (confirmed live):
 * `{entityType: <tag>}` 400s with "Invalid scorecard yaml" and no detail; a filter takes `types`,
 * `groups` or `query`, at least one of the three (`kind: GENERIC` and the vendor test data's
 * `category` beside them). Rule filters are not judged (the vendor's test data has `{category}` alone).
 */
export const filterRefused = (filter: unknown): boolean => {
  if (filter === undefined || filter === null) return false;
  if (typeof filter !== 'object' || Array.isArray(filter)) return true;
  if (Object.hasOwn(filter, 'entityType')) return true;
  const present = (key: string): boolean => {
    const value = (filter as Record<string, unknown>)[key];
    return value !== undefined && value !== null && value !== '';
  };
  return !FILTER_PARTS.some(present);
};

/** A problem that makes the descriptor invalid beyond its shape (the vendor answers 400). */
export const descriptorProblem = (d: ScorecardDescriptor): string | undefined => {
  if (filterRefused(d.filter)) return `filter: ${INVALID_SCORECARD_YAML}`;
  const levels = d.ladder?.levels ?? [];
  const ranks = new Set(levels.map((l) => l.rank));
  if (ranks.size !== levels.length) return 'ladder.levels: two levels share a rank';
  const names = new Set(levels.map((l) => l.name));
  for (const [i, rule] of d.rules.entries()) {
    if (rule.level != null && !names.has(rule.level))
      return `rules.${i}.level: no level named '${rule.level}' in the ladder`;
    if (levels.length > 0 && rule.level == null)
      return `rules.${i}.level: a scorecard with a ladder needs a level per rule`;
  }
  return undefined;
};

/** The stored form of a descriptor (rule identifiers from the tag and expression, so they are stable). */
export const scorecardFromDescriptor = (d: ScorecardDescriptor, now: number): StoredScorecard => {
  const levels: ScorecardLevel[] = (d.ladder?.levels ?? []).map((l) => ({
    rank: l.rank,
    name: l.name,
    color: l.color ? (l.color.startsWith('#') ? l.color : `#${l.color}`) : DEFAULT_LEVEL_COLOR,
    ...(l.description != null ? { description: l.description } : {}),
  }));
  const rules: ScorecardRule[] = d.rules.map((r) => ({
    expression: r.expression,
    ...(r.title != null ? { title: r.title } : {}),
    ...(r.description != null ? { description: r.description } : {}),
    ...(r.failureMessage != null ? { failureMessage: r.failureMessage } : {}),
    ...(r.level != null ? { levelName: r.level } : {}),
    weight: r.weight ?? 1,
    ...(r.filter !== undefined ? { filter: r.filter } : {}),
  }));
  return {
    tag: d.tag,
    name: d.name,
    ...(d.description != null ? { description: d.description } : {}),
    isDraft: d.draft ?? false,
    ...(d.ladder?.name != null ? { ladderName: d.ladder.name } : {}),
    levels,
    rules,
    ...(d.filter !== undefined ? { filter: d.filter } : {}),
    ...(d.notifications != null ? { notifications: d.notifications } : {}),
    ...(d.exemptions != null ? { exemptions: d.exemptions } : {}),
    ...(d.evaluation != null ? { evaluation: d.evaluation } : {}),
    lastUpdated: isoSeconds(now),
  };
};

/**
 * The settings of a scorecard that states none, as the vendor's OpenAPI documents them
 * (`ExemptionsSettings`, `EvaluationDetails`, `Notifications`: notifications are on unless the
 * scorecard is a draft).
 */
export const SCORECARD_DEFAULTS = {
  exemptions: { enabled: true, autoApprove: false },
  evaluation: { window: 4 },
  notifications: (draft: boolean) => ({ enabled: !draft, scoreDropNotificationsEnabled: false }),
} as const;

/** A stored setting with the defaults under what was given (the answer always holds every setting). */
const withDefaults = (given: Record<string, unknown> | undefined, defaults: Record<string, unknown>) => ({
  ...defaults,
  ...given,
});

/**
 * The descriptor YAML of a stored scorecard (`GET /api/v1/scorecards/{tag}/descriptor`): every
 * setting filled in (draft, the ladder's name, level colours, rule weights, notifications,
 * exemptions, evaluation), keys in an order of its own, as a server that rewrites what it stores.
 */
export const scorecardDescriptorYaml = (s: StoredScorecard): string =>
  toYaml({
    tag: s.tag,
    name: s.name,
    ...(s.description !== undefined ? { description: s.description } : {}),
    draft: s.isDraft,
    notifications: withDefaults(s.notifications, SCORECARD_DEFAULTS.notifications(s.isDraft)),
    exemptions: withDefaults(s.exemptions, SCORECARD_DEFAULTS.exemptions),
    evaluation: withDefaults(s.evaluation, SCORECARD_DEFAULTS.evaluation),
    ...(s.levels.length > 0
      ? {
          ladder: {
            name: s.ladderName ?? 'Default Ladder',
            levels: s.levels.map((l) => ({
              name: l.name,
              rank: l.rank,
              color: l.color,
              ...(l.description !== undefined ? { description: l.description } : {}),
            })),
          },
        }
      : {}),
    rules: s.rules.map((r) => ({
      ...(r.title !== undefined ? { title: r.title } : {}),
      expression: r.expression,
      weight: r.weight ?? 1,
      ...(r.levelName !== undefined ? { level: r.levelName } : {}),
      ...(r.description !== undefined ? { description: r.description } : {}),
      ...(r.failureMessage !== undefined ? { failureMessage: r.failureMessage } : {}),
      ...(r.filter !== undefined ? { filter: r.filter } : {}),
    })),
    ...(s.filter !== undefined ? { filter: s.filter } : {}),
  });

const storedScorecardSchema = z.looseObject({
  tag: nonEmpty,
  name: nonEmpty,
  levels: z.array(z.looseObject({ rank: z.number().int().min(1), name: nonEmpty, color: z.string() })),
  rules: z.array(z.looseObject({ expression: nonEmpty })),
});

/**
 * A scorecard of a data file: the stored form (`{tag, name, levels, rules, ...}`, as the emulator
 * saves it) or a vendor descriptor (`{tag, name, ladder, rules: [{level}], draft}`). A string
 * explains why the item is neither.
 */
export const scorecardFromDataFile = (item: unknown, now: number): StoredScorecard | string => {
  const stored = storedScorecardSchema.safeParse(item);
  if (stored.success) {
    const value = stored.data as unknown as StoredScorecard;
    return { ...value, isDraft: value.isDraft ?? false, lastUpdated: value.lastUpdated ?? isoSeconds(now) };
  }
  const descriptor = scorecardDescriptorSchema.safeParse(item);
  if (!descriptor.success) {
    return descriptor.error.issues.map((i) => `${i.path.join('.') || '(scorecard)'}: ${i.message}`).join('; ');
  }
  return descriptorProblem(descriptor.data) ?? scorecardFromDescriptor(descriptor.data, now);
};
