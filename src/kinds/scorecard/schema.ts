/**
 * Scorecard schemas: the strict manifest (the vendor's scorecard descriptor, as
 * `POST /api/v1/scorecards/descriptor` takes it and `GET /api/v1/scorecards/{tag}/descriptor`
 * returns it) and the tolerant live shape (that descriptor as a server answers it).
 */
import { z } from 'zod';

/**
 * A tag goes into request paths and file names: no whitespace, no `/`, no control or formatting
 * character, and not only dots (`..` in a path would name another endpoint once the URL is resolved).
 */
const SCORECARD_TAG_PATTERN = /^(?!\.+$)[^\s/\p{Cc}\p{Cf}]+$/u;

const nonEmpty = z.string().refine((s) => s.trim() !== '', { error: 'must not be empty' });

const nameList = z.array(nonEmpty);
const includeExclude = z.strictObject({ include: nameList.optional(), exclude: nameList.optional() });

/** `entityType` is what an older vendor page showed; the API answers it with an undetailed 400. */
const notEntityType = z
  .unknown()
  .refine(() => false, {
    error:
      'is not a scorecard filter field (the API answers "Invalid scorecard yaml"): choose entity types with `types: {include: [...]}`',
  })
  .meta({ not: {}, description: 'Not allowed: choose entity types with `types: {include: [...]}`' })
  .optional();

const filterFields = {
  /** `GENERIC` in the vendor's own scorecards. */
  kind: nonEmpty.optional(),
  types: includeExclude.optional(),
  groups: includeExclude.optional(),
  /** A CQL expression. */
  query: nonEmpty.optional(),
  /** `SERVICE` in the vendor's own test scorecards. */
  category: nonEmpty.optional(),
  entityType: notEntityType,
};

/** The scorecard's entity filter: `types`, `groups` or `query`, at least one (the API refuses a filter without). */
const scorecardFilterSchema = z
  .strictObject(filterFields)
  .refine((f) => f.types !== undefined || f.groups !== undefined || f.query !== undefined, {
    error: 'needs `types`, `groups` or `query` (the API answers "Invalid scorecard yaml" without one)',
  });

/** A rule's own filter (the vendor's test scorecards give rules `{category: SERVICE}` alone). */
const ruleFilterSchema = z
  .strictObject(filterFields)
  .refine((f) => Object.values(f).some((v) => v !== undefined), { error: 'is empty: leave it out instead' });

const levelSchema = z.strictObject({
  name: nonEmpty,
  /** A level's place on the ladder; an Initiative names a level by its rank. */
  rank: z.int().min(1),
  /** A colour, e.g. `#FFD700` (compared without `#` and case). */
  color: nonEmpty.optional(),
  description: z.string().optional(),
});

const ruleSchema = z.strictObject({
  title: z.string().optional(),
  /** The CQL expression; an Initiative names a rule by it, character for character. */
  expression: nonEmpty,
  description: z.string().optional(),
  failureMessage: z.string().optional(),
  weight: z.number().min(0).optional(),
  /** The name of the ladder level the rule belongs to (required when the scorecard has a ladder). */
  level: nonEmpty.optional(),
  filter: ruleFilterSchema.optional(),
});

type Level = z.output<typeof levelSchema>;
type Rule = z.output<typeof ruleSchema>;

/** Problems across fields: levels and rules that cannot be told apart, rules on levels the ladder lacks. */
const checkLadderAndRules = (
  value: { ladder?: { levels: Level[] } | undefined; rules: Rule[] },
  ctx: z.RefinementCtx,
): void => {
  const levels = value.ladder?.levels ?? [];
  const firstRank = new Map<number, number>();
  const firstName = new Map<string, number>();
  levels.forEach((level, i) => {
    const rank = firstRank.get(level.rank);
    if (rank !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['ladder', 'levels', i, 'rank'],
        message: `repeats the rank of ladder.levels[${rank}]: an Initiative names a level by its rank`,
      });
    } else firstRank.set(level.rank, i);
    const name = firstName.get(level.name);
    if (name !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['ladder', 'levels', i, 'name'],
        message: `repeats the name of ladder.levels[${name}]: rules name their level by its name`,
      });
    } else firstName.set(level.name, i);
  });
  const firstExpression = new Map<string, number>();
  value.rules.forEach((rule, i) => {
    const same = firstExpression.get(rule.expression);
    if (same !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['rules', i, 'expression'],
        message: `repeats the expression of rules[${same}]: an Initiative names a rule by its expression, so two rules with one expression cannot be told apart`,
      });
    } else firstExpression.set(rule.expression, i);
    if (value.ladder === undefined) {
      if (rule.level !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['rules', i, 'level'],
          message: 'names a level, but the scorecard has no ladder: add `ladder.levels` or leave `level` out',
        });
      }
      return;
    }
    if (rule.level === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['rules', i],
        message: `has no \`level\`: in a scorecard with a ladder every rule belongs to one of its levels (${levels.map((l) => l.name).join(', ')})`,
      });
    } else if (!firstName.has(rule.level)) {
      ctx.addIssue({
        code: 'custom',
        path: ['rules', i, 'level'],
        message: `names no level of the ladder (its levels: ${levels.map((l) => l.name).join(', ')})`,
      });
    }
  });
};

