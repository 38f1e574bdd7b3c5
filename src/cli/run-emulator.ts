/** `cortex-sync emulator`: runs the built-in API emulator until the process is asked to stop. */
import { resolve } from 'node:path';
import { runEmulatorCommand } from '../emulator/cli.js';
import type { EmulatorFlags } from './commands.js';
import type { CliSession } from './session.js';

export const runEmulator = async (o: EmulatorFlags, session: CliSession): Promise<void> => {
  const { io } = session;
  const emulator = await runEmulatorCommand(
    {
      port: o.port,
      host: o.host,
      ...(o.data ? { dataFile: resolve(io.cwd, o.data) } : {}),
      ...(o.rateLimit !== undefined ? { rateLimitPerMinute: o.rateLimit } : {}),
      missingDefinition: o.missingDefinition,
    },
    { stdout: io.stdout, stderr: io.stderr, env: io.env },
  );
  await (io.untilStopped?.() ?? new Promise<void>(() => {}));
  await emulator.stop();
};
