/**
 * On a push to the default branch: only at the branch's head (a rerun of an older merge's run
 * applies nothing: it would undo what merged after it). Find the merges this run answers for —
 * those of its push, and earlier ones no run answered (a run cancelled while pending) — and the
 * plan each one's pull request reviewed (only the comment written by the Action's own identity,
 * only from its trailer); plan once at the head — one read of the workspace, in the same engine
 * run that applies — and judge it against those reviewed plans, in merge order
 * (`merge-judge.ts`, `core/review-judgement.ts`), before the lease. Reviewed → apply, and tell each pull request, with a
 * record of what was applied (a rerun then applies nothing twice). Anything else → with
 * `on-plan-drift: fail` nothing is applied and each pull request is told what differs; with
 * `apply`, it is applied and each is told loudly.
 */
import { join } from 'node:path';
import type { Plan } from '../core/model.js';
import { planWork } from '../core/outcome.js';
import { openPlanLog } from '../engine/plan-log.js';
import { renderPlanComment } from './comment.js';
import { planDigest, type ReviewOutcome } from './digest.js';
import type { ReconciledRun } from './engine.js';
import {
  alreadyAppliedSummary,
  problemLine,
  refusedTogetherBody,
  supersededSummary,
  togetherLines,
} from './merge-messages.js';
import { collectMerges, type Decision, decide, type MergeState, supersededBy } from './merge-judge.js';
import { type MergeRecord, recordLine } from './merges.js';
import {
  type AppliedBasis,
  applyResultBody,
  diagnosticsSection,
  driftCommentBody,
  noReviewedPlanBody,
  restSentence,
  where,
} from './messages.js';
import { annotate, noRunOutputs, outputsOf, writePlanJson } from './report.js';
import { planTitle, type RunScope, summaryOptions } from './scope.js';
import { tellPullRequest } from './tell.js';

const others = (all: readonly MergeState[], pr: number): number[] =>
  all.map((s) => s.merge.pullRequest).filter((n) => n !== pr);

