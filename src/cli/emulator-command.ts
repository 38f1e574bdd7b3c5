/**
 * `cortex-sync emulator`: the API emulator, which is the workspace package `@cortex-sync/emulator`
 * (`packages/emulator/`), not part of the published cortex-sync. In a clone of the repository
 * (after `npm ci`, which builds it) the command imports it when named and runs it until the
 * process is asked to stop; where it is not installed, the command says where to run it from.
 */
import { resolve } from 'node:path';
import type * as Emulator from '@cortex-sync/emulator';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '../core/errors.js';
import type { CliSession } from './session.js';

type EmulatorPackage = typeof Emulator;
type MissingDefinitionMode = EmulatorPackage['MISSING_DEFINITION_MODES'][number];

/** Where the emulator is found: the published package does not carry it. */
const NOT_INSTALLED_MESSAGE =
  'the emulator is not part of the published cortex-sync: run `cortex-sync emulator` from a clone of its repository, after `npm ci` there';
/** A clone whose emulator was never built (or whose build was removed). */
const NOT_BUILT_MESSAGE =
  'the emulator (packages/emulator) is not built here: run `npm run build` (`npm ci` builds it too)';

/** The options of `cortex-sync emulator`. */
interface EmulatorFlags {
  port: number;
  host: string;
  data?: string;
  rateLimit?: number;
  missingDefinition: MissingDefinitionMode;
}

const nonNegativeInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number ≥ 0');
  return n;
};
const port = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected a port number 0–65535');
  return n;
};

/**
 * Node's words when the package itself is missing, or its build: not when something the package
 * imports is (that is a broken install, reported as the internal error it is).
 */
const NOT_INSTALLED = /^Cannot find package '@cortex-sync\/emulator'/;
const NOT_BUILT = /^Cannot find module '[^']*[\\/]emulator[\\/]dist[\\/]index\.js'/;

/** The emulator package, or why this install has none to run. */
const loadEmulator = async (): Promise<EmulatorPackage | { missing: string }> => {
  try {
    return await import('@cortex-sync/emulator');
  } catch (error) {
    const message = String((error as Error).message);
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    if (NOT_INSTALLED.test(message)) return { missing: NOT_INSTALLED_MESSAGE };
    if (NOT_BUILT.test(message)) return { missing: NOT_BUILT_MESSAGE };
    throw error;
  }
};

const run = async (emulator: EmulatorPackage, o: EmulatorFlags, session: CliSession): Promise<void> => {
  const { io } = session;
  let running;
  try {
    running = await emulator.runEmulatorCommand(
      {
        port: o.port,
        host: o.host,
        ...(o.data ? { dataFile: resolve(io.cwd, o.data) } : {}),
        ...(o.rateLimit !== undefined ? { rateLimitPerMinute: o.rateLimit } : {}),
        missingDefinition: o.missingDefinition,
      },
      { stdout: io.stdout, stderr: io.stderr, env: io.env },
    );
  } catch (error) {
    // The package is bundled apart from the CLI: its error class is known by name, not by identity.
    if (error instanceof Error && error.name === 'EmulatorStartError')
      throw new ConfigError(error.message, { cause: error });
    throw error;
  }
  await (io.untilStopped?.() ?? new Promise<void>(() => {}));
  await running.stop();
};

/** Defines `cortex-sync emulator` (`main.ts`): its flags and action, or a refusal saying where it runs. */
export const defineEmulator = async (): Promise<(command: Command, session: CliSession) => void> => {
  const emulator = await loadEmulator();
  if ('missing' in emulator) {
    const { missing } = emulator;
    return (command) => {
      command
        .allowUnknownOption()
        .allowExcessArguments()
        .action(() => {
          throw new ConfigError(missing);
        });
    };
  }
  return (command, session) => {
    command
      .option('--port <n>', 'port (0 = any free port)', port, 0)
      .option('--host <host>', 'address to bind', '127.0.0.1')
      .option('--data <file>', 'load state from and save it to this JSON file')
      .option('--rate-limit <n>', 'requests per minute before 429 (default 1000; 0 = no limit)', nonNegativeInt)
      .addOption(
        new Option(
          '--missing-definition <mode>',
          "a custom-type entity without x-cortex-definition: accept it only when its type's schema is {} (empty-schema), always refuse it ('Definition is required'), or allow it whenever its type's schema accepts {}",
        )
          .choices(emulator.MISSING_DEFINITION_MODES)
          .default('empty-schema'),
      )
      .action((o: EmulatorFlags) => run(emulator, o, session));
  };
};
