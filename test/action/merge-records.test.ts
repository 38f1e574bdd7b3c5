/**
 * The record a merge leaves on its pull request: only the Action's own account writes it, only
 * for its source and directory, and the last one counts.
 */
import { describe, expect, it } from 'vitest';
import { recordIn, recordLine } from '../../src/action/merges.js';

const BOT = { login: 'github-actions[bot]', id: 41898282 };
const DIGEST = `sha256:${'ab'.repeat(32)}`;
const applied = recordLine('example-catalog', 'catalog', { outcome: 'applied', digest: DIGEST });

describe('recordIn', () => {
  it('reads the Action’s own record, the last one counting', () => {
    const comments = [
      {
        id: 1,
        body: `### refused\n${recordLine('example-catalog', 'catalog', { outcome: 'refused' })}\n`,
        author: BOT,
      },
      { id: 2, body: `### ✅ cortex-sync apply\n${applied}\n`, author: BOT },
    ];
    expect(recordIn(comments, 'example-catalog', 'catalog', BOT)).toEqual({ outcome: 'applied', digest: DIGEST });
  });

  it('ignores a record forged by another account, or written for another source or directory', () => {
    expect(
      recordIn(
        [{ id: 1, body: `ok\n${applied}`, author: { login: BOT.login, id: 7 } }],
        'example-catalog',
        'catalog',
        BOT,
      ),
    ).toBeUndefined();
    expect(recordIn([{ id: 1, body: `ok\n${applied}`, author: BOT }], 'example-catalog', 'other', BOT)).toBeUndefined();
    expect(
      recordIn([{ id: 1, body: `ok\n${applied}`, author: BOT }], 'another-source', 'catalog', BOT),
    ).toBeUndefined();
  });

  it('takes a merge comment of a version before records as an answer, and no other comment of the account', () => {
    expect(
      recordIn([{ id: 1, body: '### ✅ cortex-sync apply: 1 ok, 0 failed, 0 skipped\n', author: BOT }], 's', 'c', BOT),
    ).toBe('legacy');
    expect(recordIn([{ id: 1, body: 'Coverage: 91%\n', author: BOT }], 's', 'c', BOT)).toBeUndefined();
    expect(
      recordIn([{ id: 1, body: '<!-- cortex-sync:plan source=s dir=c -->\n### plan', author: BOT }], 's', 'c', BOT),
    ).toBeUndefined();
  });
});