/** The comment on each pull request whose merge is refused (or applied anyway); the body for the job summary. */
const tellRefusal = async (
  scope: RunScope,
  decision: Extract<Decision, { kind: 'judged' }>,
  currentDigest: string,
  applyAnyway: boolean,
  say: (pr: number, body: string, record: MergeRecord) => Promise<void>,
): Promise<string> => {
  const consequence = applyAnyway
    ? ': applying anyway (on-plan-drift: apply)'
    : ': nothing applied (on-plan-drift: fail)';
  const { judged, judgement, unplanned } = decision;
  const problems = judgement.verdict === 'refuse' ? judgement.problems : [];
  const bodies: string[] = [];
  for (const { merge, lookup } of judged) {
    const pr = merge.pullRequest;
    let body: string;
    if (judged.length > 1)
      body = refusedTogetherBody({
        pullRequest: pr,
        others: others(judged, pr),
        sha: scope.run.sha,
        problems,
        unplanned,
        applied: applyAnyway,
        where: where(scope.label),
      });
    else if (lookup.status === 'none')
      body = noReviewedPlanBody({
        label: scope.label,
        applied: applyAnyway,
        pullRequest: pr,
        ...(lookup.why !== undefined ? { why: lookup.why } : {}),
      });
    else {
      const dropped = problems.filter((p) => p.kind === 'dropped');
      body = driftCommentBody({
        label: scope.label,
        reviewedDigest: lookup.plan.digest,
        currentDigest,
        difference: judgement.verdict === 'refuse' ? judgement.difference : undefined,
        applied: applyAnyway,
        sha: scope.run.sha,
      });
      if (dropped.length)
        body += [
          '',
          '**Reviewed, neither planned now nor live as reviewed:**',
          ...dropped.map((p) => problemLine(p, pr)),
          '',
        ].join('\n');
    }
    bodies.push(body);
    const why = lookup.status === 'none' ? 'no reviewed plan' : 'plan drift';
    scope.deps.runtime.annotate({
      severity: applyAnyway ? 'warning' : 'error',
      title: `cortex-sync: ${why}`,
      message:
        lookup.status === 'none'
          ? `No reviewed plan for commit ${scope.run.sha.slice(0, 12)}${lookup.why !== undefined ? ` (#${pr}: ${lookup.why})` : ` (#${pr})`}${consequence}`
          : `The plan at ${scope.run.sha.slice(0, 12)} differs from the plan reviewed on #${pr}${consequence}`,
    });
    // Applied anyway: the result comment that follows records the apply (the last record counts).
    await say(pr, body, { outcome: 'refused' });
  }
  return bodies.join('\n');
};

/** What the merge decided of the plan made at the head (in the engine's `onPlanned`, before the lease). */
interface Verdict {
  current: Plan;
  currentDigest: string;
  /** Undefined: the plan has no work (nothing to judge, nothing applied). */
  decision?: Decision;
  /** The engine goes on to the lease and the writes. */
  go: boolean;
  /** Applied though not as reviewed (`on-plan-drift: apply`). */
  drifted: boolean;
  /** When a run of this commit applied the same reviewed plans cleanly (server time, ms): nothing again. */
  earlier?: number;
}

/** The plan at the head judged against the reviewed plans of the merges this run answers for. */
const judgeAtHead = async (scope: RunScope, current: Plan, hasWork: boolean): Promise<Verdict> => {
  const currentDigest = planDigest(current);
  // Ownership-record writes are work: a plan of only those is applied (and reviewed) like any.
  if (!hasWork) return { current, currentDigest, go: false, drifted: false };
  const decision = decide(await collectMerges(scope), current);
  const reviewed =
    decision.kind === 'judged' && decision.judgement.verdict === 'apply' && decision.unplanned.length === 0;
  const applyAnyway = scope.inputs.onPlanDrift === 'apply';
  return { current, currentDigest, decision, go: reviewed || applyAnyway, drifted: !reviewed };
};

/**
 * On a push to the default branch, at its head: one run of the engine that reads the workspace
 * once. The plan it makes is judged against the reviewed plans (`onPlanned`, before the lease);
 * a plan not reviewed ends the run there, nothing written. Under the lease, what the plan writes
 * is read again by identity, and the plan about to be applied must still be the one judged
 * (`approve`), else nothing is written.
 */
export const applyReviewedPlan = async (scope: RunScope): Promise<number> => {
  const { runtime } = scope.deps;
  const title = planTitle(scope.label);
  const superseded = await supersededBy(scope);
  if (superseded) {
    runtime.annotate({
      severity: 'warning',
      title: 'cortex-sync: not the head of the branch',
      message: `This run is for ${scope.run.sha.slice(0, 12)}, but the head of ${superseded.branch} is ${superseded.head.slice(0, 12)} now: nothing applied (the run for the head applies what is not applied yet).`,
    });
    await scope.summary(supersededSummary(scope.run.sha, superseded.branch, superseded.head));
    return scope.finish(noRunOutputs(0));
  }
  // What runs of this commit applied cleanly before (a result comment may have failed): nothing twice.
  const marks = await scope.deps.engine.appliedMarks(scope.config);
  const planLogFile = join(scope.outDir, 'plan-log.jsonl');
  const planLog = openPlanLog(planLogFile);
  let verdict: Verdict | undefined;
  let result;
  try {
    result = await scope.deps.engine.apply(scope.config, planLog, {
      onPlanned: async (pass) => {
        verdict = await judgeAtHead(scope, pass.plan, pass.work.hasWork);
        const mark = applyMarkOf(scope, verdict);
        const earlier = marks.find((m) => m.mark === mark);
        if (earlier !== undefined) verdict = { ...verdict, earlier: earlier.at, go: false };
        if (verdict.go && !verdict.drifted) sayApplying(scope, verdict);
        return verdict.go;
      },
      // Unless drift is accepted, the plan the engine makes right before writing (under the apply
      // lease) must still be the one judged: a workspace edit after the judgement writes nothing.
      approve: (plan) => verdict === undefined || verdict.drifted || planDigest(plan) === verdict.currentDigest,
      mark: () => (verdict ? applyMarkOf(scope, verdict) : undefined),
    });
  } finally {
    await planLog.close();
  }
  // The output names the plan log only when this run wrote lines to it (a run that wrote nothing
  // leaves no file: a workflow uploading it finds nothing rather than a path that is not there).
  const keptLog = planLog.kept() ? planLogFile : undefined;
  if (result.status !== 'planned' && result.status !== 'applied') {
    // Invalid manifests or a refused plan: nothing is applied; the annotations say why.
    const diagnostics = scope.rooted(result.diagnostics);
    annotate(runtime, diagnostics, scope.redact);
    const body =
      result.status === 'invalid'
        ? `### ${title}: ❌ invalid manifests\n\n${diagnosticsSection('Problems', diagnostics)}`
        : renderPlanComment(result.plan, diagnostics, { title: `${title}: ❌ refused`, ...summaryOptions(scope) });
    await scope.summary(`${body}\nNothing was applied.\n`);
    if (result.status === 'invalid') return scope.finish(outputsOf(result.run));
    const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), result.plan, scope.redact);
    return scope.finish(outputsOf(result.run), { planJson });
  }
  if (verdict === undefined) throw new Error('the engine judges a plan before it applies one');
  if (verdict.decision === undefined) {
    await scope.summary(
      `${renderPlanComment(verdict.current, [], { title, ...summaryOptions(scope) })}Nothing to apply.\n`,
    );
    const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), verdict.current, scope.redact);
    return scope.finish(outputsOf(result.run, 0), { planJson });
  }
  if (verdict.earlier !== undefined) return appliedByEarlierRun(scope, verdict.decision, verdict.earlier);
  if (!verdict.go) return refuseMerge(scope, verdict, verdict.decision, result);
  return reportApply(scope, verdict, verdict.decision, result, keptLog);
};

