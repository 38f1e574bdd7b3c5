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
export const EMULATOR_NOT_INSTALLED =
  'the emulator is not part of the published cortex-sync: run `cortex-sync emulator` from a clone of its repository, after `npm ci` there (or `npm run build`, which builds the emulator too)';

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

/** The emulator package, or undefined when this install has none (or it is not built). */
const loadEmulator = async (): Promise<EmulatorPackage | undefined> => {
  try {
    return await import('@cortex-sync/emulator');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') return undefined;
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
  if (!emulator)
    return (command) => {
      command
        .allowUnknownOption()
        .allowExcessArguments()
        .action(() => {
          throw new ConfigError(EMULATOR_NOT_INSTALLED);
        });
    };
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
