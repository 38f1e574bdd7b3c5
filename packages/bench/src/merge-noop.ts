/**
 * Merge writes at scale (`entityWrites: merge`, docs/adr-0004-co-ownership.md): what a no-op plan
 * of N entities costs in merge mode beside replace mode, request by request (the client's count
 * per kind of request, and the emulator's log). Three plans of the same workspace, each after the
 * repository is in sync:
 *
 * 1. `replace`: the generated repository (`generate.ts`) applied as it is, then planned;
 * 2. `merge`: the same repository switched to `entityWrites: merge` (one apply: it records the keys
 *    in their merge form and sends no PATCH), then planned;
 * 3. `co-owned`: a second source in merge mode declares one custom metadata key of every entity
 *    (it names itself on each: N PATCHes), then both sources plan: the owner's plan reads the
 *    other's record in the one list of records, as every record, and the other's reads the owner's.
 *
 * Figures: each merge plan's requests beside the replace plan's (the floor; target: equal).
 * `npm run bench` runs it at the largest size; `node packages/bench/dist/merge-main.js
 * [--entities 10000]` alone (`bench/merge-results.json`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Figure } from './figures.js';
import { generateRepository, repositoryFiles } from './generate.js';
import { type EmulatorProcess, runChild, startEmulatorProcess } from './processes.js';
import type { BenchContext } from './scenarios.js';

interface PlanRun {
  status: string;
  summary?: { create: number; update: number; delete: number; archive: number; noop: number };
  errors: string[];
  requests: number;
  byOperation: Record<string, number>;
  wallMs: number;
}

interface ApplyRun {
  status: string;
  summary?: PlanRun['summary'];
  errors: string[];
  outcomes: { ok: number; failed: number; skipped: number };
  byOperation: Record<string, number>;
}

/** One no-op plan: the client's requests by kind, and what the emulator served. */
export interface MergePlanFigures {
  requests: number;
  requestsInEmulatorLog: number;
  byOperation: Record<string, number>;
  wallMs: number;
}

export interface MergeNoopResult {
  entities: number;
  replace: MergePlanFigures;
  merge: MergePlanFigures;
  /** Writes of the apply that switched the repository to merge: the record only. */
  switchWrites: Record<string, number>;
  coOwned: { owner: MergePlanFigures; other: MergePlanFigures; otherApplyWrites: Record<string, number> };
  figures: Figure[];
}

const APPLY_ARGS = ['--rpm', '10000000', '--concurrency', '16'];
const OTHER_SOURCE = 'bench-platform';

/** The writes among `byOperation`, one entity's merge folded into one kind of request (`PATCH merge entity …`). */
const writesOf = (byOperation: Record<string, number>): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const [op, count] of Object.entries(byOperation)) {
    if (op.startsWith('GET ')) continue;
    const kind = op.replace(/^(PATCH merge entity) .+$/, '$1 …');
    out[kind] = (out[kind] ?? 0) + count;
  }
  return out;
};

const apply = async (ctx: BenchContext, emulator: EmulatorProcess, dir: string): Promise<ApplyRun> => {
  const run = await runChild<ApplyRun>({
    script: 'run-apply.js',
    args: ['--dir', dir, ...APPLY_ARGS],
    emulator,
    apiKey: ctx.apiKey,
  });
  if (run.status !== 'applied' || run.outcomes.failed > 0 || run.outcomes.skipped > 0)
    throw new Error(
      `the apply of ${dir} did not succeed: ${run.status} ${JSON.stringify(run.outcomes)} ${run.errors.join('; ')}`,
    );
  return run;
};

/** A no-op plan as `cortex-sync plan` runs it (the client's own rate limit lifted: requests are what count here). */
const noopPlan = async (ctx: BenchContext, emulator: EmulatorProcess, dir: string): Promise<MergePlanFigures> => {
  const before = (await emulator.requests()).length;
  const plan = await runChild<PlanRun>({
    script: 'run-plan.js',
    args: ['plan', '--dir', dir, '--rpm', '10000000'],
    emulator,
    apiKey: ctx.apiKey,
  });
  const served = (await emulator.requests()).length - before;
  const s = plan.summary;
  if (plan.status !== 'planned' || s === undefined || s.create + s.update + s.delete + s.archive > 0)
    throw new Error(`the plan of ${dir} is not a no-op: ${plan.status} ${JSON.stringify(s)} ${plan.errors.join('; ')}`);
  return { requests: plan.requests, requestsInEmulatorLog: served, byOperation: plan.byOperation, wallMs: plan.wallMs };
};