/**
 * What the source's lease record remembers of this run's clean apply: the repository, the commit
 * and the reviewed plans it applied (their digests; with drift accepted, `unreviewed` and the
 * digest of the plan applied).
 */
const applyMarkOf = (scope: RunScope, verdict: Verdict): string => {
  const decision = verdict.decision;
  const reviewed =
    decision?.kind === 'judged'
      ? decision.judged.flatMap((s) => (s.lookup.status === 'reviewed' ? [s.lookup.plan.digest] : []))
      : [];
  const what = verdict.drifted || reviewed.length === 0 ? `unreviewed ${verdict.currentDigest}` : reviewed.join(',');
  return `github merge ${scope.run.repository.owner}/${scope.run.repository.repo}@${scope.run.sha} ${what}`;
};

/**
 * A run of this commit applied these reviewed plans cleanly already (the workspace remembers it in
 * the source's lease record): nothing is applied again, whatever is planned now, and each merge
 * that no comment answered yet is told (the earlier run's comment may have failed).
 */
const appliedByEarlierRun = async (scope: RunScope, decision: Decision, at: number): Promise<number> => {
  const when = new Date(at).toISOString();
  const message = `A run of commit ${scope.run.sha.slice(0, 12)} applied this plan already (at ${when}, as the source's apply lease record in the workspace says): nothing is applied again. A change planned now was not part of it: review it in a pull request.`;
  scope.deps.runtime.annotate({ severity: 'notice', title: 'cortex-sync: applied already', message });
  const title = planTitle(scope.label);
  const say = sayTo(scope);
  for (const s of decision.kind === 'judged' ? decision.judged : []) {
    if (s.record !== undefined || s.lookup.status !== 'reviewed') continue;
    await say(s.merge.pullRequest, `### ${title}: ✅ applied by an earlier run\n\n${message}\n`, {
      outcome: 'applied',
      digest: s.lookup.plan.digest,
    });
  }
  await scope.summary(`### ${title}: ✅ applied by an earlier run\n\n${message}\n`);
  return scope.finish(noRunOutputs(0));
};

const consequenceOf = (applyAnyway: boolean): string =>
  applyAnyway ? ': applying anyway (on-plan-drift: apply)' : ': nothing applied (on-plan-drift: fail)';

