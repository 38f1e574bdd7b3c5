/**
 * What `cortex-sync emulator` runs (the CLI imports this package when it is there: in a clone):
 * starts the emulator and prints how to reach it.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { MissingDefinitionMode } from './contract.js';
import { type RunningEmulator, startEmulator } from './server.js';

export interface EmulatorCommandOptions {
  port?: number;
  host?: string;
  dataFile?: string;
  /** Requests per minute before 429; 0 = no limit. */
  rateLimitPerMinute?: number;
  /** A custom-type entity without `x-cortex-definition`: refused (default) or allowed when its type's schema accepts `{}`. */
  missingDefinition?: MissingDefinitionMode;
}

/**
 * A problem the user can fix (a port in use, a `--data` file that is not the emulator's). The CLI
 * reports it as its own configuration error; it knows it by `name`, as this package is bundled
 * apart from the CLI (an `instanceof` across the two bundles would not hold).
 */
export class EmulatorStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmulatorStartError';
  }
}

/** A `--data` file that can be neither read back nor written is an error now, not when the emulator stops. */
const checkDataFile = async (file: string): Promise<void> => {
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory())
    throw new EmulatorStartError(`--data ${file} is a folder; give a JSON file to keep the state in`);
  try {
    await access(existing ? file : dirname(file), constants.W_OK);
  } catch {
    throw new EmulatorStartError(`--data ${file} cannot be written: the emulator would lose its state when it stops`);
  }
};

/** Whether `host` is a loopback address (or `localhost`). */
export const isLoopback = (host: string): boolean =>
  host === 'localhost' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1' || host === '[::1]';

const portInUse = (error: unknown): boolean =>
  error instanceof Error && (error as NodeJS.ErrnoException).code === 'EADDRINUSE';

/**
 * Starts the emulator. Warns on stderr when it is bound to an address other than loopback. Prints
 * two labelled lines a shell can paste: `export CORTEX_BASE_URL=…`
 * first; then `export CORTEX_API_KEY=…` with a generated key, or, when `CORTEX_API_KEY` is set,
 * a line saying that key is accepted (it is never printed). Problems a user can fix (a port in
 * use, a `--data` file that is not the emulator's or cannot be written) are `EmulatorStartError`s
 * naming the port or file.
 */
export const runEmulatorCommand = async (
  opts: EmulatorCommandOptions,
  io: { stdout: NodeJS.WritableStream; stderr?: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
): Promise<RunningEmulator> => {
  const givenKey = io.env.CORTEX_API_KEY;
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host)) {
    io.stderr?.write(
      `warning: the emulator listens on ${host}, not on loopback: anyone who can reach it can use its webhook and its /_emulator/ control endpoints (state, reset, new keys) without a key\n`,
    );
  }
  if (opts.dataFile !== undefined) await checkDataFile(opts.dataFile);
  let emu: RunningEmulator;
  try {
    emu = await startEmulator({
      ...(opts.port !== undefined ? { port: opts.port } : {}),
      ...(opts.host !== undefined ? { host: opts.host } : {}),
      ...(opts.dataFile !== undefined ? { dataFile: opts.dataFile } : {}),
      ...(opts.rateLimitPerMinute !== undefined ? { rateLimitPerMinute: opts.rateLimitPerMinute } : {}),
      ...(opts.missingDefinition !== undefined ? { missingDefinition: opts.missingDefinition } : {}),
      ...(givenKey ? { apiKey: givenKey } : {}),
    });
  } catch (error) {
    if (portInUse(error))
      throw new EmulatorStartError(
        `port ${opts.port ?? 0} on ${opts.host ?? '127.0.0.1'} is already in use: stop what listens there, or pass another --port (0 picks a free one)`,
        { cause: error },
      );
    const file = opts.dataFile;
    if (file !== undefined && error instanceof Error && (error instanceof SyntaxError || error.message.includes(file)))
      throw new EmulatorStartError(
        `--data ${file} is not a readable emulator data file (${error.message}); move it away to start empty`,
        { cause: error },
      );
    throw error;
  }
  io.stdout.write(`export CORTEX_BASE_URL=${emu.url}\n`);
  if (!givenKey) io.stdout.write(`export CORTEX_API_KEY=${emu.apiKey}\n`);
  else io.stdout.write('# CORTEX_API_KEY: the key already set in the environment is accepted\n');
  return emu;
};
