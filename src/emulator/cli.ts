/** The `cortex-sync emulator` command: starts the emulator and prints how to reach it. */
import { type RunningEmulator, startEmulator } from './server.js';

export interface EmulatorCommandOptions {
  port?: number;
  host?: string;
  dataFile?: string;
  rateLimitPerMinute?: number;
}

/**
 * Starts the emulator. The first stdout line is the base URL (`http://127.0.0.1:PORT`). When
 * `CORTEX_API_KEY` is set that key is accepted as admin and not printed; otherwise a key is
 * generated and printed on the second line (the user needs it to talk to the emulator).
 */
export const runEmulatorCommand = async (
  opts: EmulatorCommandOptions,
  io: { stdout: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
): Promise<RunningEmulator> => {
  const givenKey = io.env.CORTEX_API_KEY;
  const emu = await startEmulator({
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    ...(opts.dataFile !== undefined ? { dataFile: opts.dataFile } : {}),
    ...(opts.rateLimitPerMinute !== undefined ? { rateLimitPerMinute: opts.rateLimitPerMinute } : {}),
    ...(givenKey ? { apiKey: givenKey } : {}),
  });
  io.stdout.write(`${emu.url}\n`);
  if (!givenKey) io.stdout.write(`${emu.apiKey}\n`);
  return emu;
};
