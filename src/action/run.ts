/**
 * The GitHub Action, as one function of its ports: read the inputs and the event, decide
 * (validate, plan or apply), run the engine, and report through the runner (annotations, outputs,
 * job summary) and GitHub (the sticky plan comment, drift and apply comments). Returns the exit
 * code; renders every error it catches (an entrypoint).
 */
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { redactText } from '../api/errors.js';
import { CortexSyncError } from '../core/errors.js';
import { type Diagnostic, hasErrors } from '../core/model.js';
import { countOf } from '../core/plural.js';
import { configureRun } from '../engine/config.js';
import { applyReviewedPlan } from './apply.js';
import { driftCheck } from './drift.js';
import { renderPlanComment } from './comment.js';
import { fingerprints, planDigest } from './digest.js';
import { decideRun, describeRun, EventError } from './event.js';
import { GitHubError, redactingGitHub } from './github.js';
import { InputError, readInputs } from './inputs.js';
import { checkDirStaysInWorkspace } from './workspace-dir.js';
import { diagnosticsSection, stickyCommentBody } from './messages.js';
import { planCommentAuthor, writePlanComment } from './plan-comments.js';
import {
  type ActionOutputs,
  annotate,
  noRunOutputs,
  outputsOf,
  rootDiagnostics,
  setOutputs,
  summaryWriter,
  writePlanJson,
} from './report.js';
import { type ActionDeps, marker, planTitle, type RunScope, summaryOptions } from './scope.js';
import { untrustedMessage } from '../render/untrusted.js';

export type { ActionDeps } from './scope.js';

export const runAction = async (deps: ActionDeps): Promise<number> => {
  const { runtime, env } = deps;
  const secrets: string[] = [];
  const redact = (text: string) => redactText(text, secrets);
  try {
    const inputs = readInputs((name) => runtime.input(name));
    for (const secret of [inputs.apiKey, env.CORTEX_API_KEY ?? '']) {
      if (secret !== '') {
        secrets.push(secret);
        runtime.mask(secret);
      }
    }
    const run = describeRun(env, deps.event);
    const decision = decideRun(inputs, run);
    const workspace = resolve(deps.cwd, env.GITHUB_WORKSPACE ?? '.');
    await checkDirStaysInWorkspace(resolve(workspace, inputs.dir), workspace, inputs.dir);
    const resolved = await configureRun(
      {
        // The inputs with a default (`prune`, `allow-mass-delete`, …) are always said, `false`
        // included: `cortex-sync.yaml` cannot turn them on. `strict` is said only when given.
        said: { ...inputs.said, dir: resolve(workspace, inputs.dir) },
        // The plan's header names these as Action inputs.
        from: 'input',
        apiKey: inputs.apiKey,
      },
      env,
      workspace,
    );
    const dirFromRoot = relative(workspace, resolved.config.dir).split(sep).join('/') || '.';
    const rooted = (d: readonly Diagnostic[]) => rootDiagnostics(d, dirFromRoot);
    const summary = summaryWriter(runtime, redact);
    const finish = (outputs: ActionOutputs, files: { planJson?: string; planLog?: string } = {}) => {
      setOutputs(runtime, outputs, files);
      return outputs.exitCode;
    };
    annotate(runtime, rooted(resolved.diagnostics), redact);
    if (hasErrors(resolved.diagnostics)) {
      await summary(
        `### cortex-sync: configuration errors\n\n${diagnosticsSection('Errors', rooted(resolved.diagnostics))}`,
      );
      return finish(noRunOutputs(1));
    }
    const serverUrl = env.GITHUB_SERVER_URL ?? 'https://github.com';
    const runUrl = env.GITHUB_RUN_ID
      ? `${serverUrl}/${run.repository.owner}/${run.repository.repo}/actions/runs/${env.GITHUB_RUN_ID}`
      : undefined;
    const port = inputs.githubToken ? deps.github(inputs.githubToken, run, resolved.config.proxy) : undefined;
    const scope: RunScope = {
      deps,
      inputs,
      run,
      config: resolved.config,
      label: { sourceId: resolved.config.sourceId ?? '(none)', dir: dirFromRoot, ...(runUrl ? { runUrl } : {}) },
      outDir: join(
        env.RUNNER_TEMP ?? tmpdir(),
        `cortex-sync-${env.GITHUB_RUN_ID ?? process.pid}-${env.GITHUB_RUN_ATTEMPT ?? 1}`,
      ),
      redact,
      ...(port ? { github: redactingGitHub(port, redact) } : {}),
      rooted,
      summary,
      finish,
    };
    if (decision.mode === 'validate') return await validateOnly(scope, decision.reason);
    if (decision.mode === 'plan') return await planOnly(scope, decision.pullRequest);
    if (decision.mode === 'drift') return await driftCheck(scope);
    return await applyReviewedPlan(scope);
  } catch (error) {
    const known = error instanceof CortexSyncError || error instanceof InputError || error instanceof EventError;
    const message = redact(
      known || error instanceof GitHubError
        ? (error as Error).message
        : `internal error: ${error instanceof Error ? error.message : String(error)}`,
    );
    runtime.annotate({ severity: 'error', title: 'cortex-sync', message });
    if (!known && error instanceof Error && error.stack) runtime.info(redact(error.stack));
    await runtime.appendSummary(`### ❌ cortex-sync failed\n\n${untrustedMessage(message)}\n`).catch(() => {});
    setOutputs(runtime, noRunOutputs(1), {});
    return 1;
  }
};

