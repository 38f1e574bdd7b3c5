/**
 * On a push to the default branch: find the pull request that was merged, read the digest of the
 * plan it showed, plan again and compare. The same → apply. Different, or no reviewed plan → with
 * `on-plan-drift: fail` nothing is applied and the pull request is told what differs; with
 * `apply`, it is applied and the pull request is told loudly. Then the result is commented.
 */
import { join } from 'node:path';
import type { Plan } from '../core/model.js';
import { openPlanLog } from '../engine/plan-log.js';
import { renderPlanComment } from './comment.js';
import { comparePlans, fingerprints, planDigest, readChanges, readDigest } from './digest.js';
import { outcomeOf } from './engine.js';
import type { AssociatedPullRequest } from './github.js';
import { applyResultBody, diagnosticsSection, driftCommentBody, noReviewedPlanBody } from './messages.js';
import { annotate, writePlanJson } from './report.js';
import { marker, planTitle, type RunScope, summaryOptions } from './scope.js';

/** The merged pull request this commit came from: the one whose merge commit it is, else the first merged one. */
export const mergedPullRequest = (
  prs: readonly AssociatedPullRequest[],
  sha: string,
): AssociatedPullRequest | undefined => prs.find((pr) => pr.mergeCommitSha === sha) ?? prs.find((pr) => pr.merged);

