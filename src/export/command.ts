/**
 * The flags of `cortex-sync export --out DIR [--kinds K,K] [--only unmanaged|all]
 * [--include-archived] [--force] [--schema-base URL|DIR]`, defined when the command is named (`src/cli/main.ts`); its
 * action imports `run-command.ts`, which writes the live workspace as manifests in the repository layout.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { KindName } from '../core/model.js';
import { KIND_NAMES } from '../kinds/registry.js';
import { SETTINGS } from '../engine/settings.js';
import type { CliIo } from '../runtime-io/io.js';
import { addSettingOptions } from '../runtime-io/setting-options.js';
import type { ExportScope } from './files.js';

export interface ExportOptions {
  out: string;
  kinds?: KindName[];
  only: ExportScope;
  includeArchived?: boolean;
  force?: boolean;
  includeOtherSources?: boolean;
  schemaBase?: string;
  sourceId?: string;
  /** The settings' flags (`engine/settings.ts`: `--source-id`, `--base-url`, …), by their keys. */
  [setting: string]: unknown;
}

/** `--kinds entity,dependency` → the kind names, each checked. */
export const parseKinds = (value: string): KindName[] => {
  const names = value
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  const unknown = names.filter((k) => !(KIND_NAMES as readonly string[]).includes(k));
  if (names.length === 0 || unknown.length > 0) {
    throw new InvalidArgumentError(
      `${unknown.length > 0 ? `unknown kind ${unknown.join(', ')}; ` : ''}expected a comma-separated list of ${KIND_NAMES.join(', ')}`,
    );
  }
  return names;
};

/** Adds the flags of `export` to its command; `done` receives its exit code. */
export const defineExportCommand = (command: Command, io: CliIo, done: (code: number) => void): void => {
  command
    .requiredOption('--out <dir>', 'directory to write the manifests to (a repository root)')
    .option('--kinds <kinds>', `kinds to export, comma-separated (default all: ${KIND_NAMES.join(',')})`, parseKinds)
    .addOption(
      new Option(
        '--only <which>',
        'unmanaged: only what no repository manages yet; all: that and what this source id manages',
      )
        .choices(['unmanaged', 'all'])
        .default('all'),
    )
    .option('--include-archived', 'export archived entities too (apply would unarchive them)')
    .option('--include-other-sources', 'export objects other source ids manage too (left out by default)')
    .option('--force', 'replace files that exist already')
    .option(
      '--schema-base <url-or-dir>',
      "where each file's schema line points: an http(s) URL or a folder holding <kind>.schema.json (default: the schemas written to DIR/.cortex-sync-schemas/)",
    );
  addSettingOptions(command, 'export', SETTINGS).action(async (o: ExportOptions) => {
    const { runExport } = await import('./run-command.js');
    done(await runExport(o, io));
  });
};
