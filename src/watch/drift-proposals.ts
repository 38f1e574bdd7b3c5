/**
 * What a heal run does with drift (`--on-drift`, `onDrift`): a plan made on the revision the last
 * apply applied, whose changes put back values changed outside git. `heal` (the default) applies
 * it; `report` holds it (nothing written) and says so in the log, `/status` and the metric
 * `cortex_sync_drift_objects{source}`; `pr` proposes the live values as one pull request per
 * source (`drift/pull-request.ts`) and holds the drifted objects while it is open, heals once it
 * was closed without merging. A source that is not a git repository, no GitHub token or
 * repository, or a push GitHub refuses: reported only, with a log line saying why.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Gauge, type Registry } from 'prom-client';
import type { Plan } from '../core/model.js';
import { driftedChanges, proposeDrift } from '../drift/proposal.js';
import { type DriftGitHubOptions, type DriftPullPort, octokitDriftPulls } from '../drift/github.js';
import { proposeAsPullRequest } from '../drift/pull-request.js';
import type { SyncConfig } from '../engine/config.js';
import { kindsFor } from '../kinds/registry.js';
import type { ReconciledRun } from '../engine/reconcile.js';
import type { Logger } from './log.js';
import type { Judged } from './run-record.js';
import type { Source, SourceSnapshot } from './source.js';

/** Largest manifest a drift proposal edits (the loader's own limit). */
const MAX_MANIFEST_BYTES = 1024 * 1024;
const NAMED = 10;

export interface DriftWatchOptions {
  source: Source;
  log: Logger;
  registry: Registry;
  /** Every output's redaction (the API key, the git token, the other secrets). */
  redact: (text: string) => string;
  /** The revision the last apply applied: drift is judged only on it. */
  appliedRevision: () => string | undefined;
  /** Where the pull requests are opened; none: `pr` reports only. */
  github?: Omit<DriftGitHubOptions, 'userAgent'>;
  userAgent: string;
  /** Builds the GitHub port (tests). */
  pulls?: (options: DriftGitHubOptions) => DriftPullPort;
  now: () => number;
}

/** A drift run held: nothing is written; what was done instead. */
export interface DriftHeld {
  mode: 'pr' | 'report';
  objects: number;
  why: string;
  pull?: { number: number; url?: string };
}