export const applyReviewedPlan = async (scope: RunScope): Promise<number> => {
  const { runtime } = scope.deps;
  const title = planTitle(scope.label);
  const planned = await scope.deps.engine.plan(scope.config);
  if (planned.status !== 'planned') {
    // Invalid manifests or a refused plan: nothing is applied; the annotations say why.
    const diagnostics = scope.rooted(planned.diagnostics);
    annotate(runtime, diagnostics, scope.redact);
    const body =
      planned.status === 'invalid'
        ? `### ${title}: ❌ invalid manifests\n\n${diagnosticsSection('Problems', diagnostics)}`
        : renderPlanComment(planned.plan, diagnostics, { title: `${title}: ❌ refused`, ...summaryOptions(scope) });
    await scope.summary(`${body}\nNothing was applied.\n`);
    return scope.finish(outcomeOf(planned, 'apply'));
  }

  const current = planned.plan;
  const currentDigest = planDigest(current);
  const pending = current.changes.some((c) => c.action !== 'noop');
  if (!pending) {
    await scope.summary(`${renderPlanComment(current, [], { title, ...summaryOptions(scope) })}Nothing to apply.\n`);
    const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), current, scope.redact);
    return scope.finish(outcomeOf(planned, 'apply'), { planJson });
  }

  const prs = scope.github ? await scope.github.pullRequestsOfCommit(scope.run.sha) : [];
  const pr = mergedPullRequest(prs, scope.run.sha);
  const reviewed = pr && scope.github ? await scope.github.findComment(pr.number, marker(scope)) : undefined;
  const reviewedDigest = reviewed ? readDigest(reviewed.body) : undefined;
  const applyAnyway = scope.inputs.onPlanDrift === 'apply';
  const comment = async (body: string) => {
    if (pr && scope.github && scope.inputs.comment) await scope.github.createComment(pr.number, body);
  };

  let drifted = false;
  if (reviewedDigest === undefined) {
    drifted = true;
    const body = noReviewedPlanBody({
      label: scope.label,
      applied: applyAnyway,
      ...(pr ? { pullRequest: pr.number } : {}),
    });
    await comment(body);
    runtime.annotate({
      severity: applyAnyway ? 'warning' : 'error',
      title: 'cortex-sync: no reviewed plan',
      message: `No reviewed plan for commit ${scope.run.sha.slice(0, 12)}${applyAnyway ? ': applying anyway (on-plan-drift: apply)' : ': nothing applied (on-plan-drift: fail)'}`,
    });
    if (!applyAnyway) {
      await scope.summary(
        `${body}\n${renderPlanComment(current, [], { title: `${title} (not applied)`, ...summaryOptions(scope) })}`,
      );
      return scope.finish({ ...outcomeOf(planned, 'plan'), exitCode: 1 });
    }
  } else if (reviewedDigest !== currentDigest) {
    drifted = true;
    const reviewedChanges = reviewed ? readChanges(reviewed.body) : undefined;
    const difference = reviewedChanges ? comparePlans(reviewedChanges, fingerprints(current)) : undefined;
    const body = driftCommentBody({
      label: scope.label,
      reviewedDigest,
      currentDigest,
      difference,
      applied: applyAnyway,
      sha: scope.run.sha,
    });
    await comment(body);
    runtime.annotate({
      severity: applyAnyway ? 'warning' : 'error',
      title: 'cortex-sync: plan drift',
      message: `The plan at ${scope.run.sha.slice(0, 12)} differs from the plan reviewed on #${pr?.number}${applyAnyway ? ': applying anyway (on-plan-drift: apply)' : ': nothing applied (on-plan-drift: fail)'}`,
    });
    if (!applyAnyway) {
      await scope.summary(
        `${body}\n${renderPlanComment(current, [], { title: `${title} (not applied)`, ...summaryOptions(scope) })}`,
      );
      return scope.finish({ ...outcomeOf(planned, 'plan'), exitCode: 1 });
    }
  } else {
    runtime.info(`The plan matches the plan reviewed on #${pr?.number} (${currentDigest.slice(0, 19)}): applying.`);
  }

  const planLogFile = join(scope.outDir, 'plan-log.jsonl');
  const planLog = openPlanLog(planLogFile);
  // Unless drift is accepted, the plan the engine makes right before writing (under the apply
  // lease) must still be the reviewed one: a workspace edit after the check above writes nothing.
  const approve = applyAnyway ? undefined : (plan: Plan) => planDigest(plan) === currentDigest;
  let result;
  try {
    result = await scope.deps.engine.apply(scope.config, planLog, approve);
  } finally {
    await planLog.close();
  }
  const diagnostics = scope.rooted(result.diagnostics);
  annotate(runtime, diagnostics, scope.redact);
  if (result.status === 'planned') {
    const message =
      'The workspace changed between the check against the reviewed plan and the apply: nothing was applied. Rerun the job to plan again.';
    runtime.annotate({ severity: 'error', title: 'cortex-sync: plan drift', message });
    await comment(`### ${title}: ❌ not applied\n\n${message}\n`);
    await scope.summary(
      `### ${title}: ❌ not applied\n\n${message}\n\n${renderPlanComment(result.plan, diagnostics, { title: `${title} (not applied)`, ...summaryOptions(scope) })}`,
    );
    return scope.finish({ ...outcomeOf(result, 'plan'), exitCode: 1 }, { planLog: planLogFile });
  }
  if (result.status !== 'applied') {
    await scope.summary(`### ${title}: ❌ not applied\n\n${diagnosticsSection('Problems', diagnostics)}`);
    return scope.finish(outcomeOf(result, 'apply'), { planLog: planLogFile });
  }
  // With drift accepted, a change between the check and the writes is only reported.
  const raced = !drifted && planDigest(result.plan) !== currentDigest;
  if (raced) {
    runtime.annotate({
      severity: 'warning',
      title: 'cortex-sync: plan drift',
      message:
        'The workspace changed between the check against the reviewed plan and the apply; the applied plan differs.',
    });
  }
  const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), result.plan, scope.redact);
  const resultBody = applyResultBody({
    label: scope.label,
    report: result.report,
    sha: scope.run.sha,
    drifted: drifted || raced,
  });
  await comment(resultBody);
  await scope.summary(
    `${resultBody}\n${renderPlanComment(result.plan, diagnostics, { title, ...summaryOptions(scope) })}`,
  );
  return scope.finish(outcomeOf(result, 'apply'), { planJson, planLog: planLogFile });
};
