/**
 * Initiative schemas: the strict manifest (the API's `InitiativeRequest`) and the
 * tolerant live shape (the API's `Initiative`, of which only the compared fields are typed).
 */
import { z } from 'zod';

/** `DAY`, `WEEK` or `MONTH` (OpenAPI `NotificationSchedule.timeUnit`). */
const NOTIFICATION_TIME_UNITS = ['DAY', 'WEEK', 'MONTH'] as const;

const nameList = z.array(z.string().min(1));

/** Entity types to include or exclude; the API accepts only one of the two. */
const typeFilterSchema = z
  .strictObject({ include: nameList.optional(), exclude: nameList.optional() })
  .refine((f) => !(f.include?.length && f.exclude?.length), {
    error: 'takes either include or exclude, not both',
  });

const groupFilterSchema = z.strictObject({ include: nameList.optional(), exclude: nameList.optional() });

const filterSchema = z.strictObject({
  types: typeFilterSchema.optional(),
  groups: groupFilterSchema.optional(),
  /** A CQL expression. */
  query: z.string().min(1).optional(),
});

const notificationScheduleSchema = z.strictObject({
  isDisabled: z.boolean(),
  timeInterval: z.int().min(1),
  timeUnit: z.enum(NOTIFICATION_TIME_UNITS),
  replyToEmails: z.array(z.email()).optional(),
});

/**
 * One Initiative manifest. Identity is `name`; the server's `cid` is looked up, never written.
 * `emphasizedLevels`/`emphasizedRules` default to `[]`, and at least one of them must be non-empty.
 * A `targetDate` in the past is not a schema error (it is time-dependent): parse warns about it.
 */
export const initiativeManifestSchema = z
  .strictObject({
    /** Rejected with a clear message: the `cid` is the server's, the manifest is identified by `name`. */
    cid: z
      .unknown()
      .refine(() => false, {
        error: 'is assigned by Cortex and must not be written in a manifest: an Initiative is identified by its name',
      })
      .meta({ not: {}, description: 'Not allowed: the cid is looked up by name' })
      .optional(),
    name: z.string().refine((n) => n.trim() !== '', { error: 'must not be empty' }),
    description: z.string().optional(),
    scorecardTag: z.string().min(1),
    targetDate: z.iso.date({ error: 'must be a calendar date written YYYY-MM-DD' }),
    isDraft: z.boolean(),
    emphasizedLevels: z
      .array(z.strictObject({ rank: z.int().min(1, { error: 'starts at 1 (the highest level)' }) }))
      .default([]),
    emphasizedRules: z.array(z.strictObject({ expression: z.string().min(1) })).default([]),
    filter: filterSchema.optional(),
    notificationSchedule: notificationScheduleSchema.optional(),
  })
  .refine((m) => m.emphasizedLevels.length > 0 || m.emphasizedRules.length > 0, {
    error: 'is empty and so is emphasizedRules: an Initiative needs at least one emphasized level or rule',
    path: ['emphasizedLevels'],
  });

export type InitiativeManifest = z.output<typeof initiativeManifestSchema>;

const looseNameList = z.array(z.string()).nullish();
const looseIncludeExclude = z.object({ include: looseNameList, exclude: looseNameList }).loose().nullish();

/** An Initiative as the API returns it; unknown fields are kept, only the compared ones are checked. */
export const liveInitiativeSchema = z
  .object({
    cid: z.string().min(1),
    name: z.string(),
    description: z.string().nullish(),
    scorecardTag: z.string(),
    targetDate: z.string(),
    isDraft: z.boolean().nullish(),
    emphasizedLevels: z.array(z.object({ rank: z.number() }).loose()).nullish(),
    emphasizedRules: z.array(z.object({ expression: z.string() }).loose()).nullish(),
    filter: z
      .object({ types: looseIncludeExclude, groups: looseIncludeExclude, query: z.string().nullish() })
      .loose()
      .nullish(),
    notificationSchedule: z
      .object({
        isDisabled: z.boolean().nullish(),
        timeInterval: z.number().nullish(),
        timeUnit: z.string().nullish(),
        replyToEmails: looseNameList,
      })
      .loose()
      .nullish(),
  })
  .loose();

export type LiveInitiative = z.output<typeof liveInitiativeSchema>;
