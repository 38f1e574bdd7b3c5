/**
 * `recheck`: under the lease, what the plan writes read again by identity, and the ownership
 * records (`../recheck.ts`). As the plan read them: that plan is applied, with the records as read
 * now. Otherwise (or when the plan removes objects, or writes a kind with no read by identity) the
 * reading stages run again in full under the lease (`readAgain`), and that plan is applied.
 */
import { recheckWrites } from '../recheck.js';
import { withSignal } from '../recording-client.js';
import type { Stage } from './run.js';

export const recheck: Stage = async (run, ctx) => {
  const first = run.pass;
  if (first?.status !== 'planned') throw new Error('recheck follows a plan');
  const checked = await recheckWrites(first, {
    client: withSignal(ctx.client, ctx.signal),
    handlers: ctx.handlers,
    lookup: ctx.lookup,
    store: ctx.store,
    ...(run.firstReadGets !== undefined ? { fullReadGets: run.firstReadGets } : {}),
  });
  // The records as read now write this source's record.
  if (checked.same) return { ...run, pass: { ...first, ownership: checked.ownership }, underLease: 'recheck' };
  return {
    ...run,
    underLease: 'full',
    readAgain: true,
    ...(checked.fallback !== undefined ? { fallback: checked.fallback } : {}),
  };
};
