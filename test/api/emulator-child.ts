/**
 * The emulator in a process of its own, for tests whose measure is when requests arrive: in the
 * test's own process, a busy event loop would stamp arrivals late. Faults come as JSON in
 * EMULATOR_FAULTS; prints the base URL on the first stdout line; SIGTERM stops it.
 */
import { parseFaults } from '../../packages/emulator/src/faults.js';
import { startEmulator } from '../../packages/emulator/src/server.js';

const emulator = await startEmulator({
  apiKey: process.env.CORTEX_API_KEY ?? '',
  rateLimitPerMinute: Number(process.env.EMULATOR_RATE_LIMIT ?? 0),
  faults: parseFaults(JSON.parse(process.env.EMULATOR_FAULTS ?? '{}')),
});
process.stdout.write(`${emulator.url}\n`);
process.once('SIGTERM', () => {
  void emulator.stop().then(() => process.exit(0));
});
