/**
 * `npm run bench`'s scorecard round trip (`scorecard-round-trip.ts`) against an emulator in its
 * own process whose workspace starts without scorecards: prints its table and writes the figures
 * next to the other results.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { API_BUDGET_PER_MINUTE } from './analysis.js';
import { startEmulatorProcess } from './processes.js';
import { renderScorecardRoundTrip, runScorecardRoundTrip } from './scorecard-round-trip.js';
import type { BenchContext } from './scenarios.js';

/** Runs the round trip of `n` scorecards and `n` Initiatives with the client at the API's budget. */
export const runScorecardBenchmark = async (ctx: BenchContext, n: number, out: string): Promise<void> => {
  // A data file whose scorecards are none: the emulator starts without its sample scorecards.
  const dataFile = join(ctx.workDir, 'scorecards-emulator.json');
  await writeFile(dataFile, `${JSON.stringify({ version: 1, state: { scorecards: { items: [] } } })}\n`);
  const emulator = await startEmulatorProcess({ apiKey: ctx.apiKey, rateLimit: 0, dataFile });
  try {
    ctx.log(`scorecard round trip: ${n} scorecards + ${n} Initiatives`);
    const result = await runScorecardRoundTrip({
      n,
      workDir: join(ctx.workDir, 'scorecards'),
      emulator,
      apiKey: ctx.apiKey,
      requestsPerMinute: API_BUDGET_PER_MINUTE,
      log: ctx.log,
    });
    process.stdout.write(`\n${renderScorecardRoundTrip(result)}`);
    await writeFile(
      out,
      `${JSON.stringify({ formatVersion: 1, date: new Date().toISOString(), ...result }, null, 2)}\n`,
    );
    ctx.log(`wrote ${out}`);
  } finally {
    await emulator.stop();
  }
};