const validateOnly = async (scope: RunScope, reason: string | undefined): Promise<number> => {
  const result = await scope.deps.engine.validate(scope.config);
  const diagnostics = scope.rooted(result.diagnostics);
  annotate(scope.deps.runtime, diagnostics, scope.redact);
  const failed = hasErrors(diagnostics);
  const lines = [`### cortex-sync validate: ${failed ? '❌ invalid manifests' : '✅ manifests valid'}`, ''];
  if (reason) lines.push(`> [!NOTE]\n> ${reason}`, '');
  lines.push(`${countOf(result.objects.length, 'object')} in ${countOf(result.files.length, 'file')}.`, '');
  lines.push(diagnosticsSection('Problems', diagnostics));
  await scope.summary(lines.join('\n'));
  return scope.finish(noRunOutputs(failed ? 1 : 0));
};

const planOnly = async (scope: RunScope, pullRequest: number | undefined): Promise<number> => {
  const result = await scope.deps.engine.plan(scope.config);
  const diagnostics = scope.rooted(result.diagnostics);
  annotate(scope.deps.runtime, diagnostics, scope.redact);
  const title = planTitle(scope.label);
  let planJson: string | undefined;
  let commentBody: string;
  if (result.status === 'invalid') {
    const body = `### ${title}: ❌ invalid manifests\n\nNothing was read from the workspace.\n\n${diagnosticsSection('Problems', diagnostics)}`;
    await scope.summary(body);
    commentBody = stickyCommentBody({ marker: marker(scope), label: scope.label, renderPlan: () => body });
  } else {
    const plan = result.plan;
    planJson = await writePlanJson(join(scope.outDir, 'plan.json'), plan, scope.redact);
    const full = renderPlanComment(plan, diagnostics, { title, ...summaryOptions(scope) });
    await scope.summary(full);
    commentBody = stickyCommentBody({
      marker: marker(scope),
      label: scope.label,
      renderPlan: (limit) =>
        renderPlanComment(plan, diagnostics, {
          title,
          limit,
          dirFromRoot: scope.label.dir,
          fullPlanAt: scope.label.runUrl ? `[the job summary](${scope.label.runUrl})` : 'the job summary of this run',
        }),
      ...(result.status === 'planned'
        ? { digest: planDigest(result.plan), fingerprints: fingerprints(result.plan) }
        : {}),
    });
  }
  if (pullRequest !== undefined && scope.inputs.comment && scope.github) {
    const author = await planCommentAuthor(scope.github, scope.inputs.planCommentAuthor, true);
    const { kept, removed } = await writePlanComment(scope.github, pullRequest, marker(scope), author, commentBody);
    scope.deps.runtime.info(
      kept
        ? `The plan comment on #${pullRequest} already shows this plan: left as it is.`
        : `Wrote a new plan comment on #${pullRequest}${removed > 0 ? ` (and removed ${countOf(removed, 'earlier one')})` : ''}.`,
    );
  }
  return scope.finish(outputsOf(result.run), planJson ? { planJson } : {});
};
