/**
 * Benchmark scenario: the client left at its default (1,000 requests/minute) applies a change to
 * every entity against an emulator limited to 100, 300 and 1,000 requests/minute (bucket: ten
 * seconds of its rate). It must learn each limit from the 429s: under 5 % of requests answered
 * 429, and the apply within 10 % of the time the limits allow (or of the same apply without a
 * limit, when the work takes longer than the limits would).
 *
 * Alone: `node dist/bench/adaptive-rate.js [--entities 500] [--limits 100,300,1000]`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { RequestLogEntry } from '../../emulator/src/server.js';
import { insideRetryAfter, RETRY_AFTER_ALLOWANCE_MS } from './analysis.js';
import { generateRepository } from './generate.js';
import { runChild, startEmulatorProcess } from './processes.js';

/** The client's defaults: its rate ceiling and its burst (a quarter of it). */
const CLIENT_PER_MINUTE = 1000;
const CLIENT_BURST = 250;

export interface AdaptiveRateResult {
  serverPerMinute: number;
  serverBurst: number;
  entities: number;
  requests: number;
  rateLimited: number;
  /** 429s as a share of all requests. */
  rateLimitedShare: number;
  /** Requests that arrived inside a Retry-After window (50 ms allowed for those in flight). */
  insideRetryAfter: number;
  /** From the first to the last request's arrival. */
  applyMs: number;
  /** The same apply against an emulator without a limit (the client's ceiling lifted): what the work itself takes. */
  unlimitedMs: number;
  /** The least time the two limits allow for the requests that were answered (server and client bursts counted), or `unlimitedMs` when longer. */
  idealMs: number;
  timeToIdeal: number;
  rateDecreases: number;
  finalPerMinute: number;
  failed: number;
}

interface ApplyChild {
  wallMs: number;
  status: string;
  errors: string[];
  outcomes: { ok: number; failed: number; skipped: number };
  stats: { rateDecreases?: number; currentPerMinute?: number };
}

/** The least time, in ms, `answered` requests take under both the server's and the client's token bucket. */
export const idealApplyMs = (answered: number, serverPerMinute: number, serverBurst: number): number =>
  Math.max(
    (Math.max(0, answered - serverBurst) / serverPerMinute) * 60_000,
    (Math.max(0, answered - CLIENT_BURST) / CLIENT_PER_MINUTE) * 60_000,
  );

export const adaptiveFigures = (
  log: readonly RequestLogEntry[],
  serverPerMinute: number,
  serverBurst: number,
  unlimitedMs: number,
): Pick<
  AdaptiveRateResult,
  'requests' | 'rateLimited' | 'rateLimitedShare' | 'insideRetryAfter' | 'applyMs' | 'idealMs' | 'timeToIdeal'
> => {
  const times = log.map((r) => r.ts);
  const applyMs = times.length === 0 ? 0 : Math.max(...times) - Math.min(...times);
  const rateLimited = log.filter((r) => r.status === 429).length;
  const idealMs = Math.max(unlimitedMs, idealApplyMs(log.length - rateLimited, serverPerMinute, serverBurst));
  return {
    requests: log.length,
    rateLimited,
    rateLimitedShare: log.length === 0 ? 0 : rateLimited / log.length,
    insideRetryAfter: insideRetryAfter(log, 1000, RETRY_AFTER_ALLOWANCE_MS),
    applyMs,
    idealMs,
    timeToIdeal: idealMs > 0 ? applyMs / idealMs : Number.NaN,
  };
};

