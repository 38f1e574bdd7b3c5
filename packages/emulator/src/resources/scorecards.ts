/**
 * Scorecards: `GET /api/v1/scorecards`, `GET|DELETE /api/v1/scorecards/{tag}`, and the vendor's
 * descriptor endpoints `POST /api/v1/scorecards/descriptor` (create or replace by tag, `dryRun`) and
 * `GET /api/v1/scorecards/{tag}/descriptor` (`scorecard-descriptor.ts`). The workspace starts with
 * sample scorecards (see `SAMPLE_SCORECARDS`); tests add more with `seedScorecards`, users with the
 * API or a data file. Initiatives reference them by tag, rule expression and level rank.
 *
 * Responses follow the vendor's `ScorecardResponse` schema (cortex-openapi.json): levels are
 * `{level: {name, number}}`; the level colour (which Initiatives echo) is kept in the state only.
 */
import { type EmulatorResponse, errorResponse, pagedResponse, type RouteDef } from '../contract.js';
import { fnv1a, hashOrder, isoSeconds } from '../util.js';
import { booleanQuery, readBody } from './initiatives-body.js';
import {
  descriptorProblem,
  filterRefused,
  INVALID_SCORECARD_YAML,
  SCORECARD_DEFAULTS,
  scorecardDescriptorSchema,
  scorecardDescriptorYaml,
  scorecardFromDescriptor,
} from './scorecard-descriptor.js';

/** A level of a scorecard's ladder; rank 1 is the highest. */
export interface ScorecardLevel {
  rank: number;
  name: string;
  color: string;
  description?: string;
}

/** A rule of a scorecard, identified (for Initiatives) by its CQL `expression`. */
export interface ScorecardRule {
  expression: string;
  title?: string;
  description?: string;
  /** The level this rule belongs to, when the scorecard uses levels. */
  levelName?: string;
  failureMessage?: string;
  weight?: number;
  /** The rule's entity filter, as the descriptor gave it (kept for the descriptor only). */
  filter?: unknown;
}

/** A scorecard as stored in the emulator's state. */
export interface StoredScorecard {
  tag: string;
  name: string;
  description?: string;
  isDraft: boolean;
  /** The ladder's name, when a descriptor gave one. */
  ladderName?: string;
  levels: ScorecardLevel[];
  rules: ScorecardRule[];
  /** The scorecard's entity filter, as the descriptor gave it (kept for the descriptor only). */
  filter?: unknown;
  /** Settings as the descriptor gave them; the answers fill in the rest (`SCORECARD_DEFAULTS`). */
  notifications?: Record<string, unknown>;
  exemptions?: Record<string, unknown>;
  evaluation?: Record<string, unknown>;
  /** ISO 8601 timestamp. */
  lastUpdated: string;
}

/**
 * A scorecard being evaluated: its next `failWrites` writes (descriptor POSTs and DELETEs) answer
 * `status` without effect, as the vendor's API answers a write that meets an evaluation in
 * progress (a 500). Set with `POST /_emulator/scorecard-evaluations`.
 */
export interface ScorecardEvaluation {
  tag: string;
  failWrites: number;
  status: number;
}

/** What `seedScorecards` takes: a stored scorecard whose `isDraft` and `lastUpdated` may be omitted. */
export type ScorecardSeed = Omit<StoredScorecard, 'isDraft' | 'lastUpdated'> & {
  isDraft?: boolean;
  lastUpdated?: string;
};

/** The scorecards slice of the emulator state (arrays: JSON-serializable, no prototype keys). */
export interface ScorecardsState {
  items: StoredScorecard[];
  /** Evaluations in progress (not kept in a data file). */
  evaluations?: ScorecardEvaluation[];
}

/** Starts (or restarts) an evaluation of `tag` that refuses its next `failWrites` writes with `status`. */
export const startEvaluation = (state: ScorecardsSlice, evaluation: ScorecardEvaluation): void => {
  const rest = (state.scorecards.evaluations ?? []).filter((e) => e.tag !== evaluation.tag);
  state.scorecards.evaluations = evaluation.failWrites > 0 ? [...rest, { ...evaluation }] : rest;
};

