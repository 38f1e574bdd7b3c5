/**
 * What an apply declined at the prompt says it wrote. Declining comes after the apply took its
 * lease (the plan shown is the one planned under it), so "nothing was written" is true only
 * without a lease: the line names every object written to, from the plan log's own count.
 */
import { printable } from '../core/printable.js';
import { countOf } from '../core/plural.js';

/** Objects named before the rest are counted. */
const NAMED = 5;

export const cancelledLine = (input: {
  /** Write requests per `kind/id`, from the plan log. */
  writes: ReadonlyMap<string, number>;
  /** `kind/id` of this source's apply lease record, when the run had a source id. */
  leaseKey?: string;
  /** The plan log, when it was kept. */
  planLogFile?: string;
}): string => {
  const entries = [...input.writes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return 'Apply cancelled: nothing was written.';
  const described = entries.slice(0, NAMED).map(([key, n]) => {
    const what = key === input.leaseKey ? `the apply lease record \`${printable(key)}\`` : `\`${printable(key)}\``;
    return `${countOf(n, 'request')} to ${what}`;
  });
  const more = entries.length > NAMED ? ` and ${countOf(entries.length - NAMED, 'other object')}` : '';
  const log = input.planLogFile !== undefined ? ` (plan log: ${printable(input.planLogFile)})` : '';
  return `Apply cancelled: no change was applied; the only writes were ${described.join(', ')}${more}${log}.`;
};