/**
 * One scorecard manifest, identified by `tag`. Strict: a field the schema does not know is an
 * error (see the kind's readme for how to add one).
 */
export const scorecardManifestSchema = z
  .strictObject({
    tag: z
      .string()
      .refine((tag) => SCORECARD_TAG_PATTERN.test(tag), {
        error: (issue) =>
          `must not be empty nor only dots, nor hold whitespace, \`/\` or control characters (got ${JSON.stringify(issue.input)})`,
      })
      .meta({ pattern: SCORECARD_TAG_PATTERN.source }),
    name: nonEmpty,
    description: z.string().optional(),
    /** A draft scorecard is not evaluated and not shown to everyone. */
    draft: z.boolean().optional(),
    notifications: z
      .strictObject({ enabled: z.boolean().optional(), scoreDropNotificationsEnabled: z.boolean().optional() })
      .optional(),
    exemptions: z.strictObject({ enabled: z.boolean().optional(), autoApprove: z.boolean().optional() }).optional(),
    /** `window`: hours between two evaluations. */
    evaluation: z.strictObject({ window: z.int().min(1).optional() }).optional(),
    filter: scorecardFilterSchema.optional(),
    ladder: z
      .strictObject({
        name: nonEmpty.optional(),
        levels: z.array(levelSchema).min(1, { error: 'needs at least one level (or leave `ladder` out)' }),
      })
      .optional(),
    rules: z.array(ruleSchema).default([]),
  })
  .superRefine(checkLadderAndRules);

export type ScorecardManifest = z.output<typeof scorecardManifestSchema>;

const looseText = z.string().nullish();
const looseNameList = z.array(z.string()).nullish();
const looseIncludeExclude = z.looseObject({ include: looseNameList, exclude: looseNameList }).nullish();
const looseFilter = z
  .looseObject({
    kind: looseText,
    types: looseIncludeExclude,
    groups: looseIncludeExclude,
    query: looseText,
    category: looseText,
  })
  .nullish()
  .catch(null);

/**
 * A scorecard descriptor as the API answers it; unknown fields (rule identifiers, dates) are kept
 * and ignored, and a field of an unexpected type reads as absent rather than failing the plan.
 */
export const liveScorecardSchema = z.looseObject({
  tag: z.string().min(1),
  name: looseText,
  description: looseText,
  draft: z.boolean().nullish().catch(null),
  notifications: z
    .looseObject({
      enabled: z.boolean().nullish().catch(null),
      scoreDropNotificationsEnabled: z.boolean().nullish().catch(null),
    })
    .nullish()
    .catch(null),
  exemptions: z
    .looseObject({ enabled: z.boolean().nullish().catch(null), autoApprove: z.boolean().nullish().catch(null) })
    .nullish()
    .catch(null),
  evaluation: z
    .looseObject({ window: z.number().nullish().catch(null) })
    .nullish()
    .catch(null),
  filter: looseFilter,
  ladder: z
    .looseObject({
      name: looseText,
      levels: z
        .array(
          z.looseObject({
            name: z.string(),
            rank: z.number(),
            color: looseText,
            description: looseText,
          }),
        )
        .nullish(),
    })
    .nullish(),
  rules: z
    .array(
      z.looseObject({
        title: looseText,
        expression: z.string(),
        description: looseText,
        failureMessage: looseText,
        weight: z.number().nullish().catch(null),
        level: looseText,
        filter: looseFilter,
      }),
    )
    .nullish(),
});

export type LiveScorecard = z.output<typeof liveScorecardSchema>;
