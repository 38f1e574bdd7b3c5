/**
 * On a push to the default branch: find the pull request that was merged, read the plan its plan
 * comment recorded (only the comment written by the Action's own identity, only from its trailer),
 * plan again and compare. The same → apply. Only less (the rest of the reviewed plan, after an
 * interrupted apply) → apply, and say so. Anything else, or no reviewed plan → with
 * `on-plan-drift: fail` nothing is applied and the pull request is told what differs; with
 * `apply`, it is applied and the pull request is told loudly. Then the result is commented.
 */
import { join } from 'node:path';
import type { Plan } from '../core/model.js';
import { openPlanLog } from '../engine/plan-log.js';
import { renderPlanComment } from './comment.js';
import { judgePlan, planDigest, type ReviewVerdict } from './digest.js';
import type { AssociatedPullRequest } from './github.js';
import {
  type AppliedBasis,
  applyResultBody,
  diagnosticsSection,
  driftCommentBody,
  noReviewedPlanBody,
  restSentence,
} from './messages.js';
import { planCommentAuthor, type ReviewedLookup, reviewedPlanIn } from './plan-comments.js';
import { annotate, outputsOf, writePlanJson } from './report.js';
import { marker, planTitle, type RunScope, summaryOptions } from './scope.js';
import { tellPullRequest } from './tell.js';

/** The merged pull request this commit came from: the one whose merge commit it is, else the first merged one. */
export const mergedPullRequest = (
  prs: readonly AssociatedPullRequest[],
  sha: string,
): AssociatedPullRequest | undefined => prs.find((pr) => pr.mergeCommitSha === sha) ?? prs.find((pr) => pr.merged);

