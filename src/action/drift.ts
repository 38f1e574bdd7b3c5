/**
 * `command: drift`, for a scheduled workflow on the branch the Action applies: a plan of the
 * checked-out commit; its changes that put back values changed outside git are the drift
 * (`drift/proposal.ts`). `on-drift` says what then: `report` (the job summary and the outputs),
 * `pr` (the live values written into the manifests in place, one pull request for this source
 * opened or updated with the checkout's token, `drift/pull-request.ts`; a push or a pull request
 * GitHub refuses falls back to report, saying why) or `heal` (apply git's values, as today; also
 * what `pr` does once its pull request was closed without merging).
 */
import { readFileSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { countOf } from '../core/plural.js';
import { gitToLive } from '../drift/body.js';
import { processGit } from '../drift/git-commit.js';
import { octokitDriftPulls } from '../drift/github.js';
import { driftedChanges, proposeDrift } from '../drift/proposal.js';
import { type DriftDecision, proposeAsPullRequest } from '../drift/pull-request.js';
import { openPlanLog } from '../engine/plan-log.js';
import { kindsFor } from '../kinds/registry.js';
import { renderPlanMarkdown } from '../render/markdown.js';
import { untrustedMessage } from '../render/untrusted.js';
import { VERSION } from '../version.js';
import { annotate, noRunOutputs, outputsOf } from './report.js';
import type { RunScope } from './scope.js';

const readManifest = (root: string, file: string): { text: string } | { reason: string } => {
  try {
    if (lstatSync(join(root, file)).isSymbolicLink()) return { reason: 'is a symlink: edit the file it points at' };
    return { text: readFileSync(join(root, file), 'utf8') };
  } catch (error) {
    return { reason: `could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
};

/** The pull request for `pr`, or why it could not be made (then the run reports only). */
const pullRequestFor = async (scope: RunScope, plan: Parameters<typeof gitToLive>[0]): Promise<DriftDecision> => {
  const { env } = scope.deps;
  if (scope.inputs.githubToken === '') return { action: 'report', why: 'no `github-token`: reporting drift only' };
  const git = processGit(scope.config.dir, env);
  const top = (await git.run(['rev-parse', '--show-toplevel'])).trim();
  const prefix = (await git.run(['rev-parse', '--show-prefix'])).trim().replace(/\/$/, '');
  const repoGit = processGit(top, env);
  const baseRevision = (await repoGit.run(['rev-parse', 'HEAD'])).trim();
  const baseBranch = env.GITHUB_REF_NAME?.trim() || scope.run.defaultBranch;
  if (!baseBranch)
    return { action: 'report', why: 'the branch of this run is unknown (GITHUB_REF_NAME): reporting drift only' };
  return proposeAsPullRequest({
    plan,
    proposal: proposeDrift({
      plan,
      sourceId: scope.config.sourceId,
      kinds: kindsFor(scope.config),
      readText: (file) => readManifest(scope.config.dir, file),
      now: Date.now(),
    }),
    source: scope.config.sourceId ?? scope.label.dir,
    baseBranch,
    baseRevision,
    prefix,
    git: repoGit,
    github: octokitDriftPulls({
      token: scope.inputs.githubToken,
      apiUrl: env.GITHUB_API_URL ?? 'https://api.github.com',
      owner: scope.run.repository.owner,
      repo: scope.run.repository.repo,
      userAgent: `cortex-sync-action/${VERSION}`,
      ...(scope.config.proxy ? { proxy: scope.config.proxy } : {}),
    }),
    redact: scope.redact,
  });
};

export const driftCheck = async (scope: RunScope): Promise<number> => {
  const { runtime } = scope.deps;
  const result = await scope.deps.engine.plan(scope.config);
  annotate(runtime, scope.rooted(result.diagnostics), scope.redact);
  if (result.status === 'invalid' || result.status === 'refused') {
    await scope.summary(
      `### cortex-sync drift: ❌ no plan\n\nThe manifests or the plan have errors; see the annotations.\n`,
    );
    return scope.finish(noRunOutputs(1));
  }
  const plan = result.plan;
  const drifted = driftedChanges(plan, scope.config.sourceId);
  const mode = scope.config.onDrift ?? 'heal';
  let decision: DriftDecision | undefined;
  if (drifted.length > 0 && mode === 'pr') {
    decision = await pullRequestFor(scope, plan).catch((error: unknown) => ({
      action: 'report' as const,
      why: `the pull request could not be made (${error instanceof Error ? error.message : String(error)}): reporting drift only`,
    }));
  }
  const heal = drifted.length > 0 && (mode === 'heal' || decision?.action === 'heal');
  const lines = [`### cortex-sync drift: ${countOf(drifted.length, 'object')} changed outside git`, ''];
  if (decision) lines.push(`> [!NOTE]\n> ${untrustedMessage(decision.why)}`, '');
  if (drifted.length > 0) {
    const objects = drifted.map(({ change, way }) => ({ kind: change.kind, id: change.id, way }));
    lines.push(
      renderPlanMarkdown(gitToLive(plan, { objects }), {
        title: 'Drift: from git to live',
        dirFromRoot: scope.label.dir,
        limit: 60_000,
      }),
    );
  }
  runtime.info(
    scope.redact(`drift: ${drifted.length} object(s); on-drift ${mode}${decision ? `: ${decision.why}` : ''}`),
  );
  if (!heal) {
    await scope.summary(lines.join('\n'));
    return scope.finish(outputsOf(result.run, 0));
  }
  lines.push('', 'Putting back the values git has (`on-drift: heal`).');
  await scope.summary(lines.join('\n'));
  const planLogFile = join(scope.outDir, 'plan-log.jsonl');
  const log = openPlanLog(planLogFile);
  try {
    const applied = await scope.deps.engine.apply(scope.config, log);
    return scope.finish(outputsOf(applied.run), { planLog: planLogFile });
  } finally {
    await log.close().catch(() => {});
  }
};
