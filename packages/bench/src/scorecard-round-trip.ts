/**
 * The scorecard round trip at N: a repository of N scorecards and N Initiatives (each naming one
 * of them) is applied to an empty workspace, planned again (it must have no changes), exported,
 * and the export planned (no changes either). Each step runs the command as users run it
 * (`runCli`, in this process) and is measured by its wall time and the requests the emulator
 * served, per route. The emulator is given by the caller: its own process in `npm run bench`,
 * one in the test's process for a small N.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../../src/cli/main.js';
import type { RequestLogEntry } from '../../emulator/src/server.js';

export const SCORECARD_BENCH_SOURCE_ID = 'bench-scorecards';

/** What the round trip needs of an emulator: where it is and what it served. */
export interface RoundTripEmulator {
  url: string;
  requests(): Promise<readonly RequestLogEntry[]>;
}

export interface ScorecardRoundTripInput {
  /** Scorecards, and as many Initiatives. */
  n: number;
  /** Emptied and used for the repository and the export. */
  workDir: string;
  emulator: RoundTripEmulator;
  apiKey: string;
  /** The client's budget (`CORTEX_RATE_LIMIT`). */
  requestsPerMinute: number;
  log?: (line: string) => void;
}

export interface RoundTripStep {
  label: string;
  wallMs: number;
  /** Requests the emulator served during the step, and per route (`GET /api/v1/scorecards/{tag}/descriptor`). */
  requests: number;
  byRoute: Record<string, number>;
  exitCode: number;
  /** Changes (create, update, delete, archive) the step's plan held. */
  changes?: number;
  /** Files export wrote. */
  files?: number;
}

export interface ScorecardRoundTripResult {
  scorecards: number;
  initiatives: number;
  requestsPerMinute: number;
  steps: RoundTripStep[];
  /** What went wrong, if anything (a step that failed, a plan with changes); empty when the round trip held. */
  problems: string[];
}

const scorecardTag = (i: number): string => `bench-scorecard-${i}`;

const scorecardYaml = (i: number): string => `tag: ${scorecardTag(i)}
name: Bench scorecard ${i}
description: Benchmark scorecard ${i}.
filter:
  groups:
    include: [tier-${i % 3}]
ladder:
  levels:
    - {name: Gold, rank: 1, color: "#FFD700"}
    - {name: Silver, rank: 2}
    - {name: Bronze, rank: 3}
rules:
  - {title: Has an on-call rotation, expression: oncall != null, level: Gold}
  - {title: Has a runbook, expression: links("runbook").length > ${i % 5}, level: Silver}
  - {expression: git != null, level: Bronze, weight: 2}
`;

const initiativeYaml = (i: number): string => `name: Bench scorecard initiative ${i}
scorecardTag: ${scorecardTag(i)}
targetDate: "2099-12-31"
isDraft: false
emphasizedLevels:
  - rank: ${(i % 3) + 1}
emphasizedRules:
  - expression: git != null
`;

/** The repository of the round trip: N scorecards, N Initiatives, its settings. */
export const scorecardRepositoryFiles = (n: number): Map<string, string> => {
  const files = new Map<string, string>();
  files.set('cortex-sync.yaml', `sourceId: ${SCORECARD_BENCH_SOURCE_ID}\nconcurrency: 8\n`);
  for (let i = 0; i < n; i++) {
    files.set(`.cortex/scorecards/${scorecardTag(i)}.yaml`, scorecardYaml(i));
    files.set(`.cortex/initiatives/bench-scorecard-initiative-${i}.yaml`, initiativeYaml(i));
  }
  return files;
};

const writeRepository = async (dir: string, files: ReadonlyMap<string, string>): Promise<void> => {
  for (const [path, text] of files) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
};

/** A route with its ids folded, so requests group by what they do. */
export const routeOf = (entry: Pick<RequestLogEntry, 'method' | 'path'>): string => {
  const path = entry.path
    .replace(/^\/api\/v1\/scorecards\/(?!descriptor$)[^/]+/, '/api/v1/scorecards/{tag}')
    .replace(/^\/api\/v1\/initiatives\/[^/]+/, '/api/v1/initiatives/{cid}')
    .replace(/^\/api\/v1\/catalog\/(?!descriptors$|definitions$)[^/]+/, '/api/v1/catalog/{tag}')
    .replace(/^\/api\/v1\/catalog\/definitions\/[^/]+/, '/api/v1/catalog/definitions/{type}');
  return `${entry.method} ${path}`;
};

const countRoutes = (entries: readonly RequestLogEntry[]): Record<string, number> => {
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(routeOf(e), (counts.get(routeOf(e)) ?? 0) + 1);
  return Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));
};

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const cli = async (args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CliRun> => {
  const collect = () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
  };
  const out = collect();
  const err = collect();
  const code = await runCli(args, { stdout: out.stream, stderr: err.stream, env, cwd });
  return { code, stdout: out.text(), stderr: err.text() };
};