/** The answer to a write of `tag` while it is being evaluated (counting the write down), if it is. */
const evaluationRefusal = (state: ScorecardsSlice, tag: string): EmulatorResponse | undefined => {
  const running = state.scorecards.evaluations?.find((e) => e.tag === tag && e.failWrites > 0);
  if (running === undefined) return undefined;
  running.failWrites -= 1;
  if (running.failWrites === 0) {
    state.scorecards.evaluations = (state.scorecards.evaluations ?? []).filter((e) => e !== running);
  }
  return errorResponse(
    running.status,
    'UNHANDLED_EXCEPTION',
    `Scorecard '${tag}' is being evaluated; it cannot be changed until the evaluation ends`,
  );
};

/** The part of the emulator state the scorecard routes read. */
export interface ScorecardsSlice {
  scorecards: ScorecardsState;
}

/** The sample scorecards every emulator starts with. */
export const SAMPLE_SCORECARDS: readonly ScorecardSeed[] = [
  {
    tag: 'production-readiness',
    name: 'Production Readiness',
    description: 'Minimum bar for services that take production traffic',
    levels: [
      { rank: 1, name: 'Gold', color: '#FFD700' },
      { rank: 2, name: 'Silver', color: '#C0C0C0' },
      { rank: 3, name: 'Bronze', color: '#CD7F32' },
    ],
    rules: [
      { expression: 'git != null', title: 'Has a git repository', levelName: 'Bronze' },
      { expression: 'ownership.allOwners().length > 0', title: 'Has an owner', levelName: 'Bronze' },
      {
        expression: 'links("runbook").length > 0',
        title: 'Has a runbook',
        description: 'On-call engineers need a runbook',
        levelName: 'Silver',
      },
      { expression: 'oncall != null', title: 'Has an on-call rotation', levelName: 'Gold' },
    ],
  },
  {
    tag: 'security-baseline',
    name: 'Security Baseline',
    description: 'Security hygiene for every entity',
    levels: [
      { rank: 1, name: 'Secure', color: '#2E7D32' },
      { rank: 2, name: 'Basic', color: '#F9A825' },
    ],
    rules: [
      { expression: 'custom("pci") != null', title: 'PCI scope declared', levelName: 'Basic' },
      { expression: 'sonarqube != null', title: 'Static analysis configured', levelName: 'Secure' },
    ],
  },
];

/** Adds scorecards to the emulator state, replacing any with the same tag (`now`: for `lastUpdated`). */
export const seedScorecards = (state: ScorecardsSlice, scorecards: readonly ScorecardSeed[], now = 0): void => {
  const { items } = state.scorecards;
  for (const seed of scorecards) {
    const stored: StoredScorecard = {
      ...structuredClone(seed),
      isDraft: seed.isDraft ?? false,
      lastUpdated: seed.lastUpdated ?? isoSeconds(now),
    };
    const index = items.findIndex((s) => s.tag === seed.tag);
    if (index >= 0) items[index] = stored;
    else items.push(stored);
  }
};

/** A fresh scorecards slice holding the sample scorecards. */
export const initialScorecardsState = (): ScorecardsState => {
  const slice: ScorecardsSlice = { scorecards: { items: [] } };
  seedScorecards(slice, SAMPLE_SCORECARDS);
  return slice.scorecards;
};

/** Finds a scorecard by tag. */
export const findScorecard = (state: ScorecardsSlice, tag: string): StoredScorecard | undefined =>
  state.scorecards.items.find((s) => s.tag === tag);

