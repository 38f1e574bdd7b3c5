/**
 * The flags of `validate`, `plan`, `apply` and `emulator`, defined when one of them is named
 * (`main.ts`). Each action imports the module that runs the command, so `<command> --help` and a
 * refused flag load this file and the table of settings (`engine/settings.ts`, with the kinds whose settings it lists).
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { SettingCommand } from '../core/settings.js';
import { MISSING_DEFINITION_MODES, type MissingDefinitionMode } from '../emulator/contract.js';
import { SETTINGS } from '../engine/settings.js';
import { addSettingOptions } from '../runtime-io/setting-options.js';
import type { CommonOptions } from './run-common.js';
import type { CliSession } from './session.js';

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

/** The options of `cortex-sync emulator`. */
export interface EmulatorFlags {
  port: number;
  host: string;
  data?: string;
  rateLimit?: number;
  missingDefinition: MissingDefinitionMode;
}

/** The settings' flags of `command` (`engine/settings.ts`): one table, every command's flags derived from it. */
const settingFlags = (cmd: Command, command: SettingCommand) => addSettingOptions(cmd, command, SETTINGS);

export const defineValidate = (command: Command, session: CliSession): void => {
  settingFlags(command, 'validate')
    .addOption(new Option('--output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (o: CommonOptions) => {
      const { runValidate } = await import('./run-validate.js');
      session.exit(await runValidate(o, session));
    });
};

export const definePlan = (command: Command, session: CliSession): void => {
  settingFlags(
    command
      .addOption(new Option('--output <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
      .option('--detailed-exitcode', 'exit 2 when there are changes to apply'),
    'plan',
  ).action(async (o: CommonOptions & { detailedExitcode?: boolean }) => {
    const { runPlan } = await import('./run-plan.js');
    session.exit(await runPlan(o, session));
  });
};

export const defineApply = (command: Command, session: CliSession): void => {
  settingFlags(
    command
      .option('--dry-run', 'only plan (sends GET requests only)')
      .option(
        '--auto-approve',
        'apply without asking (env CORTEX_SYNC_AUTO_APPROVE=true); without a terminal on stdin, apply writes nothing unless approved so',
      )
      .option('--plan-log <file>', 'JSON Lines log of every API operation (default .cortex-sync/plan-log-<time>.jsonl)')
      .addOption(
        new Option('--output <format>', 'plan output format').choices(['text', 'json', 'markdown']).default('text'),
      ),
    'apply',
  ).action(async (o: CommonOptions & { dryRun?: boolean; planLog?: string; autoApprove?: boolean }) => {
    const { runApply } = await import('./run-apply.js');
    session.exit(await runApply(o, session));
  });
};

export const defineEmulator = (command: Command, session: CliSession): void => {
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
        .choices(MISSING_DEFINITION_MODES)
        .default('empty-schema'),
    )
    .action(async (o: EmulatorFlags) => {
      const { runEmulator } = await import('./run-emulator.js');
      await runEmulator(o, session);
    });
};
