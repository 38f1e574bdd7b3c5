/**
 * The export round trip at N entities: a generated repository is applied to an emulator in its
 * own process, then measured: the no-op `plan` of that repository (the reference), `export` of
 * the workspace with the client at the API's budget but without dependency edges (`--kinds`),
 * `export` of every kind with the client's rate limit lifted (the API has no bulk read of edges:
 * one request per entity, so at the budget the edges alone take N/1,000 minutes; the figure shows
 * the rest of the cost), and the no-op `plan` of what export wrote (it must have no changes).
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KIND_NAMES } from '../../../src/kinds/registry.js';
import { API_BUDGET_PER_MINUTE } from './analysis.js';
import { BENCH_SOURCE_ID, generateRepository, type RepositoryShape } from './generate.js';
import { type EmulatorProcess, runChild, startEmulatorProcess } from './processes.js';
import type { BenchContext } from './scenarios.js';

const HERE = import.meta.dirname;

interface PlanChild {
  wallMs: number;
  status: string;
  summary?: { create: number; update: number; delete: number; archive: number; noop: number };
  errors: string[];
  requests: number;
  processWallMs: number;
  maxRssMb: number;
}

interface ExportChild {
  wallMs: number;
  cpuMs: number;
  code: number;
  files: number;
  stdout: string;
  stderr: string;
  processWallMs: number;
  maxRssMb: number;
}

/** One measured run: wall time of the operation, API requests the emulator served, peak RSS. */
export interface RoundTripFigure {
  label: string;
  wallMs: number;
  requests: number;
  maxRssMb: number;
  files?: number;
  changes?: number;
}

export interface ExportRoundTripResult {
  entities: number;
  shape: RepositoryShape;
  figures: RoundTripFigure[];
  /** Minutes the per-entity edge reads take at the API's budget (one request each). */
  edgeReadMinutesAtBudget: number;
}

