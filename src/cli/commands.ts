/**
 * The flags of `validate`, `plan` and `apply`, defined when one of them is named
 * (`main.ts`). Each action imports the module that runs the command, so `<command> --help` and a
 * refused flag load nothing but this file.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CommonOptions } from './run-common.js';
import type { CliSession } from './session.js';

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
};
/** The same bound as `concurrency` in cortex-sync.yaml and CORTEX_SYNC_CONCURRENCY. */
const concurrency = (value: string): number => {
  const n = positiveInt(value);
  if (n > 64) throw new InvalidArgumentError('expected at most 64');
  return n;
};
const dirOption = () => new Option('--dir <dir>', 'manifest root (default: the current directory)');
const allowEmptyOption = () =>
  new Option(
    '--allow-empty',
    'a manifest root with no manifest is an empty repository on purpose (else an error: a mistyped --dir must not look like one)',
  );
const strictOptions = (cmd: Command) =>
  cmd
    .option('--strict', 'every warning is an error (env CORTEX_SYNC_STRICT; strict: true in cortex-sync.yaml)')
    .option('--no-strict', 'warnings stay warnings, whatever cortex-sync.yaml or CORTEX_SYNC_STRICT says');
const sharedSyncOptions = (cmd: Command) =>
  strictOptions(cmd)
    .addOption(dirOption())
    .addOption(allowEmptyOption())
    .option('--prune', 'remove objects this repository manages whose manifests are gone')
    .option('--no-prune', 'never prune in this run, whatever cortex-sync.yaml or CORTEX_SYNC_PRUNE says')
    .option('--allow-mass-delete', 'allow a prune above the configured share or count of managed objects')
    .option('--allow-takeover', 'take over objects another source id manages')
    .option('--source-id <id>', 'identifies this repository in the ownership records')
    .option('--base-url <url>', 'API base address (env CORTEX_BASE_URL)');

export const defineValidate = (command: Command, session: CliSession): void => {
  strictOptions(command)
    .addOption(dirOption())
    .addOption(allowEmptyOption())
    .addOption(new Option('--output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (o: CommonOptions) => {
      const { runValidate } = await import('./run-validate.js');
      session.exit(await runValidate(o, session));
    });
};

export const definePlan = (command: Command, session: CliSession): void => {
  sharedSyncOptions(
    command
      .addOption(new Option('--output <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
      .option('--detailed-exitcode', 'exit 2 when there are changes to apply')
      .option('--out <file>', 'also save the plan to FILE (JSON), for `apply FILE` to apply exactly it'),
  ).action(async (o: CommonOptions & { detailedExitcode?: boolean; out?: string }) => {
    const { runPlan } = await import('./run-plan.js');
    session.exit(await runPlan(o, session));
  });
};

export const defineApply = (command: Command, session: CliSession): void => {
  sharedSyncOptions(
    command
      .argument('[plan-file]', 'a plan saved by `plan --out`: applied exactly, without asking; refused when stale')
      .option('--dry-run', 'only plan (sends GET requests only)')
      .option(
        '--auto-approve',
        'apply without asking (env CORTEX_SYNC_AUTO_APPROVE=true); without a terminal on stdin, apply writes nothing unless approved so',
      )
      .option('--plan-log <file>', 'JSON Lines log of every API operation (default .cortex-sync/plan-log-<time>.jsonl)')
      .option('--concurrency <n>', 'changes applied at once (1–64)', concurrency)
      .option('--force-entity-type-schema', 'allow entity type schema changes that break existing entities')
      .option(
        '--break-lease',
        "take this source's apply lease even if another apply holds it (prints whose lease it broke; that apply stops starting changes)",
      )
      .addOption(
        new Option('--output <format>', 'plan output format').choices(['text', 'json', 'markdown']).default('text'),
      ),
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