const readManifest = (root: string, file: string): { text: string } | { reason: string } => {
  try {
    const stat = lstatSync(join(root, file));
    if (stat.isSymbolicLink()) return { reason: 'is a symlink: edit the file it points at' };
    if (!stat.isFile()) return { reason: 'is not a regular file' };
    if (stat.size > MAX_MANIFEST_BYTES) return { reason: 'is larger than a manifest may be' };
    return { text: readFileSync(join(root, file), 'utf8') };
  } catch (error) {
    return { reason: `could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
};

export class DriftWatch {
  private readonly gauge: Gauge<'source'>;
  private last: (DriftHeld & { at: string; source: string }) | undefined;

  constructor(private readonly options: DriftWatchOptions) {
    this.gauge = new Gauge({
      name: 'cortex_sync_drift_objects',
      help: 'Managed objects whose live value differs from git with no new commit, at the last heal run (held by onDrift pr or report, or put back by heal).',
      labelNames: ['source'],
      registers: [options.registry],
    });
  }

  /** What `/status` shows of the last drift a heal run held. */
  state(): (DriftHeld & { at: string; source: string }) | undefined {
    return this.last;
  }

  /**
   * A heal run's plan before anything is written: held (`DriftHeld`) or undefined (apply it).
   * Not drift when the snapshot is not the revision the last apply applied.
   */
  async judge(plan: Plan, config: SyncConfig, snapshot: SourceSnapshot): Promise<DriftHeld | undefined> {
    if (snapshot.revision !== this.options.appliedRevision()) return undefined;
    const source = config.sourceId ?? snapshot.dir;
    const drifted = driftedChanges(plan, config.sourceId);
    this.gauge.set({ source }, drifted.length);
    const mode = config.onDrift ?? 'heal';
    if (drifted.length === 0) this.last = undefined;
    if (drifted.length === 0 || mode === 'heal') return undefined;
    const names = drifted.slice(0, NAMED).map(({ change }) => `${change.kind}/${change.id}`);
    const held = mode === 'pr' ? await this.propose(plan, config, snapshot, drifted.length) : undefined;
    if (held === null) return undefined;
    const result: DriftHeld = held ?? { mode: 'report', objects: drifted.length, why: 'onDrift is report' };
    this.options.log.warn(`drift: ${drifted.length} object(s) changed outside git, not healed: ${result.why}`, {
      drifted: names,
      ...(result.pull ? { pullRequest: result.pull.number } : {}),
    });
    this.last = { ...result, source, at: new Date(this.options.now()).toISOString() };
    return result;
  }

  /** `pr`: the pull request; null: heal (it was closed without merging); report when it cannot be made. */
  private async propose(
    plan: Plan,
    config: SyncConfig,
    snapshot: SourceSnapshot,
    objects: number,
  ): Promise<DriftHeld | null> {
    const report = (why: string): DriftHeld => ({ mode: 'report', objects, why: `reported only: ${why}` });
    const repository = this.options.source.driftRepository?.();
    if (repository === undefined) return report('the source is not a git repository (onDrift pr needs --repo)');
    const github = this.options.github;
    if (github === undefined)
      return report(
        'no GitHub repository or token for the pull request (GITHUB_TOKEN or the git token, GITHUB_REPOSITORY or a github.com remote)',
      );
    const proposal = proposeDrift({
      plan,
      sourceId: config.sourceId,
      kinds: kindsFor(config),
      readText: (file) => readManifest(snapshot.dir, file),
      now: this.options.now(),
    });
    const pulls = (this.options.pulls ?? octokitDriftPulls)({ ...github, userAgent: this.options.userAgent });
    try {
      const decision = await proposeAsPullRequest({
        plan,
        proposal,
        source: config.sourceId ?? repository.remote,
        baseBranch: repository.branch,
        baseRevision: repository.revision,
        prefix: repository.prefix,
        git: repository.git,
        github: pulls,
        redact: this.options.redact,
      });
      if (decision.action === 'heal') {
        this.options.log.info(`drift: ${decision.why}`, decision.pull ? { pullRequest: decision.pull.number } : {});
        this.last = undefined;
        return null;
      }
      if (decision.action === 'report') return report(decision.why);
      return {
        mode: 'pr',
        objects,
        why: decision.why,
        ...(decision.pull
          ? { pull: { number: decision.pull.number, ...(decision.pull.url ? { url: decision.pull.url } : {}) } }
          : {}),
      };
    } catch (error) {
      return report(this.options.redact(error instanceof Error ? error.message : String(error)));
    }
  }
}

/** A heal run whose drift was held: nothing written, no retry; the record names what was done instead. */
export const judgeDriftHeld = (result: ReconciledRun, held: DriftHeld, warnings: string[]): Judged => ({
  result: 'deferred',
  reason: 'drift-held',
  verdict: { ok: true, retry: false },
  errors: [],
  warnings,
  report: result.run,
  fields: { summary: result.run.plannedTotal },
});

/** `owner/repo` of a GitHub remote URL (https or ssh), when it is one. */
const githubRepositoryOf = (url: string): string | undefined =>
  /github\.com[:/]([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(url.trim())?.[1];

/**
 * Where `--on-drift pr` opens pull requests: `GITHUB_REPOSITORY` or the github.com remote, with
 * `GITHUB_TOKEN` or the token the source fetches with, at `GITHUB_API_URL` (GitHub Enterprise
 * Server) or api.github.com. Undefined when either is missing.
 */
export const driftGitHubOf = (
  env: NodeJS.ProcessEnv,
  remote: string | undefined,
  gitToken: string | undefined,
): Omit<DriftGitHubOptions, 'userAgent'> | undefined => {
  const repository = env.GITHUB_REPOSITORY?.trim() || (remote ? githubRepositoryOf(remote) : undefined);
  const token = env.GITHUB_TOKEN?.trim() || gitToken;
  const [owner, repo] = repository?.split('/') ?? [];
  if (!owner || !repo || !token) return undefined;
  return { owner, repo, token, apiUrl: env.GITHUB_API_URL?.trim() || 'https://api.github.com' };
};
