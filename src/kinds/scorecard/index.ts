/**
 * The `scorecard` kind, only read for now: an Initiative names the scorecard it tracks, and a plan
 * checks that the workspace has it. Scorecards are not declared, planned or applied yet; managing
 * them is this folder's to add (a pure and an IO half, as the other kinds have).
 */
import { isApiError } from '../../core/errors.js';
import type { LiveObject } from '../../core/model.js';
import type { ReadOnlyKind } from '../types.js';

export const KIND = 'scorecard';

/** What is read of a scorecard: its tag, the id an Initiative names. */
export interface LiveScorecardTag {
  tag: string;
}

/** The `scorecard` kind: read (one paged list), never written. */
export const scorecardKind: ReadOnlyKind<LiveScorecardTag> = {
  kind: KIND,
  title: 'scorecard',
  managed: false,
  readLive: async ({ client }) => {
    try {
      const cards = await client.paginate<{ tag?: unknown }>(
        { operation: 'list scorecards', method: 'GET', path: '/api/v1/scorecards', query: { pageSize: 1000 } },
        'scorecards',
      );
      const live = cards
        .map((c) => c.tag)
        .filter((t): t is string => typeof t === 'string')
        .map((tag): LiveObject<LiveScorecardTag> => ({ kind: KIND, id: tag, state: { tag } }));
      return { live };
    } catch (error) {
      // A key without the scorecard permission, or a workspace without the feature: not checked, said so.
      if (isApiError(error) && (error.status === 403 || error.status === 404)) {
        return {
          unreadable: {
            severity: 'warning',
            code: 'scorecards-unreadable',
            message:
              'the scorecard list could not be read (permission or feature); Initiative scorecards were not checked',
          },
        };
      }
      throw error;
    }
  },
};
