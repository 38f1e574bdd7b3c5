/**
 * What `validate`, `plan` and `apply` share once they run: the manifest root's check and the run's
 * configuration from the flags (`engine/config.ts` `configureRun`). The engine context, with its
 * HTTP client, is `engine-context.ts`: `validate` never loads it.
 */
import { resolve } from 'node:path';
import { hasErrors } from '../core/model.js';
import { configureRun, type OperatorSettings, type SyncConfig } from '../engine/config.js';
import { SETTINGS } from '../engine/settings.js';
import { renderDiagnostics } from '../render/index.js';
import { settingsSaid } from '../runtime-io/setting-options.js';
import { manifestRootProblems, writeLine } from '../runtime-io/io.js';
import type { CliSession } from './session.js';

export interface CommonOptions {
  dir?: string;
  debug?: boolean;
  sourceId?: string;
  baseUrl?: string;
  prune?: boolean;
  allowMassDelete?: boolean;
  allowTakeover?: boolean;
  concurrency?: number;
  forceEntityTypeSchema?: boolean;
  breakLease?: boolean;
  strict?: boolean;
  allowEmpty?: boolean;
  output?: 'text' | 'json' | 'markdown';
  /** The other settings' flags (`--prune-entities`, `--protect`, …), by their keys. */
  [setting: string]: unknown;
}

/** What the flags of a command say, by the names every runtime uses (the table of settings, `engine/settings.ts`). */
export const settingsOf = (o: CommonOptions): OperatorSettings => settingsSaid(o, SETTINGS);

/** A manifest root (flag, CORTEX_SYNC_DIR or the current directory) that is missing or a file: said, true. */
export const rootMissing = async (o: CommonOptions, session: CliSession): Promise<boolean> => {
  const { io } = session;
  const root = resolve(io.cwd, o.dir ?? io.env.CORTEX_SYNC_DIR ?? '.');
  const problems = await manifestRootProblems(root, o.dir !== undefined ? '--dir' : 'the manifest root');
  if (problems.length) writeLine(io.stderr, renderDiagnostics(problems, { color: session.colorErr }));
  return problems.length > 0;
};

/** The run's configuration, its key added to the redaction; undefined (said) when it has errors. */
export const configFor = async (o: CommonOptions, session: CliSession): Promise<SyncConfig | undefined> => {
  if (await rootMissing(o, session)) return undefined;
  const { io } = session;
  const { config, diagnostics } = await configureRun({ said: settingsOf(o) }, io.env, io.cwd);
  session.redaction.add(config.apiKey);
  if (diagnostics.length) writeLine(io.stderr, renderDiagnostics(diagnostics, { color: session.colorErr }));
  return hasErrors(diagnostics) ? undefined : config;
};
