/**
 * The refusal explanation three kinds share (`src/kinds/shared/explain-refusal.ts`): a 4xx of a
 * change with a manifest is an error located at the field its message concerns; anything else
 * (a server failure, a network error, a removal, a status the kind says is no fault of the
 * manifest) explains nothing, so the executor reports the failure as it is.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/core/errors.js';
import { explainRefusal } from '../../../src/kinds/shared/explain-refusal.js';
import { fakeDoc } from '../../core/fakes.js';

const explain = explainRefusal({
  kind: 'initiative',
  name: (id) => `Initiative "${id}"`,
  fieldHints: [
    [/target\s*date/i, 'targetDate'],
    [/scorecard/i, 'scorecardTag'],
  ],
  notTheManifest: [403],
});
const refused = (status: number | undefined, apiMessage?: string) =>
  new ApiError(status === undefined ? 'NETWORK' : 'API', {
    operation: 'update Initiative q3',
    method: 'PUT',
    path: '/api/v1/initiatives/1',
    ...(status !== undefined ? { status } : {}),
    ...(apiMessage !== undefined ? { apiMessage } : {}),
    attempts: 1,
    durationMs: 1,
  });
const change = { id: 'q3', desired: { doc: fakeDoc('.cortex/initiatives/q3.yaml', 3, { targetDate: [7, 3] }) } };

describe('explainRefusal', () => {
  it('locates a refusal at the field its message concerns, else at the document', () => {
    expect(explain(change, refused(400, 'Target date must be in the future'))).toEqual([
      {
        severity: 'error',
        code: 'api-violation',
        message: 'Cortex refused Initiative "q3" (HTTP 400): Target date must be in the future',
        file: '.cortex/initiatives/q3.yaml',
        line: 7,
        column: 3,
        field: 'targetDate',
        kind: 'initiative',
        id: 'q3',
      },
    ]);
    expect(explain(change, refused(422))).toEqual([
      expect.objectContaining({ message: 'Cortex refused Initiative "q3" (HTTP 422)', line: 3, column: 1 }),
    ]);
    expect(explain(change, refused(422))[0]).not.toHaveProperty('field');
  });

  it('explains nothing that is not the manifest’s fault', () => {
    expect(explain(change, refused(500, 'scorecard broke'))).toEqual([]);
    expect(explain(change, refused(403, 'scorecard forbidden'))).toEqual([]);
    expect(explain(change, refused(undefined))).toEqual([]);
    expect(explain(change, new Error('scorecard'))).toEqual([]);
    expect(explain({ id: 'q3' }, refused(400, 'scorecard'))).toEqual([]);
  });
});