/** The merged pull request and the plan reviewed on it, if any. */
const findReviewedPlan = async (scope: RunScope): Promise<{ pr?: AssociatedPullRequest; lookup: ReviewedLookup }> => {
  const github = scope.github;
  if (!github) return { lookup: { status: 'none' } };
  const pr = mergedPullRequest(await github.pullRequestsOfCommit(scope.run.sha), scope.run.sha);
  if (!pr) return { lookup: { status: 'none' } };
  const author = await planCommentAuthor(github, scope.inputs.planCommentAuthor, false);
  scope.deps.runtime.info(`The reviewed plan is the plan comment of ${author.login} (account id ${author.id}).`);
  return { pr, lookup: reviewedPlanIn(await github.listComments(pr.number), marker(scope), author) };
};

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
    if (planned.status === 'invalid') return scope.finish(outputsOf(planned.run));
    const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), planned.plan, scope.redact);
    return scope.finish(outputsOf(planned.run), { planJson });
  }

  const current = planned.plan;
  const currentDigest = planDigest(current);
  // Ownership-record writes are work: a plan of only those is applied (and reviewed) like any.
  if (!planned.run.hasWork) {
    await scope.summary(`${renderPlanComment(current, [], { title, ...summaryOptions(scope) })}Nothing to apply.\n`);
    const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), current, scope.redact);
    return scope.finish(outputsOf(planned.run), { planJson });
  }

  const { pr, lookup } = await findReviewedPlan(scope);
  const applyAnyway = scope.inputs.onPlanDrift === 'apply';
  // A comment that cannot be written is a warning: the summary and outputs carry the run's truth.
  const comment = async (body: string) => {
    if (pr && scope.inputs.comment) await tellPullRequest(scope, pr.number, body);
  };
  const consequence = applyAnyway
    ? ': applying anyway (on-plan-drift: apply)'
    : ': nothing applied (on-plan-drift: fail)';
  const refuse = async (body: string) => {
    await scope.summary(
      `${body}\n${renderPlanComment(current, [], { title: `${title} (not applied)`, ...summaryOptions(scope) })}`,
    );
    // The Action's own refusal: the plan is reported as planned (and its file named), and the step fails.
    const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), current, scope.redact);
    return scope.finish(outputsOf(planned.run, 1), { planJson });
  };

  let verdict: ReviewVerdict;
  if (lookup.status === 'none') {
    verdict = { verdict: 'drift' };
    const body = noReviewedPlanBody({
      label: scope.label,
      applied: applyAnyway,
      looked: scope.github !== undefined,
      ...(pr ? { pullRequest: pr.number } : {}),
      ...(lookup.why !== undefined ? { why: lookup.why } : {}),
    });
    await comment(body);
    runtime.annotate({
      severity: applyAnyway ? 'warning' : 'error',
      title: 'cortex-sync: no reviewed plan',
      message: `No reviewed plan for commit ${scope.run.sha.slice(0, 12)}${lookup.why !== undefined ? ` (#${pr?.number}: ${lookup.why})` : ''}${consequence}`,
    });
    if (!applyAnyway) return refuse(body);
  } else {
    verdict = judgePlan(lookup.plan, current);
    if (verdict.verdict === 'drift') {
      const body = driftCommentBody({
        label: scope.label,
        reviewedDigest: lookup.plan.digest,
        currentDigest,
        difference: verdict.difference,
        applied: applyAnyway,
        sha: scope.run.sha,
      });
      await comment(body);
      runtime.annotate({
        severity: applyAnyway ? 'warning' : 'error',
        title: 'cortex-sync: plan drift',
        message: `The plan at ${scope.run.sha.slice(0, 12)} differs from the plan reviewed on #${pr?.number}${consequence}`,
      });
      if (!applyAnyway) return refuse(body);
    } else if (verdict.verdict === 'rest') {
      runtime.info(`${restSentence(verdict, pr?.number)}: applying.`);
      runtime.annotate({
        severity: 'notice',
        title: 'cortex-sync: rest of the reviewed plan',
        message: `${restSentence(verdict, pr?.number)}.`,
      });
    } else {
      runtime.info(`The plan matches the plan reviewed on #${pr?.number} (${currentDigest.slice(0, 19)}): applying.`);
    }
  }
  const basis: AppliedBasis =
    verdict.verdict === 'rest'
      ? { kind: 'rest', remaining: verdict.remaining, reviewed: verdict.reviewed }
      : verdict.verdict === 'same'
        ? { kind: 'reviewed' }
        : { kind: 'drifted' };

  const planLogFile = join(scope.outDir, 'plan-log.jsonl');
  const planLog = openPlanLog(planLogFile);
  // Unless drift is accepted, the plan the engine makes right before writing (under the apply
  // lease) must still be the one just checked: a workspace edit after the check writes nothing.
  const approve = applyAnyway ? undefined : (plan: Plan) => planDigest(plan) === currentDigest;
  let result;
  try {
    result = await scope.deps.engine.apply(scope.config, planLog, approve);
  } finally {
    await planLog.close();
  }
  // The output names the plan log only when this run wrote lines to it (a run that wrote nothing
  // leaves no file: a workflow uploading it finds nothing rather than a path that is not there).
  const keptLog = planLog.kept() ? planLogFile : undefined;
  const diagnostics = scope.rooted(result.diagnostics);
  annotate(runtime, diagnostics, scope.redact);
  if (result.run.outcome === 'not-approved' && result.status === 'planned') {
    const message =
      'The workspace changed between the check against the reviewed plan and the apply: nothing was applied. Rerun the job to plan again.';
    runtime.annotate({ severity: 'error', title: 'cortex-sync: plan drift', message });
    await comment(`### ${title}: ❌ not applied\n\n${message}\n`);
    await scope.summary(
      `### ${title}: ❌ not applied\n\n${message}\n\n${renderPlanComment(result.plan, diagnostics, { title: `${title} (not applied)`, ...summaryOptions(scope) })}`,
    );
    const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), result.plan, scope.redact);
    return scope.finish(outputsOf(result.run), { planJson, planLog: keptLog });
  }
  if (result.status !== 'applied') {
    await scope.summary(`### ${title}: ❌ not applied\n\n${diagnosticsSection('Problems', diagnostics)}`);
    return scope.finish(outputsOf(result.run), { planLog: keptLog });
  }
  // With drift accepted, a change between the check and the writes is only reported.
  const raced = basis.kind !== 'drifted' && planDigest(result.plan) !== currentDigest;
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
    run: result.run,
    sha: scope.run.sha,
    basis: raced ? { kind: 'drifted' } : basis,
  });
  await comment(resultBody);
  await scope.summary(
    `${resultBody}\n${renderPlanComment(result.plan, diagnostics, { title, ...summaryOptions(scope) })}`,
  );
  return scope.finish(outputsOf(result.run), { planJson, planLog: keptLog });
};
