/** `cortex-sync plan`: reads the live workspace (GET only) and prints what apply would do. */
import { exitCodeOf } from '../core/outcome.js';
import { reconcile } from '../engine/reconcile.js';
import { renderDiagnostics } from '../render/index.js';
import { manifestText, writeLine } from '../runtime-io/io.js';
import { renderRunPlan } from './output.js';
import { planOut } from './plan-out.js';
import { createReadProgress } from './progress.js';
import { contextFor } from './engine-context.js';
import { type CommonOptions, configFor } from './run-common.js';
import { withPrintableEvents } from './safe-output.js';
import type { CliSession } from './session.js';

export const runPlan = async (o: CommonOptions & { detailedExitcode?: boolean; out?: string }, session: CliSession) => {
  const { io, clock, stop } = session;
  const c = await configFor(o, session);
  if (!c) return 1;
  // While the workspace is read: a Retry-After pause or a slow answer is said at once, and a
  // line comes at least every 10 s while the reads go on.
  const reading = withPrintableEvents(createReadProgress({ stream: io.stderr, clock, signal: stop }));
  const ctx = contextFor(c, reading, session);
  reading.start(() => ctx.client.stats());
  try {
    const out = o.out !== undefined ? planOut(o.out, session) : undefined;
    const result = await reconcile({ config: c, mode: 'plan', ...(out ? { onPlanned: out.onPlanned } : {}) }, ctx);
    reading.finish();
    if (result.diagnostics.length)
      writeLine(
        io.stderr,
        renderDiagnostics(result.diagnostics, { color: session.colorErr, source: manifestText(c.dir) }),
      );
    const shown = renderRunPlan(result, o.output, { color: session.colorOut });
    if (shown !== '') writeLine(io.stdout, shown);
    await out?.save(c, result);
    return exitCodeOf(result.run, o.detailedExitcode ? { detailedExitcode: true } : {});
  } finally {
    reading.finish();
    await ctx.close();
  }
};