/** A stable, uuid-shaped rule identifier (the vendor's CLI reads `rules[].identifier`). */
const ruleIdentifier = (tag: string, expression: string): string => {
  const hex = [0, 1, 2, 3].map((i) => fnv1a(`${i}:${tag}:${expression}`).toString(16).padStart(8, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};

/** The wire form (vendor `ScorecardResponse`). */
export const renderScorecard = (scorecard: StoredScorecard): Record<string, unknown> => ({
  tag: scorecard.tag,
  name: scorecard.name,
  ...(scorecard.description !== undefined ? { description: scorecard.description } : {}),
  isDraft: scorecard.isDraft,
  lastUpdated: scorecard.lastUpdated,
  levels: scorecard.levels.map((level) => ({ level: { name: level.name, number: level.rank } })),
  rules: scorecard.rules.map(({ filter: _filter, ...rule }) => ({
    ...rule,
    identifier: ruleIdentifier(scorecard.tag, rule.expression),
  })),
  exemptions: { ...SCORECARD_DEFAULTS.exemptions, ...scorecard.exemptions },
  notifications: { ...SCORECARD_DEFAULTS.notifications(scorecard.isDraft), ...scorecard.notifications },
  ...(scorecard.evaluation !== undefined ? { evaluation: scorecard.evaluation } : {}),
});

const listScorecards = (req: { query: URLSearchParams }, state: ScorecardsSlice): EmulatorResponse => {
  // The vendor leaves the default of `showDrafts` unstated; drafts are listed unless `showDrafts=false`.
  const showDrafts = booleanQuery(req.query, 'showDrafts', true);
  if (showDrafts === null) return errorResponse(400, 'BAD_REQUEST', 'showDrafts must be true or false');
  const visible = hashOrder(
    state.scorecards.items.filter((s) => showDrafts || !s.isDraft),
    (s) => s.tag,
  );
  return pagedResponse(visible.map(renderScorecard), req.query, 'scorecards');
};

/** `POST /api/v1/scorecards/descriptor`: create, or replace the scorecard with the same tag. */
const writeDescriptor: RouteDef<ScorecardsSlice>['handle'] = (req, state, env) => {
  const dryRun = booleanQuery(req.query, 'dryRun', false);
  if (dryRun === null) return errorResponse(400, 'BAD_REQUEST', 'dryRun must be true or false');
  const body = readBody(req, scorecardDescriptorSchema, { allowYaml: true });
  if (!body.ok) return body.response;
  if (filterRefused(body.value.filter)) return errorResponse(400, 'BAD_REQUEST', INVALID_SCORECARD_YAML);
  const problem = descriptorProblem(body.value);
  if (problem !== undefined) return errorResponse(400, 'BAD_REQUEST', `${INVALID_SCORECARD_YAML}: ${problem}`);
  const stored = scorecardFromDescriptor(body.value, env.now());
  if (!dryRun) {
    const evaluating = evaluationRefusal(state, stored.tag);
    if (evaluating !== undefined) return evaluating;
    const index = state.scorecards.items.findIndex((s) => s.tag === stored.tag);
    if (index >= 0) state.scorecards.items[index] = stored;
    else state.scorecards.items.push(stored);
  }
  return { status: 200, body: { scorecard: renderScorecard(stored) } };
};

const notFound = (tag: string | undefined): EmulatorResponse =>
  errorResponse(404, 'NOT_FOUND', `Scorecard '${tag ?? ''}' not found`);

/** Routes of the scorecards resource (any valid key may read; writes need `EDIT_SCORECARDS`). */
export const scorecardRoutes: RouteDef<ScorecardsSlice>[] = [
  {
    method: 'POST',
    pattern: '/api/v1/scorecards/descriptor',
    permission: ['EDIT_SCORECARDS'],
    handle: writeDescriptor,
  },
  {
    method: 'GET',
    pattern: '/api/v1/scorecards/:tag/descriptor',
    permission: null,
    handle: (req, state) => {
      const scorecard = findScorecard(state, req.params.tag ?? '');
      if (scorecard === undefined) return notFound(req.params.tag);
      // The vendor types this answer as a JSON string holding the YAML.
      return { status: 200, body: JSON.stringify(scorecardDescriptorYaml(scorecard)), contentType: 'application/json' };
    },
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/scorecards/:tag',
    permission: ['EDIT_SCORECARDS'],
    handle: (req, state) => {
      const index = state.scorecards.items.findIndex((s) => s.tag === req.params.tag);
      if (index < 0) return notFound(req.params.tag);
      const evaluating = evaluationRefusal(state, req.params.tag ?? '');
      if (evaluating !== undefined) return evaluating;
      state.scorecards.items.splice(index, 1);
      return { status: 200 };
    },
  },
  {
    method: 'GET',
    pattern: '/api/v1/scorecards',
    permission: null,
    handle: (req, state) => listScorecards(req, state),
  },
  {
    method: 'GET',
    pattern: '/api/v1/scorecards/:tag',
    permission: null,
    handle: (req, state) => {
      const scorecard = findScorecard(state, req.params.tag ?? '');
      if (scorecard === undefined) return notFound(req.params.tag);
      return { status: 200, body: { scorecard: renderScorecard(scorecard) } };
    },
  },
];