/** Runs `export-child.js` (the runner of `processes.ts` knows only its own children). */
const runExportChild = async (
  emulator: EmulatorProcess,
  apiKey: string,
  args: string[],
  rateLimit?: number,
): Promise<ExportChild> => {
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CORTEX_'))),
    CORTEX_BASE_URL: emulator.url,
    CORTEX_API_KEY: apiKey,
    ...(rateLimit !== undefined ? { CORTEX_RATE_LIMIT: String(rateLimit) } : {}),
  };
  const child = spawn(process.execPath, [join(HERE, 'export-child.js'), ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: Buffer[] = [];
  const errors: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  child.stderr.on('data', (c: Buffer) => errors.push(c));
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  if (code !== 0)
    throw new Error(`export-child.js exited with ${code}: ${Buffer.concat(errors).toString('utf8').slice(-2000)}`);
  const result = JSON.parse(Buffer.concat(chunks).toString('utf8').trim().split('\n').pop() ?? '') as ExportChild;
  if (result.code !== 0) throw new Error(`export failed (${result.code}): ${result.stderr}`);
  return result;
};

const changesOf = (summary: PlanChild['summary']): number =>
  summary ? summary.create + summary.update + summary.delete + summary.archive : -1;

/** Measures the round trip (see the module comment). */
export const measureExportRoundTrip = async (ctx: BenchContext, entities: number): Promise<ExportRoundTripResult> => {
  const dir = join(ctx.workDir, `export-source-${entities}`);
  const shape = await generateRepository(dir, { entities });
  const emulator = await startEmulatorProcess({ apiKey: ctx.apiKey, rateLimit: 0 });
  const figures: RoundTripFigure[] = [];
  // The source folder and the exported one stand for one repository: one origin for both, as the
  // git remote would be (the source id is bound to the origin of its first apply).
  const origin = { CORTEX_SYNC_ORIGIN: 'bench:export-round-trip' };
  const served = async <T>(fn: () => Promise<T>): Promise<{ value: T; requests: number }> => {
    const before = (await emulator.requests()).length;
    const value = await fn();
    return { value, requests: (await emulator.requests()).length - before };
  };
  const plan = async (label: string, planDir: string): Promise<void> => {
    ctx.log(`export round trip, ${entities} entities: ${label}`);
    const { value, requests } = await served(() =>
      runChild<PlanChild>({
        script: 'run-plan.js',
        args: ['plan', '--dir', planDir],
        emulator,
        apiKey: ctx.apiKey,
        env: origin,
      }),
    );
    if (value.status !== 'planned') throw new Error(`${label}: ${value.status} ${value.errors.join('; ')}`);
    figures.push({
      label,
      wallMs: value.wallMs,
      requests,
      maxRssMb: value.maxRssMb,
      changes: changesOf(value.summary),
    });
  };
  const exportOnce = async (
    label: string,
    out: string,
    kinds: readonly string[],
    rateLimit?: number,
  ): Promise<void> => {
    ctx.log(`export round trip, ${entities} entities: ${label}`);
    const args = ['--out', out, '--source-id', BENCH_SOURCE_ID, '--kinds', kinds.join(',')];
    const { value, requests } = await served(() => runExportChild(emulator, ctx.apiKey, args, rateLimit));
    figures.push({ label, wallMs: value.wallMs, requests, maxRssMb: value.maxRssMb, files: value.files });
  };
  try {
    ctx.log(`export round trip, ${entities} entities: set-up apply of ${shape.files} files`);
    const setup = await runChild<{ status: string; errors: string[] }>({
      script: 'run-apply.js',
      args: ['--dir', dir, '--rpm', '10000000', '--concurrency', '16'],
      emulator,
      apiKey: ctx.apiKey,
      env: origin,
    });
    if (setup.status !== 'applied') throw new Error(`the set-up apply did not succeed: ${setup.errors.join('; ')}`);

    await plan('plan of the source repository (no-op)', dir);
    const withoutEdges = KIND_NAMES.filter((k) => k !== 'dependency');
    await exportOnce(
      `export without dependency edges (client at ${API_BUDGET_PER_MINUTE}/min)`,
      join(ctx.workDir, `export-out-${entities}-budget`),
      withoutEdges,
    );
    const out = join(ctx.workDir, `export-out-${entities}-all`);
    await exportOnce("export of every kind (client's rate limit lifted)", out, KIND_NAMES, 10_000_000);
    await plan('plan of the exported files', out);
  } finally {
    await emulator.stop();
  }
  return { entities, shape, figures, edgeReadMinutesAtBudget: entities / API_BUDGET_PER_MINUTE };
};

/** The result as a markdown table. */
export const renderExportRoundTrip = (result: ExportRoundTripResult): string => {
  const rows = result.figures.map(
    (f) =>
      `| ${f.label} | ${(f.wallMs / 1000).toFixed(1)} s | ${f.requests} | ${f.files ?? ''} | ${f.changes ?? ''} | ${Math.round(f.maxRssMb)} MB |`,
  );
  return [
    `\n### Export round trip, ${result.entities} entities\n`,
    '| run | wall | API requests | files written | changes | peak RSS |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Dependency edges have no bulk read: one request per entity, ${result.edgeReadMinutesAtBudget.toFixed(1)} min of the API's budget at ${API_BUDGET_PER_MINUTE} requests/minute.`,
    '',
  ].join('\n');
};

/** Measures, prints the table on stdout and writes the figures as JSON to `outFile`. */
export const runExportBenchmark = async (ctx: BenchContext, entities: number, outFile: string): Promise<void> => {
  const result = await measureExportRoundTrip(ctx, entities);
  process.stdout.write(renderExportRoundTrip(result));
  await writeFile(
    outFile,
    `${JSON.stringify({ formatVersion: 1, date: new Date().toISOString(), ...result }, null, 2)}\n`,
  );
  ctx.log(`wrote ${outFile}`);
};
