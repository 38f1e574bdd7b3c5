/**
 * Scorecards, read-only in the emulator: `GET /api/v1/scorecards` and `GET /api/v1/scorecards/{tag}`.
 * The workspace starts with sample scorecards (see `SAMPLE_SCORECARDS`); tests and demos add more
 * with `seedScorecards`. Initiatives reference them by tag, rule expression and level rank.
 *
 * Responses follow the vendor's `ScorecardResponse` schema (cortex-openapi.json): levels are
 * `{level: {name, number}}`; the level colour (which Initiatives echo) is kept in the state only.
 */
import { type EmulatorResponse, errorResponse, pagedResponse, type RouteDef } from '../contract.js';
import { hashOrder, isoSeconds } from '../util.js';
import { booleanQuery } from './initiatives-body.js';

/** A level of a scorecard's ladder; rank 1 is the highest. */
export interface ScorecardLevel {
  rank: number;
  name: string;
  color: string;
}

/** A rule of a scorecard, identified (for Initiatives) by its CQL `expression`. */
export interface ScorecardRule {
  expression: string;
  title?: string;
  description?: string;
  /** The level this rule belongs to, when the scorecard uses levels. */
  levelName?: string;
}

/** A scorecard as stored in the emulator's state. */
export interface StoredScorecard {
  tag: string;
  name: string;
  description?: string;
  isDraft: boolean;
  levels: ScorecardLevel[];
  rules: ScorecardRule[];
  /** ISO 8601 timestamp. */
  lastUpdated: string;
}

/** What `seedScorecards` takes: a stored scorecard whose `isDraft` and `lastUpdated` may be omitted. */
export type ScorecardSeed = Omit<StoredScorecard, 'isDraft' | 'lastUpdated'> & {
  isDraft?: boolean;
  lastUpdated?: string;
};

/** The scorecards slice of the emulator state (an array: JSON-serializable, no prototype keys). */
export interface ScorecardsState {
  items: StoredScorecard[];
}

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

/** The wire form (vendor `ScorecardResponse`). */
export const renderScorecard = (scorecard: StoredScorecard): Record<string, unknown> => ({
  tag: scorecard.tag,
  name: scorecard.name,
  ...(scorecard.description !== undefined ? { description: scorecard.description } : {}),
  isDraft: scorecard.isDraft,
  lastUpdated: scorecard.lastUpdated,
  levels: scorecard.levels.map((level) => ({ level: { name: level.name, number: level.rank } })),
  rules: scorecard.rules.map((rule) => ({ ...rule })),
  exemptions: { enabled: true, autoApprove: false },
  notifications: { enabled: !scorecard.isDraft, scoreDropNotificationsEnabled: false },
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

/** Routes of the scorecards resource (any valid key may read). */
export const scorecardRoutes: RouteDef<ScorecardsSlice>[] = [
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
      if (scorecard === undefined) return errorResponse(404, 'NOT_FOUND', `Scorecard '${req.params.tag}' not found`);
      return { status: 200, body: { scorecard: renderScorecard(scorecard) } };
    },
  },
];