/** The second source: one custom metadata key of every generated entity, in merge mode. */
const writeOtherSource = async (dir: string, entities: number): Promise<void> => {
  const { files } = repositoryFiles({ entities });
  const tags: string[] = [];
  for (const [path, text] of files) {
    if (!/^\.cortex\/(catalog|teams|domains)\//.test(path)) continue;
    const tag = /^ {2}x-cortex-tag: (.+)$/m.exec(text)?.[1];
    if (tag !== undefined) tags.push(tag.trim());
  }
  await mkdir(join(dir, '.cortex', 'catalog'), { recursive: true });
  await writeFile(join(dir, 'cortex-sync.yaml'), `sourceId: ${OTHER_SOURCE}\nentityWrites: merge\nconcurrency: 8\n`);
  for (let i = 0; i < tags.length; i += 256)
    await Promise.all(
      tags
        .slice(i, i + 256)
        .map((tag) =>
          writeFile(
            join(dir, '.cortex', 'catalog', `${tag}.yaml`),
            `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  x-cortex-custom-metadata:\n    platform-tier: tier-1\n`,
          ),
        ),
    );
};

const figureOf = (id: string, figure: string, value: MergePlanFigures, replace: MergePlanFigures): Figure => ({
  id,
  figure,
  value: value.requests,
  unit: 'requests',
  floor: { value: replace.requests, what: 'the same no-op plan in replace mode' },
  target: { timesFloor: 1 },
});

export const runMergeNoopBenchmark = async (
  ctx: BenchContext,
  entities: number,
  outFile?: string,
): Promise<MergeNoopResult> => {
  const dir = join(ctx.workDir, `merge-${entities}`);
  const other = join(ctx.workDir, `merge-${entities}-other`);
  await generateRepository(dir, { entities });
  const emulator = await startEmulatorProcess({ apiKey: ctx.apiKey, rateLimit: 0 });
  try {
    ctx.log(`merge: set-up apply of ${entities} entities (replace)`);
    await apply(ctx, emulator, dir);
    ctx.log(`merge: no-op plan of ${entities} entities, replace`);
    const replace = await noopPlan(ctx, emulator, dir);
    await writeFile(join(dir, 'cortex-sync.yaml'), 'sourceId: bench-catalog\nentityWrites: merge\nconcurrency: 8\n');
    ctx.log(`merge: the repository switched to merge (apply)`);
    const switched = await apply(ctx, emulator, dir);
    ctx.log(`merge: no-op plan of ${entities} entities, merge`);
    const merge = await noopPlan(ctx, emulator, dir);
    ctx.log(`merge: a second source declares a key of every entity (apply)`);
    await writeOtherSource(other, entities);
    const otherApply = await apply(ctx, emulator, other);
    ctx.log(`merge: no-op plans of both sources of ${entities} co-owned entities`);
    const owner = await noopPlan(ctx, emulator, dir);
    const otherPlan = await noopPlan(ctx, emulator, other);
    const result: MergeNoopResult = {
      entities,
      replace,
      merge,
      switchWrites: writesOf(switched.byOperation),
      coOwned: { owner, other: otherPlan, otherApplyWrites: writesOf(otherApply.byOperation) },
      figures: [
        figureOf(
          'merge-noop-requests',
          `no-op plan of ${entities.toLocaleString('en-US')} entities, merge`,
          merge,
          replace,
        ),
        figureOf(
          'merge-co-owned-noop-requests',
          `no-op plan of ${entities.toLocaleString('en-US')} entities, merge, a second source writing keys into each`,
          owner,
          replace,
        ),
      ],
    };
    if (outFile !== undefined) await writeFile(outFile, `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    await emulator.stop();
  }
};
