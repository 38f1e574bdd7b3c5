/**
 * Initiatives: `/api/v1/initiatives` (vendor `InitiativeRequest` / `Initiative`).
 * POST is not idempotent (every call makes a new `cid`), PUT replaces the whole object, reads hide
 * drafts and expired Initiatives unless asked. Each Initiative references a scorecard of the
 * scorecards slice by tag, and its emphasized rules and levels by expression and rank.
 */
import { z } from 'zod';
import { type EmulatorEnv, type EmulatorResponse, errorResponse, pagedResponse, type RouteDef } from '../contract.js';
import { hashOrder, isoSeconds } from '../util.js';
import { booleanQuery, readBody } from './initiatives-body.js';
import { findScorecard, type ScorecardsSlice, type StoredScorecard } from './scorecards.js';

const stringSet = z.array(z.string());
const typeFilter = z
  .object({ include: stringSet.optional(), exclude: stringSet.optional() })
  .refine((f) => f.include === undefined || f.exclude === undefined, {
    message: 'Only one of include or exclude can be set',
  });
const groupFilter = z.object({ include: stringSet.optional(), exclude: stringSet.optional() });
const filterSchema = z.object({
  types: typeFilter.optional(),
  groups: groupFilter.optional(),
  query: z.string().optional(),
});

const notificationScheduleSchema = z.object({
  isDisabled: z.boolean(),
  timeInterval: z.int().min(1),
  timeUnit: z.enum(['DAY', 'WEEK', 'MONTH']),
  replyToEmails: z.array(z.string()).optional(),
});

/** The vendor's `InitiativeRequest` (unknown fields are ignored, as the vendor's JSON binding does). */
export const initiativeRequestSchema = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  scorecardTag: z.string().min(1),
  targetDate: z.iso.date(),
  isDraft: z.boolean(),
  emphasizedLevels: z.array(z.object({ rank: z.int() })),
  emphasizedRules: z.array(z.object({ expression: z.string() })),
  filter: filterSchema.optional(),
  notificationSchedule: notificationScheduleSchema.optional(),
});
export type InitiativeRequest = z.infer<typeof initiativeRequestSchema>;

/** An Initiative as stored: the request as sent plus its identity and timestamps. */
export interface StoredInitiative extends InitiativeRequest {
  cid: string;
  /** ISO 8601 timestamps. */
  dateCreated: string;
  dateUpdated: string;
}

/** The initiatives slice of the emulator state (an array: JSON-serializable, no prototype keys). */
export interface InitiativesState {
  items: StoredInitiative[];
}

/** The part of the emulator state the Initiative routes read: their own slice and the scorecards. */
export interface InitiativesSlice extends ScorecardsSlice {
  initiatives: InitiativesState;
}

/** A fresh, empty initiatives slice. */
export const initialInitiativesState = (): InitiativesState => ({ items: [] });

/** `YYYY-MM-DD` of the emulator clock (UTC). */
const today = (env: EmulatorEnv): string => isoSeconds(env.now()).slice(0, 10);

/** Checks what the schema cannot: a future target date and references into the scorecard. */
const checkReferences = (
  body: InitiativeRequest,
  state: ScorecardsSlice,
  env: EmulatorEnv,
): EmulatorResponse | null => {
  if (body.targetDate <= today(env)) {
    return errorResponse(400, 'BAD_REQUEST', `targetDate ${body.targetDate} must be in the future`);
  }
  if (body.emphasizedLevels.length === 0 && body.emphasizedRules.length === 0) {
    return errorResponse(400, 'BAD_REQUEST', 'Either emphasized levels or rules must be provided');
  }
  const scorecard = findScorecard(state, body.scorecardTag);
  if (scorecard === undefined) {
    return errorResponse(400, 'BAD_REQUEST', `Scorecard '${body.scorecardTag}' does not exist`);
  }
  for (const { rank } of body.emphasizedLevels) {
    if (!scorecard.levels.some((level) => level.rank === rank)) {
      return errorResponse(400, 'BAD_REQUEST', `Scorecard '${scorecard.tag}' has no level of rank ${rank}`);
    }
  }
  for (const { expression } of body.emphasizedRules) {
    if (!scorecard.rules.some((rule) => rule.expression === expression)) {
      return errorResponse(400, 'BAD_REQUEST', `Scorecard '${scorecard.tag}' has no rule '${expression}'`);
    }
  }
  return null;
};

/** Keeps the first of each rank / expression: the vendor returns them as sets. */
const uniqueBy = <T>(items: readonly T[], key: (item: T) => string | number): T[] => {
  const seen = new Set<string | number>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
};

/** Only the fields of `InitiativeRequest`, with emphasized sets de-duplicated. */
const requestFields = (body: InitiativeRequest): InitiativeRequest => ({
  ...body,
  emphasizedLevels: uniqueBy(body.emphasizedLevels, (l) => l.rank).map((l) => ({ rank: l.rank })),
  emphasizedRules: uniqueBy(body.emphasizedRules, (r) => r.expression).map((r) => ({ expression: r.expression })),
});

