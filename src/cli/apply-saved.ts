/**
 * `cortex-sync apply FILE`: applies exactly the plan `plan --out FILE` saved, and nothing else. The
 * manifest root (relative to the working tree; `--dir` names it instead), the source id and every
 * setting that shapes a plan are the file's; the API (the
 * base URL) and the key are the operator's, and must be the workspace the plan was made for. The
 * run is `apply`'s (`run-apply.ts`) with the saved plan's judgement (`engine/saved-plan.ts`): a
 * plan made now that differs in anything from the saved one is refused before any write
 * (`stale-plan`), naming what moved. The saved plan was the review: no question is asked, as
 * Terraform's `apply PLANFILE`.
 */
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CortexSyncError } from '../core/errors.js';
import { hasErrors } from '../core/model.js';
import { printable } from '../core/printable.js';
import { configureRun } from '../engine/config.js';
import { type SavedPlan, savedRootProblem } from '../core/saved-plan.js';
import { readSavedPlan, savedPlanJudge, savedPlanPrecheck, StalePlanError } from '../engine/saved-plan.js';
import { renderDiagnostics } from '../render/index.js';
import { manifestRootProblems, writeLine } from '../runtime-io/io.js';
import { isInsideFolder } from '../source/regular-file.js';
import { type ApplyOptions, runApply } from './run-apply.js';
import type { CliSession } from './session.js';

/** Flags that would make another plan than the saved one: the file says them. */
const FROM_THE_FILE: readonly (readonly [keyof ApplyOptions, string])[] = [
  ['sourceId', '--source-id'],
  ['prune', '--prune/--no-prune'],
  ['strict', '--strict/--no-strict'],
  ['allowEmpty', '--allow-empty'],
  ['dryRun', '--dry-run'],
];

/**
 * The operator's decisions: a plan file may come from a build artifact or a pull request, so it
 * cannot carry them. The file says whether the plan was made with each; the operator gives it again.
 */
const OPERATOR_DECISIONS = [
  ['allowMassDelete', '--allow-mass-delete'],
  ['allowTakeover', '--allow-takeover'],
  ['forceEntityTypeSchema', '--force-entity-type-schema'],
  ['forceConflicts', '--force-conflicts'],
] as const;

const decisionProblem = (file: string, saved: SavedPlan, o: ApplyOptions): string | undefined => {
  for (const [key, flag] of OPERATOR_DECISIONS) {
    const planned = saved.settings[key] === true;
    const given = o[key] === true;
    if (planned && !given)
      return `plan file ${printable(file)} was made with ${flag}, an operator's decision a plan file cannot carry: give ${flag} to apply it`;
    if (given && !planned)
      return `plan file ${printable(file)} was made without ${flag}: plan again with it (the saved plan is what is applied)`;
  }
  return undefined;
};

/**
 * Where the manifests are read from: `--dir`, or the file's root (field `dir`) relative to the
 * working tree. The file may come from an artifact or a pull request: a root that is absolute,
 * leaves the working tree, or leads out of it through a symlink is refused naming the field.
 */
const manifestRoot = async (
  file: string,
  saved: SavedPlan,
  o: ApplyOptions,
  cwd: string,
): Promise<string | { problem: string }> => {
  if (o.dir !== undefined) return resolve(cwd, o.dir);
  const refused = (why: string) => ({
    problem: `plan file ${printable(file)}: field \`dir\` (${printable(JSON.stringify(saved.dir))}) ${why}: the manifest root is read only inside the working tree (${printable(cwd)}); nothing was applied (give --dir to name the root)`,
  });
  const problem = savedRootProblem(saved.dir);
  if (problem !== undefined) return refused(problem);
  const root = resolve(cwd, saved.dir);
  const real = await realpath(root).catch(() => undefined);
  const realCwd = await realpath(cwd).catch(() => cwd);
  if (real !== undefined && !isInsideFolder(realCwd, real))
    return refused('leads outside the working tree through a symlink');
  return root;
};

/** Said as it is: every value in the message was escaped where it was put in. */
const said = (session: CliSession, message: string): number => {
  writeLine(session.io.stderr, `error: ${message}`);
  return 1;
};

const readPlan = async (path: string, session: CliSession): Promise<SavedPlan | number> => {
  try {
    return await readSavedPlan(path);
  } catch (error) {
    if (error instanceof CortexSyncError) return said(session, error.message);
    throw error;
  }
};

export const runApplySaved = async (file: string, o: ApplyOptions, session: CliSession): Promise<number> => {
  const { io } = session;
  const given = FROM_THE_FILE.filter(([key]) => o[key] !== undefined).map(([, flag]) => flag);
  if (given.length > 0)
    return said(
      session,
      `apply ${printable(file)} takes the source id and the settings from the plan file: leave out ${given.join(', ')} (or plan again with them)`,
    );
  const saved = await readPlan(resolve(io.cwd, file), session);
  if (typeof saved === 'number') return saved;
  const decision = decisionProblem(file, saved, o);
  if (decision !== undefined) return said(session, decision);
  if (saved.steps.length === 0)
    return said(session, `plan file ${printable(file)} has no changes: nothing to apply (the workspace was in sync)`);
  const root = await manifestRoot(file, saved, o, io.cwd);
  if (typeof root !== 'string') return said(session, root.problem);
  const problems = await manifestRootProblems(root, `the manifest root of ${file}`);
  if (problems.length) {
    writeLine(io.stderr, renderDiagnostics(problems, { color: session.colorErr }));
    return 1;
  }
  const { config, diagnostics } = await configureRun(
    {
      said: {
        dir: root,
        ...(saved.sourceId !== null ? { sourceId: saved.sourceId } : {}),
        baseUrl: o.baseUrl,
        prune: saved.settings.prune,
        allowMassDelete: saved.settings.allowMassDelete,
        allowTakeover: saved.settings.allowTakeover,
        forceEntityTypeSchema: saved.settings.forceEntityTypeSchema,
        forceConflicts: saved.settings.forceConflicts === true,
        strict: saved.settings.strict,
        allowEmpty: saved.settings.allowEmpty,
        concurrency: o.concurrency,
        breakLease: o.breakLease,
      },
    },
    io.env,
    io.cwd,
  );
  session.redaction.add(config.apiKey);
  if (diagnostics.length) writeLine(io.stderr, renderDiagnostics(diagnostics, { color: session.colorErr }));
  if (hasErrors(diagnostics)) return 1;
  if (config.baseUrl !== saved.baseUrl)
    return said(
      session,
      `plan file ${printable(file)} was made for the workspace at ${printable(saved.baseUrl)}; this run's API is ${printable(config.baseUrl)} (--base-url, CORTEX_BASE_URL): nothing was applied`,
    );
  const judge = savedPlanJudge(saved, file);
  try {
    return await runApply(o, session, {
      config,
      precheck: savedPlanPrecheck(saved, file, config),
      onPlanned: (pass) => judge.firstPass(pass, config),
      beforeWrites: judge.beforeWrites,
    });
  } catch (error) {
    if (error instanceof StalePlanError) return said(session, error.message);
    throw error;
  }
};
