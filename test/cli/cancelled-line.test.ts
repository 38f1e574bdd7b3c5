/** The last line of an apply declined at the prompt: what it wrote, and where its plan log is, printable. */
import { describe, expect, it } from 'vitest';
import { cancelledLine } from '../../src/cli/cancelled.js';

describe('the line of a declined apply', () => {
  it('says nothing was written when nothing was', () => {
    expect(cancelledLine({ writes: new Map() })).toBe('Apply cancelled: nothing was written.');
  });

  it('names the lease record and the plan log, each escaped once', () => {
    const line = cancelledLine({
      writes: new Map([['inventory/lease\\x', 2]]),
      leaseKey: 'inventory/lease\\x',
      planLogFile: 'logs\nnext/plan.jsonl',
    });
    expect(line).toBe(
      'Apply cancelled: no change was applied; the only writes were 2 requests to the apply lease record `inventory/lease\\\\x` (plan log: logs\\nnext/plan.jsonl).',
    );
    expect(line).not.toContain('\n');
  });
});