/** The comment on a pull request, ending with this source's record (a comment that fails is a warning). */
const sayTo =
  (scope: RunScope) =>
  async (pr: number, body: string, record: MergeRecord): Promise<void> => {
    if (scope.inputs.comment)
      await tellPullRequest(scope, pr, `${body}\n${recordLine(scope.label.sourceId, scope.label.dir, record)}\n`);
  };

/** The log (and, for the rest of a plan, a notice) of each reviewed plan about to be applied. */
const sayApplying = (scope: RunScope, verdict: Verdict): void => {
  const judgement = verdict.decision?.kind === 'judged' ? verdict.decision.judgement : undefined;
  for (const o of judgement?.verdict === 'apply' ? judgement.reviews : []) {
    const sentence =
      o.remaining < o.reviewed
        ? restSentence(o, o.pullRequest)
        : `The plan matches the plan reviewed on #${o.pullRequest} (${verdict.currentDigest.slice(0, 19)})`;
    scope.deps.runtime.info(`${sentence}: applying.`);
    if (o.remaining < o.reviewed)
      scope.deps.runtime.annotate({
        severity: 'notice',
        title: 'cortex-sync: rest of the reviewed plan',
        message: `${sentence}.`,
      });
  }
};

/** Annotations and comments of a plan not applied as reviewed (before the run, or after it with drift accepted). */
const tellNotReviewed = async (scope: RunScope, verdict: Verdict, decision: Decision): Promise<string> => {
  const applyAnyway = scope.inputs.onPlanDrift === 'apply';
  const consequence = consequenceOf(applyAnyway);
  if (decision.kind === 'judged') return tellRefusal(scope, decision, verdict.currentDigest, applyAnyway, sayTo(scope));
  const runtime = scope.deps.runtime;
  if (decision.kind === 'no-merge') {
    runtime.annotate({
      severity: applyAnyway ? 'warning' : 'error',
      title: 'cortex-sync: no reviewed plan',
      message: `No reviewed plan for commit ${scope.run.sha.slice(0, 12)}${consequence}`,
    });
    return noReviewedPlanBody({ label: scope.label, applied: applyAnyway, looked: scope.github !== undefined });
  }
  runtime.annotate({
    severity: applyAnyway ? 'warning' : 'error',
    title: 'cortex-sync: applied already',
    message: `The plan reviewed on ${decision.pullRequests.map((n) => `#${n}`).join(', ')} was applied already; the plan now was not reviewed${consequence}`,
  });
  return alreadyAppliedSummary(decision.pullRequests, applyAnyway);
};

/** Nothing applied: each pull request is told why, the summary shows the plan, and the step fails. */
const refuseMerge = async (
  scope: RunScope,
  verdict: Verdict,
  decision: Decision,
  result: ReconciledRun,
): Promise<number> => {
  const body = await tellNotReviewed(scope, verdict, decision);
  const title = planTitle(scope.label);
  await scope.summary(
    `${body}\n${renderPlanComment(verdict.current, [], { title: `${title} (not applied)`, ...summaryOptions(scope) })}`,
  );
  // The Action's own refusal: the plan is reported as planned (and its file named), and the step fails.
  const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), verdict.current, scope.redact);
  return scope.finish(outputsOf(result.run, 1), { planJson });
};