/** The wire form (vendor `Initiative`), enriched from the scorecard. */
export const renderInitiative = (
  initiative: StoredInitiative,
  scorecard: StoredScorecard | undefined,
): Record<string, unknown> => ({
  cid: initiative.cid,
  name: initiative.name,
  ...(initiative.description !== undefined ? { description: initiative.description } : {}),
  scorecardTag: initiative.scorecardTag,
  scorecardName: scorecard?.name ?? initiative.scorecardTag,
  targetDate: initiative.targetDate,
  isDraft: initiative.isDraft,
  emphasizedLevels: initiative.emphasizedLevels.map(({ rank }) => {
    const level = scorecard?.levels.find((l) => l.rank === rank);
    return { rank, name: level?.name ?? '', color: level?.color ?? '' };
  }),
  emphasizedRules: initiative.emphasizedRules.map(({ expression }) => {
    const rule = scorecard?.rules.find((r) => r.expression === expression);
    return {
      expression,
      ...(rule?.title !== undefined ? { title: rule.title } : {}),
      ...(rule?.description !== undefined ? { description: rule.description } : {}),
    };
  }),
  ...(initiative.filter !== undefined ? { filter: initiative.filter } : {}),
  ...(initiative.notificationSchedule !== undefined ? { notificationSchedule: initiative.notificationSchedule } : {}),
  dateCreated: initiative.dateCreated,
  dateUpdated: initiative.dateUpdated,
});

type State = InitiativesSlice;

const render = (state: State, initiative: StoredInitiative): Record<string, unknown> =>
  renderInitiative(initiative, findScorecard(state, initiative.scorecardTag));

const notFound = (cid: string): EmulatorResponse => errorResponse(404, 'NOT_FOUND', `Initiative '${cid}' not found`);

const READ: RouteDef<State>['permission'] = ['VIEW_INITIATIVES', 'EDIT_INITIATIVES'];
const WRITE: RouteDef<State>['permission'] = ['EDIT_INITIATIVES'];

/** Routes of the Initiatives resource. */
export const initiativeRoutes: RouteDef<State>[] = [
  {
    method: 'GET',
    pattern: '/api/v1/initiatives',
    permission: READ,
    handle: (req, state, env) => {
      const includeDrafts = booleanQuery(req.query, 'includeDrafts', false);
      const includeExpired = booleanQuery(req.query, 'includeExpired', false);
      if (includeDrafts === null || includeExpired === null) {
        return errorResponse(400, 'BAD_REQUEST', 'includeDrafts and includeExpired must be true or false');
      }
      const day = today(env);
      const visible = hashOrder(
        state.initiatives.items.filter((i) => (includeDrafts || !i.isDraft) && (includeExpired || i.targetDate >= day)),
        (i) => i.cid,
      );
      return pagedResponse(
        visible.map((i) => render(state, i)),
        req.query,
        'initiatives',
      );
    },
  },
  {
    method: 'GET',
    pattern: '/api/v1/initiatives/:cid',
    permission: READ,
    handle: (req, state) => {
      const initiative = state.initiatives.items.find((i) => i.cid === req.params.cid);
      return initiative === undefined
        ? notFound(req.params.cid ?? '')
        : { status: 200, body: render(state, initiative) };
    },
  },
  {
    method: 'POST',
    pattern: '/api/v1/initiatives',
    permission: WRITE,
    handle: (req, state, env) => {
      const body = readBody(req, initiativeRequestSchema);
      if (!body.ok) return body.response;
      const problem = checkReferences(body.value, state, env);
      if (problem !== null) return problem;
      const now = isoSeconds(env.now());
      const initiative: StoredInitiative = {
        ...requestFields(body.value),
        cid: env.newId('in'),
        dateCreated: now,
        dateUpdated: now,
      };
      state.initiatives.items.push(initiative);
      return { status: 200, body: render(state, initiative) };
    },
  },
  {
    method: 'PUT',
    pattern: '/api/v1/initiatives/:cid',
    permission: WRITE,
    handle: (req, state, env) => {
      const cid = req.params.cid ?? '';
      const index = state.initiatives.items.findIndex((i) => i.cid === cid);
      const existing = state.initiatives.items[index];
      if (existing === undefined) return notFound(cid);
      const body = readBody(req, initiativeRequestSchema);
      if (!body.ok) return body.response;
      const problem = checkReferences(body.value, state, env);
      if (problem !== null) return problem;
      const replaced: StoredInitiative = {
        ...requestFields(body.value),
        cid,
        dateCreated: existing.dateCreated,
        dateUpdated: isoSeconds(env.now()),
      };
      state.initiatives.items[index] = replaced;
      return { status: 200, body: render(state, replaced) };
    },
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/initiatives/:cid',
    permission: WRITE,
    handle: (req, state) => {
      const index = state.initiatives.items.findIndex((i) => i.cid === req.params.cid);
      if (index < 0) return notFound(req.params.cid ?? '');
      state.initiatives.items.splice(index, 1);
      return { status: 200 };
    },
  },
];
