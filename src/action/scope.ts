/** What every mode of a run shares: the resolved inputs, configuration, ports and reporting. */
import type { ProxySettings } from '../api/proxy.js';
import type { Diagnostic } from '../core/model.js';
import type { SyncConfig } from '../engine/config.js';
import { SUMMARY_BUDGET } from './comment.js';
import { stickyMarker } from './markers.js';
import type { Engine } from './engine.js';
import type { GitHubRun } from './event.js';
import type { GitHubPort } from './github.js';
import type { ActionInputs } from './inputs.js';
import type { RunLabel } from './messages.js';
import type { ActionOutputs } from './report.js';
import type { ActionRuntime } from './runtime.js';
import { NAME_LIMIT, untrustedText } from '../render/untrusted.js';

export interface ActionDeps {
  runtime: ActionRuntime;
  env: NodeJS.ProcessEnv;
  /** The parsed event payload (`GITHUB_EVENT_PATH`), `{}` when there is none. */
  event: unknown;
  engine: Engine;
  /** A port to GitHub with this token (through the run's proxy, when the environment sets one), or undefined when there is no token. */
  github: (token: string, run: GitHubRun, proxy: ProxySettings | undefined) => GitHubPort | undefined;
  cwd: string;
}

/** Everything a mode needs, resolved once. */
export interface RunScope {
  deps: ActionDeps;
  inputs: ActionInputs;
  run: GitHubRun;
  config: SyncConfig;
  label: RunLabel;
  /** Where files for the workflow go (`RUNNER_TEMP`). */
  outDir: string;
  redact: (text: string) => string;
  github?: GitHubPort;
  /** Paths made relative to the repository root. */
  rooted: (diagnostics: readonly Diagnostic[]) => Diagnostic[];
  summary(markdown: string): Promise<void>;
  finish(outputs: ActionOutputs, files?: { planJson?: string; planLog?: string }): number;
}

/** The plan comment's title: the directory, when it is not the repository root. */
export const planTitle = (label: RunLabel): string =>
  `cortex-sync plan${label.dir === '.' ? '' : ` for ${untrustedText(label.dir, NAME_LIMIT)}`}`;

export const marker = (scope: RunScope): string => stickyMarker(scope.label.sourceId, scope.label.dir);

/** How the job summary renders a plan: every change listed, diffs as long as 1 MiB (in bytes) allows. */
export const summaryOptions = (scope: RunScope) => ({
  limit: SUMMARY_BUDGET,
  unit: 'bytes' as const,
  index: true,
  dirFromRoot: scope.label.dir,
  fullPlanAt: `the file the \`plan-json\` output names (upload it as an artifact)`,
});