/** Reports the apply (or why, under the lease, nothing was written); tells each merge's pull request. */
const reportApply = async (
  scope: RunScope,
  verdict: Verdict,
  decision: Decision,
  result: ReconciledRun,
  keptLog: string | undefined,
): Promise<number> => {
  const { runtime } = scope.deps;
  const title = planTitle(scope.label);
  const say = sayTo(scope);
  const tell = decision.kind === 'judged' ? decision.judged : [];
  if (verdict.drifted) await tellNotReviewed(scope, verdict, decision);
  const outcomes =
    !verdict.drifted && decision.kind === 'judged' && decision.judgement.verdict === 'apply'
      ? decision.judgement.reviews
      : undefined;
  const diagnostics = scope.rooted(result.diagnostics);
  annotate(runtime, diagnostics, scope.redact);
  if (result.status === 'planned') {
    if (!planWork(result.plan).hasWork) {
      // Another run (of this merge, or of the next) applied the plan between the check and the lease.
      const message =
        'Nothing left to apply: between the check against the reviewed plan and the apply, another run applied it (or the same changes were made by hand). Nothing was written by this run.';
      runtime.info(message);
      await scope.summary(`### ${title}: ✅ applied by another run\n\n${message}\n`);
      return scope.finish(outputsOf(result.run, 0), { planLog: keptLog });
    }
    const message =
      'The workspace changed between the check against the reviewed plan and the apply: nothing was applied. Rerun the job to plan again.';
    runtime.annotate({ severity: 'error', title: 'cortex-sync: plan drift', message });
    for (const s of tell)
      await say(s.merge.pullRequest, `### ${title}: ❌ not applied\n\n${message}\n`, { outcome: 'refused' });
    await scope.summary(
      `### ${title}: ❌ not applied\n\n${message}\n\n${renderPlanComment(result.plan, diagnostics, { title: `${title} (not applied)`, ...summaryOptions(scope) })}`,
    );
    const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), result.plan, scope.redact);
    return scope.finish(outputsOf(result.run), { planJson, planLog: keptLog });
  }
  if (result.status !== 'applied') throw new Error('an apply run ends applied or planned');
  return reportApplied(scope, { ...verdict, tell, ...(outcomes ? { outcomes } : {}) }, result, keptLog);
};

/** The result of an apply that ran: each merge's pull request told, with its record; the summary. */
const reportApplied = async (
  scope: RunScope,
  input: Verdict & { tell: readonly MergeState[]; outcomes?: readonly ReviewOutcome[] },
  result: Extract<ReconciledRun, { status: 'applied' }>,
  keptLog: string | undefined,
): Promise<number> => {
  const { runtime } = scope.deps;
  const title = planTitle(scope.label);
  const say = sayTo(scope);
  const { currentDigest, tell } = input;
  const diagnostics = scope.rooted(result.diagnostics);
  // With drift accepted, a change between the check and the writes is only reported.
  const raced = !input.drifted && planDigest(result.plan) !== currentDigest;
  if (raced) {
    runtime.annotate({
      severity: 'warning',
      title: 'cortex-sync: plan drift',
      message:
        'The workspace changed between the check against the reviewed plan and the apply; the applied plan differs.',
    });
  }
  const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), result.plan, scope.redact);
  const bodyFor = (s: MergeState | undefined): string => {
    const outcome = input.outcomes?.find((o) => o.pullRequest === s?.merge.pullRequest);
    // The job summary of several merges (no one pull request): the reviewed plans, when judged so.
    const basis: AppliedBasis =
      input.drifted || raced || (!outcome && s)
        ? { kind: 'drifted' }
        : outcome && outcome.remaining < outcome.reviewed
          ? { kind: 'rest', remaining: outcome.remaining, reviewed: outcome.reviewed }
          : { kind: 'reviewed' };
    const body = applyResultBody({
      label: scope.label,
      report: result.report,
      run: result.run,
      sha: scope.run.sha,
      basis,
    });
    const together = togetherLines(outcome, s ? others(tell, s.merge.pullRequest) : []);
    return together.length ? `${body}\n${together.join('\n')}` : body;
  };
  const complete = result.run.steps.failed + result.run.steps.skipped === 0;
  for (const s of tell) {
    const digest = s.lookup.status === 'reviewed' ? s.lookup.plan.digest : planDigest(result.plan);
    await say(s.merge.pullRequest, bodyFor(s), complete ? { outcome: 'applied', digest } : { outcome: 'failed' });
  }
  await scope.summary(
    `${bodyFor(tell.length === 1 ? tell[0] : undefined)}${tell.length > 1 ? `\nThe reviewed plans of ${tell.map((s) => `#${s.merge.pullRequest}`).join(', ')}, in merge order.\n` : ''}\n${renderPlanComment(result.plan, diagnostics, { title, ...summaryOptions(scope) })}`,
  );
  return scope.finish(outputsOf(result.run), { planJson, planLog: keptLog });
};