/** Runs the scenario once per server limit, each on a fresh emulator holding the same data. */
export const measureAdaptiveRate = async (
  workDir: string,
  apiKey: string,
  entities: number,
  limits: readonly number[],
  log: (line: string) => void,
): Promise<AdaptiveRateResult[]> => {
  const results: AdaptiveRateResult[] = [];
  for (const serverPerMinute of limits) {
    const dir = join(workDir, `adaptive-${serverPerMinute}`);
    const dataFile = join(workDir, `adaptive-${serverPerMinute}.json`);
    await generateRepository(dir, { entities, revision: 0 });
    const unlimited = await startEmulatorProcess({ apiKey, rateLimit: 0, dataFile });
    let unlimitedMs: number;
    try {
      log(`adaptive rate, server at ${serverPerMinute}/min: set-up apply of ${entities} entities`);
      await runChild<ApplyChild>({
        script: 'run-apply.js',
        args: ['--dir', dir, '--rpm', '10000000', '--concurrency', '16'],
        emulator: unlimited,
        apiKey,
      });
      // The same change without any limit: the floor the work itself sets.
      await generateRepository(dir, { entities, revision: 1 });
      const before = (await unlimited.requests()).length;
      await runChild<ApplyChild>({
        script: 'run-apply.js',
        args: ['--dir', dir, '--rpm', '10000000'],
        emulator: unlimited,
        apiKey,
      });
      const times = (await unlimited.requests()).slice(before).map((r) => r.ts);
      unlimitedMs = Math.max(...times) - Math.min(...times);
    } finally {
      await unlimited.stop();
    }
    await generateRepository(dir, { entities, revision: 2 });
    const serverBurst = Math.max(1, Math.round(serverPerMinute / 6));
    const emulator = await startEmulatorProcess({ apiKey, rateLimit: serverPerMinute, burst: serverBurst, dataFile });
    try {
      log(`adaptive rate, server at ${serverPerMinute}/min: apply with the client at its default`);
      const run = await runChild<ApplyChild>({ script: 'run-apply.js', args: ['--dir', dir], emulator, apiKey });
      if (run.status !== 'applied') throw new Error(`apply ended ${run.status}: ${run.errors.join('; ')}`);
      results.push({
        serverPerMinute,
        serverBurst,
        entities,
        unlimitedMs,
        ...adaptiveFigures(await emulator.requests(), serverPerMinute, serverBurst, unlimitedMs),
        rateDecreases: run.stats.rateDecreases ?? 0,
        finalPerMinute: run.stats.currentPerMinute ?? CLIENT_PER_MINUTE,
        failed: run.outcomes.failed,
      });
    } finally {
      await emulator.stop();
    }
  }
  return results;
};

const pct = (share: number): string => `${(share * 100).toFixed(1)} %`;
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Markdown table of the results, with the goals judged. */
export const renderAdaptiveRate = (results: readonly AdaptiveRateResult[]): string => {
  const rows = results.map(
    (r) =>
      `| ${r.serverPerMinute}/min (bucket ${r.serverBurst}) | ${r.entities} | ${r.requests} | ${r.rateLimited} (${pct(r.rateLimitedShare)}) ${r.rateLimitedShare < 0.05 ? 'met' : 'MISSED'} | ${r.insideRetryAfter} | ${seconds(r.applyMs)} | ${seconds(r.unlimitedMs)} | ${seconds(r.idealMs)} | ${r.timeToIdeal.toFixed(2)} ${r.timeToIdeal <= 1.1 ? 'met' : 'MISSED'} | ${r.rateDecreases}, ends at ${Math.round(r.finalPerMinute)}/min |`,
  );
  return [
    '| server limit | entities | requests | 429s (goal < 5 %) | inside a window | apply | without a limit | ideal | apply / ideal (goal ≤ 1.10) | rate lowered |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
};

// By file name: `main.js` bundles this module, and its own `import.meta.url` is then `main.js`'s.
const isMain = basename(process.argv[1] ?? '') === 'adaptive-rate.js';
if (isMain) {
  const option = (name: string, fallback: string): string => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
  };
  const entities = Number(option('--entities', '500'));
  const limits = option('--limits', '100,300,1000').split(',').map(Number);
  const started = performance.now();
  const workDir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-adaptive-'));
  try {
    const results = await measureAdaptiveRate(
      workDir,
      `bench-${randomBytes(12).toString('hex')}`,
      entities,
      limits,
      (line) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`),
    );
    process.stdout.write(renderAdaptiveRate(results));
    process.stdout.write(`${JSON.stringify(results)}\n`);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