/** Changes a JSON plan holds (every action but noop), or undefined when stdout is not one. */
const changesOf = (stdout: string): number | undefined => {
  try {
    const plan = JSON.parse(stdout) as { summary?: Record<string, number> };
    const s = plan.summary;
    return s ? (s.create ?? 0) + (s.update ?? 0) + (s.delete ?? 0) + (s.archive ?? 0) : undefined;
  } catch {
    return undefined;
  }
};

/** Runs the round trip (see the module comment). */
export const runScorecardRoundTrip = async (input: ScorecardRoundTripInput): Promise<ScorecardRoundTripResult> => {
  const { n, workDir, emulator } = input;
  const log = input.log ?? (() => {});
  const repo = join(workDir, 'repository');
  const exported = join(workDir, 'exported');
  await rm(workDir, { recursive: true, force: true });
  await writeRepository(repo, scorecardRepositoryFiles(n));
  await mkdir(exported, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    CORTEX_BASE_URL: emulator.url,
    CORTEX_API_KEY: input.apiKey,
    CORTEX_RATE_LIMIT: String(input.requestsPerMinute),
    // The repository and its export are two checkouts of one origin (the source id is bound to it).
    CORTEX_SYNC_ORIGIN: 'bench/scorecards',
    NO_COLOR: '1',
  };

  const steps: RoundTripStep[] = [];
  const problems: string[] = [];
  const step = async (label: string, args: string[], cwd: string, expectCode: readonly number[]) => {
    const before = (await emulator.requests()).length;
    const started = performance.now();
    const run = await cli(args, cwd, env);
    const wallMs = performance.now() - started;
    const served = (await emulator.requests()).slice(before);
    const result: RoundTripStep = {
      label,
      wallMs,
      requests: served.length,
      byRoute: countRoutes(served),
      exitCode: run.code,
    };
    const changes = changesOf(run.stdout);
    if (changes !== undefined) result.changes = changes;
    if (!expectCode.includes(run.code)) {
      problems.push(`${label} exited ${run.code}: ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    }
    steps.push(result);
    log(`scorecard round trip at ${n}: ${label} in ${(wallMs / 1000).toFixed(1)} s, ${served.length} requests`);
    return result;
  };

  const applied = await step('apply', ['apply', '--dir', repo, '--output', 'json', '--auto-approve'], repo, [0]);
  if (applied.changes !== 2 * n) problems.push(`apply planned ${applied.changes} changes, not ${2 * n}`);
  const again = await step('plan again', ['plan', '--dir', repo, '--output', 'json', '--detailed-exitcode'], repo, [0]);
  if (again.changes !== 0) problems.push(`the plan after apply has ${again.changes} changes`);
  const exportRun = await step(
    'export',
    ['export', '--out', exported, '--source-id', SCORECARD_BENCH_SOURCE_ID, '--kinds', 'scorecard,initiative'],
    exported,
    [0],
  );
  const files = (await readdir(exported, { recursive: true, withFileTypes: true })).filter(
    (e) => e.isFile() && e.name.endsWith('.yaml') && e.name !== 'cortex-sync.yaml',
  ).length;
  exportRun.files = files;
  if (files !== 2 * n) problems.push(`export wrote ${files} manifests, not ${2 * n}`);
  const replanned = await step(
    'plan of the export',
    ['plan', '--dir', exported, '--output', 'json', '--detailed-exitcode'],
    exported,
    [0],
  );
  if (replanned.changes !== 0) problems.push(`the plan of the export has ${replanned.changes} changes`);
  return { scorecards: n, initiatives: n, requestsPerMinute: input.requestsPerMinute, steps, problems };
};

/** The round trip as a Markdown table, with the requests of each step per route. */
export const renderScorecardRoundTrip = (r: ScorecardRoundTripResult): string => {
  const lines = [
    `### Scorecard round trip: ${r.scorecards} scorecards + ${r.initiatives} Initiatives (client at ${r.requestsPerMinute} requests/minute)`,
    '',
    '| step | wall time | requests | changes | requests per route |',
    '| --- | ---: | ---: | ---: | --- |',
    ...r.steps.map(
      (s) =>
        `| ${s.label} | ${(s.wallMs / 1000).toFixed(1)} s | ${s.requests} | ${s.changes ?? (s.files !== undefined ? `${s.files} files` : '')} | ${Object.entries(
          s.byRoute,
        )
          .map(([route, count]) => `${route} ×${count}`)
          .join('<br>')} |`,
    ),
    '',
    r.problems.length === 0 ? 'The round trip held.' : `PROBLEMS: ${r.problems.join('; ')}`,
    '',
  ];
  return lines.join('\n');
};
