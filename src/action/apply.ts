/**
 * On a push to the default branch: only at the branch's head (a rerun of an older merge's run
 * applies nothing: it would undo what merged after it). Find the merges this run answers for —
 * those of its push, and earlier ones no run answered (a run cancelled while pending) — and the
 * plan each one's pull request reviewed (only the comment written by the Action's own identity,
 * only from its trailer); plan once at the head and judge it against those reviewed plans, in
 * merge order (`core/review-judgement.ts`). Reviewed → apply, and tell each pull request, with a
 * record of what was applied (a rerun then applies nothing twice). Anything else → with
 * `on-plan-drift: fail` nothing is applied and each pull request is told what differs; with
 * `apply`, it is applied and each is told loudly.
 */
import { join } from 'node:path';
import type { Plan } from '../core/model.js';
import { planWork } from '../core/outcome.js';
import { openPlanLog } from '../engine/plan-log.js';
import { renderPlanComment } from './comment.js';
import { judgeMerges, type MergeJudgement, planDigest, type ReviewOutcome } from './digest.js';
import type { IssueComment } from './github.js';
import {
  alreadyAppliedSummary,
  problemLine,
  refusedTogetherBody,
  supersededSummary,
  togetherLines,
} from './merge-messages.js';
import { type Merge, type MergeRecord, type MergeStatus, mergesToAnswer, recordIn, recordLine } from './merges.js';
import {
  type AppliedBasis,
  applyResultBody,
  diagnosticsSection,
  driftCommentBody,
  noReviewedPlanBody,
  restSentence,
  where,
} from './messages.js';
import { planCommentAuthor, type ReviewedLookup, reviewedPlanIn } from './plan-comments.js';
import { annotate, noRunOutputs, outputsOf, writePlanJson } from './report.js';
import { marker, planTitle, type RunScope, summaryOptions } from './scope.js';
import { tellPullRequest } from './tell.js';

interface MergeState {
  merge: Merge;
  lookup: ReviewedLookup;
  record: MergeRecord | 'legacy' | undefined;
}

/** The branch's head, when this run's commit is no longer it. */
const supersededBy = async (scope: RunScope): Promise<{ branch: string; head: string } | undefined> => {
  const { github, run } = scope;
  const branch = run.ref.startsWith('refs/heads/') ? run.ref.slice('refs/heads/'.length) : run.defaultBranch;
  if (!github || !branch || !run.sha) return undefined;
  const head = await github.branchHead(branch);
  return head === run.sha ? undefined : { branch, head };
};

/** The merges this run answers for, oldest first, each with its reviewed plan and record. */
const collectMerges = async (scope: RunScope): Promise<MergeState[]> => {
  const github = scope.github;
  if (!github) return [];
  const author = await planCommentAuthor(github, scope.inputs.planCommentAuthor, false);
  scope.deps.runtime.info(`The reviewed plan is the plan comment of ${author.login} (account id ${author.id}).`);
  const cache = new Map<number, IssueComment[]>();
  const commentsOf = async (pr: number): Promise<IssueComment[]> => {
    const known = cache.get(pr) ?? (await github.listComments(pr));
    cache.set(pr, known);
    return known;
  };
  const { sourceId, dir } = scope.label;
  const recordOf = async (pr: number) => recordIn(await commentsOf(pr), sourceId, dir, author);
  const lookupOf = async (pr: number) => reviewedPlanIn(await commentsOf(pr), marker(scope), author);
  const status = async (pr: number): Promise<MergeStatus> => {
    const lookup = await lookupOf(pr);
    return { record: await recordOf(pr), planned: !(lookup.status === 'none' && lookup.why === undefined) };
  };
  // Without comments nothing is recorded: only this push's merges are answered for. A merge of
  // the push without a plan comment (it changed no manifest, or nobody planned it) is passed over:
  // what it changed shows up as steps none of the others reviewed.
  const merges = await mergesToAnswer(github, scope.run, status, scope.inputs.comment);
  const states: MergeState[] = [];
  for (const merge of merges)
    states.push({ merge, lookup: await lookupOf(merge.pullRequest), record: await recordOf(merge.pullRequest) });
  const planned = states.filter((s) => !(s.lookup.status === 'none' && s.lookup.why === undefined));
  return planned.length > 0 ? planned : states;
};

const appliedAlready = (s: MergeState): boolean =>
  s.lookup.status === 'reviewed' &&
  typeof s.record === 'object' &&
  s.record.outcome === 'applied' &&
  s.record.digest === s.lookup.plan.digest;

type Decision =
  | { kind: 'no-merge' }
  | { kind: 'applied-already'; pullRequests: number[] }
  | {
      kind: 'judged';
      judged: MergeState[];
      judgement: MergeJudgement;
      unplanned: { pullRequest: number; why: string }[];
    };

