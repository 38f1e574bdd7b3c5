/**
 * The emulator as the benchmark runs it: its own process, like `cortex-sync emulator`, plus the
 * rate-limit burst (the CLI's bucket holds a whole minute's worth, which would hide any client
 * that outruns the budget). Prints the base URL on the first stdout line; SIGTERM stops it and
 * saves `--data`. Usage: `node emulator-process.js [--rate-limit N] [--burst N] [--data FILE]`.
 */
import { startEmulator } from '../../emulator/src/server.js';

const option = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};

const apiKey = process.env.CORTEX_API_KEY;
if (!apiKey) {
  process.stderr.write('CORTEX_API_KEY must be set\n');
  process.exit(1);
}
const rate = Number(option('--rate-limit') ?? 0);
const burst = option('--burst');
const dataFile = option('--data');
const emulator = await startEmulator({
  apiKey,
  rateLimitPerMinute: rate,
  ...(burst !== undefined ? { rateLimitBurst: Number(burst) } : {}),
  ...(dataFile !== undefined ? { dataFile } : {}),
});
process.stdout.write(`${emulator.url}\n`);

const stop = (): void => {
  void emulator.stop().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
