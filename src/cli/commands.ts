/**
 * The flags of `validate`, `plan` and `apply`, defined when one of them is named
 * (`main.ts`). Each action imports the module that runs the command, so `<command> --help` and a
 * refused flag load this file and the table of settings (`engine/settings.ts`, with the kinds whose settings it lists).
 */
import { type Command, Option } from 'commander';
import type { SettingCommand } from '../core/settings.js';
import { SETTINGS } from '../engine/settings.js';
import { addSettingOptions } from '../runtime-io/setting-options.js';
import type { CommonOptions } from './run-common.js';
import type { CliSession } from './session.js';

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
      .option('--detailed-exitcode', 'exit 2 when there are changes to apply')
      .option('--out <file>', 'also save the plan to FILE (JSON), for `apply FILE` to apply exactly it'),
    'plan',
  ).action(async (o: CommonOptions & { detailedExitcode?: boolean; out?: string }) => {
    const { runPlan } = await import('./run-plan.js');
    session.exit(await runPlan(o, session));
  });
};

export const defineApply = (command: Command, session: CliSession): void => {
  settingFlags(
    command
      .argument('[plan-file]', 'a plan saved by `plan --out`: applied exactly, without asking; refused when stale')
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
  ).action(
    async (
      file: string | undefined,
      o: CommonOptions & { dryRun?: boolean; planLog?: string; autoApprove?: boolean },
    ) => {
      if (file !== undefined) {
        const { runApplySaved } = await import('./apply-saved.js');
        return session.exit(await runApplySaved(file, o, session));
      }
      const { runApply } = await import('./run-apply.js');
      session.exit(await runApply(o, session));
    },
  );
};