const decide = (merges: readonly MergeState[], plan: Plan): Decision => {
  const judged = merges.filter((s) => !appliedAlready(s));
  if (judged.length === 0)
    return merges.length
      ? { kind: 'applied-already', pullRequests: merges.map((s) => s.merge.pullRequest) }
      : { kind: 'no-merge' };
  const unplanned = judged.flatMap((s) =>
    s.lookup.status === 'none'
      ? [
          {
            pullRequest: s.merge.pullRequest,
            why: s.lookup.why ?? 'it has no cortex-sync plan comment for this source and directory',
          },
        ]
      : [],
  );
  const reviews = judged.flatMap((s) =>
    s.lookup.status === 'reviewed'
      ? [
          {
            pullRequest: s.merge.pullRequest,
            digest: s.lookup.plan.digest,
            ...(s.lookup.plan.changes ? { changes: s.lookup.plan.changes } : {}),
          },
        ]
      : [],
  );
  const judgement: MergeJudgement = reviews.length ? judgeMerges(reviews, plan) : { verdict: 'refuse', problems: [] };
  return { kind: 'judged', judged, judgement, unplanned };
};

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

  const merges = await collectMerges(scope);
  const decision = decide(merges, current);
  const applyAnyway = scope.inputs.onPlanDrift === 'apply';
  // A comment that cannot be written is a warning: the summary and outputs carry the run's truth.
  const say = async (pr: number, body: string, record: MergeRecord) => {
    if (scope.inputs.comment)
      await tellPullRequest(scope, pr, `${body}\n${recordLine(scope.label.sourceId, scope.label.dir, record)}\n`);
  };
  const refuse = async (body: string) => {
    await scope.summary(
      `${body}\n${renderPlanComment(current, [], { title: `${title} (not applied)`, ...summaryOptions(scope) })}`,
    );
    // The Action's own refusal: the plan is reported as planned (and its file named), and the step fails.
    const planJson = await writePlanJson(join(scope.outDir, 'plan.json'), current, scope.redact);
    return scope.finish(outputsOf(planned.run, 1), { planJson });
  };
  const consequence = applyAnyway
    ? ': applying anyway (on-plan-drift: apply)'
    : ': nothing applied (on-plan-drift: fail)';

  if (decision.kind === 'no-merge') {
    const body = noReviewedPlanBody({ label: scope.label, applied: applyAnyway, looked: scope.github !== undefined });
    runtime.annotate({
      severity: applyAnyway ? 'warning' : 'error',
      title: 'cortex-sync: no reviewed plan',
      message: `No reviewed plan for commit ${scope.run.sha.slice(0, 12)}${consequence}`,
    });
    if (!applyAnyway) return refuse(body);
    return applyAndReport(scope, { current, currentDigest, tell: [], drifted: true, say });
  }
  if (decision.kind === 'applied-already') {
    const body = alreadyAppliedSummary(decision.pullRequests, applyAnyway);
    runtime.annotate({
      severity: applyAnyway ? 'warning' : 'error',
      title: 'cortex-sync: applied already',
      message: `The plan reviewed on ${decision.pullRequests.map((n) => `#${n}`).join(', ')} was applied already; the plan now was not reviewed${consequence}`,
    });
    if (!applyAnyway) return refuse(body);
    return applyAndReport(scope, { current, currentDigest, tell: [], drifted: true, say });
  }
  const { judgement, judged } = decision;
  if (judgement.verdict === 'refuse' || decision.unplanned.length > 0) {
    const body = await tellRefusal(scope, decision, currentDigest, applyAnyway, say);
    if (!applyAnyway) return refuse(body);
    return applyAndReport(scope, { current, currentDigest, tell: judged, drifted: true, say });
  }
  const outcomes = judgement.reviews;
  for (const o of outcomes) {
    const sentence =
      o.remaining < o.reviewed
        ? restSentence(o, o.pullRequest)
        : `The plan matches the plan reviewed on #${o.pullRequest} (${currentDigest.slice(0, 19)})`;
    runtime.info(`${sentence}: applying.`);
    if (o.remaining < o.reviewed)
      runtime.annotate({
        severity: 'notice',
        title: 'cortex-sync: rest of the reviewed plan',
        message: `${sentence}.`,
      });
  }
  return applyAndReport(scope, { current, currentDigest, tell: judged, outcomes, drifted: false, say });
};

/** Applies the plan just judged, unless the engine's own plan under the lease differs; tells each merge's pull request. */
const applyAndReport = async (
  scope: RunScope,
  input: {
    current: Plan;
    currentDigest: string;
    tell: readonly MergeState[];
    outcomes?: readonly ReviewOutcome[];
    drifted: boolean;
    say: (pr: number, body: string, record: MergeRecord) => Promise<void>;
  },
): Promise<number> => {
  const { runtime } = scope.deps;
  const title = planTitle(scope.label);
  const { currentDigest, tell, say } = input;
  const planLogFile = join(scope.outDir, 'plan-log.jsonl');
  const planLog = openPlanLog(planLogFile);
  // Unless drift is accepted, the plan the engine makes right before writing (under the apply
  // lease) must still be the one just checked: a workspace edit after the check writes nothing.
  const approve = input.drifted ? undefined : (plan: Plan) => planDigest(plan) === currentDigest;
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
  if (result.status !== 'applied') {
    await scope.summary(`### ${title}: ❌ not applied\n\n${diagnosticsSection('Problems', diagnostics)}`);
    return scope.finish(outputsOf(result.run), { planLog: keptLog });
  }
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
