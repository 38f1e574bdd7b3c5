/**
 * The `cortex-sync` command. A thin entrypoint: parse flags, hand the named command its session,
 * return the exit code (0 ok, 1 error, 2 changes with `plan --detailed-exitcode`). The only place
 * that renders errors.
 *
 * Start-up loads commander and this table, nothing more: a command's flags are defined only when
 * it is named (`commands.ts`, and each runtime's `command.ts`), and its action imports the code
 * that runs it. `--help` lists the commands from the table (and loads `help.ts` for the
 * environment's help); `--version` needs nothing else.
 */
import { Command, CommanderError } from 'commander';
import { ApiError, CortexSyncError, InterruptedError } from '../core/errors.js';
import { signalExitCode } from '../core/outcome.js';
import { printable } from '../core/printable.js';
import { type CliIo, stoppedBy, unreachableHint, writeLine } from '../runtime-io/io.js';
import { VERSION } from '../version.js';
import { type CliSession, createSession } from './session.js';

/** Adds a named command's flags and action to the command `main.ts` created for it. */
type DefineCommand = (command: Command, session: CliSession) => void;

interface CommandEntry {
  name: string;
  description: string;
  define: () => Promise<DefineCommand>;
}

/** Every command, in the order `--help` lists them. */
const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'validate',
    description: 'offline: parse and check every manifest and the references between them',
    define: async () => (await import('./commands.js')).defineValidate,
  },
  {
    name: 'plan',
    description: 'read the live workspace and print what apply would do (GET requests only)',
    define: async () => (await import('./commands.js')).definePlan,
  },
  {
    name: 'apply',
    description:
      'plan, then apply the changes in dependency order; apply FILE applies exactly a plan saved by plan --out',
    define: async () => (await import('./commands.js')).defineApply,
  },
  {
    name: 'status',
    description: "a source's record: objects per kind, its origin, its lease, the last apply (GET requests only)",
    define: async () => (await import('./status.js')).defineStatus,
  },
  {
    name: 'emulator',
    description: 'start the API emulator on loopback and print its base URL (in a clone of the repository)',
    define: async () => (await import('./emulator-command.js')).defineEmulator(),
  },
  {
    name: 'export',
    description: 'write the live workspace as manifests (GET requests only); plan on the result shows no change',
    define: async () => {
      const { defineExportCommand } = await import('../export/command.js');
      return (command, session) => defineExportCommand(command, session.io, session.exit);
    },
  },
  {
    name: 'watch',
    description:
      'keep the workspace in sync with a git branch (or a local directory); serves health, metrics, webhooks',
    define: async () => {
      const { defineWatchCommand } = await import('../watch/command.js');
      return (command, session) => defineWatchCommand(command, session.io, session.exit);
    },
  },
  {
    name: 'webhook-route',
    description: 'offline: which entity of the repository an inbound custom webhook gives a payload to, and why',
    define: async () => {
      const { defineWebhookRouteCommand } = await import('../webhook-route/command.js');
      return (command, session) => defineWebhookRouteCommand(command, session.io, session.exit);
    },
  },
];

/**
 * The command the arguments name: the first word (the program's own options take no value), or
 * the word after `help`. Undefined for `--help`, `--version` or nothing.
 */
const namedCommand = (argv: readonly string[]): string | undefined => {
  const words = argv.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
};

export const runCli = async (argv: readonly string[], processIo: CliIo): Promise<number> => {
  let exitCode = 0;
  let debug = argv.includes('--debug');
  const session = createSession(processIo, (code) => {
    exitCode = code;
  });
  const { io } = session;

  const program = new Command('cortex-sync')
    .description('Declarative GitOps sync of a Cortex workspace from YAML manifests')
    .version(VERSION)
    .option('--debug', 'print stack traces of errors')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    // Every command has options, defined or not yet: the list says so for each.
    .configureHelp({
      subcommandTerm: (cmd) => (cmd.name() === 'help' ? 'help [command]' : `${cmd.name()} [options]`),
    });

  const defined = new Set<string>();
  /** Defines the command `name` (once): its flags, its action. Unknown names are commander's to refuse. */
  const define = async (name: string | undefined): Promise<void> => {
    const entry = COMMANDS.find((c) => c.name === name);
    const command = program.commands.find((c) => c.name() === name);
    if (!entry || !command || defined.has(entry.name)) return;
    defined.add(entry.name);
    (await entry.define())(command, session);
  };
  for (const entry of COMMANDS) program.command(entry.name).description(entry.description);
  // The command commander dispatches is defined before it parses its own flags (after `--`, say).
  program.hook('preSubcommand', (_program, command) => define(command.name()));

  try {
    // `help <command>` prints without the hook: the named command is defined before parsing.
    const named = namedCommand(argv);
    await define(named);
    // The environment's help is derived from the table of settings (every kind's too): loaded only
    // when no command is named, so a command's start-up stays commander and the command table.
    if (named === undefined) program.addHelpText('after', (await import('./help.js')).ENVIRONMENT_HELP);
    await program.parseAsync([...argv], { from: 'user' });
    debug = Boolean(program.opts().debug) || debug;
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 1;
    const stop = session.stop;
    if (error instanceof InterruptedError) {
      writeLine(io.stderr, `${stoppedBy(stop)}: ${printable(error.message)}.`);
      return signalExitCode(stoppedBy(stop));
    }
    const said = printable(error instanceof Error ? error.message : String(error));
    const message =
      error instanceof ApiError && error.status === undefined && session.apiHost !== undefined
        ? `error: ${said}; ${printable(unreachableHint(error, session.apiHost))}`
        : error instanceof CortexSyncError
          ? `error: ${said}`
          : `internal error: ${said}${debug ? '' : ' (run with --debug for details)'}`;
    writeLine(io.stderr, message);
    if (debug && error instanceof Error && error.stack) writeLine(io.stderr, error.stack);
    return 1;
  }
};
