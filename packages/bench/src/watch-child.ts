/**
 * The watch benchmark's measuring process: runs the watcher (`startWatcher`, local-directory
 * mode, the real client) against the emulator process and prints one JSON line.
 *
 * `--scenario change`: after the first sync, changes one file `--changes` times and times each
 * change from the write until its run is recorded (debounce, load, read, plan, apply), with the
 * requests it sent and the RSS right after; memory in detail after the first sync and every
 * `--memory-every` changes (heap snapshots at both ends with `--snapshot-dir DIR`); then measures
 * the process's CPU while idle for `--idle-seconds`.
 * `--scenario cycles`: `--cycles` reconcile runs back to back (heal trigger), heap after a full GC
 * sampled along the way (needs `--expose-gc`).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { resolveConfig } from '../../../src/engine/config.js';
import type { EngineEvent } from '../../../src/engine/context.js';
import { createDirSource } from '../../../src/watch/dir-source.js';
import type { RunRecord } from '../../../src/watch/history.js';
import { createLogger } from '../../../src/watch/log.js';
import { DEFAULT_LEASE_LINGER_MS, startWatcher } from '../../../src/watch/watcher.js';
import { numberOption, option, report } from './child-common.js';
import { retitleService } from './generate.js';

const dir = resolve(option('--dir') ?? '.');
const scenario = option('--scenario') ?? 'change';
const apiKey = process.env.CORTEX_API_KEY ?? '';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gc = (globalThis as { gc?: () => void }).gc;

/** Per run: when the engine started, its first API request began, and it finished; its requests by method and operation. */
const freshPhase = (started: number) => ({
  started,
  firstRequest: Infinity,
  lastResponse: 0,
  requests: 0,
  gets: 0,
  operations: {} as Record<string, number>,
  stages: {} as Record<string, number>,
});
let phase = freshPhase(0);
const observe = {
  emit: (event: EngineEvent) => {
    const now = performance.now();
    if (event.type === 'reconcile.started') phase = freshPhase(now);
    if (event.type === 'stage.done') {
      const name = `${event.stage}${event.underLease ? '*' : ''}`;
      phase.stages[name] = Math.round((phase.stages[name] ?? 0) + event.durationMs);
    }
    if (event.type === 'request') {
      phase.firstRequest = Math.min(phase.firstRequest, now - event.durationMs);
      phase.lastResponse = now;
      phase.requests += 1;
      if (event.method === 'GET') phase.gets += 1;
      const operation = `${event.method} ${event.operation.replace(/`[^`]*`/g, '`…`').replace(/ [a-z0-9-]+-\d{5}\b/g, ' …')}`;
      phase.operations[operation] = (phase.operations[operation] ?? 0) + 1;
    }
  },
};

const watcher = await startWatcher({
  source: createDirSource({ dir }),
  resolveConfig: (root) => resolveConfig({ dir: root }, process.env, root),
  apiKey,
  host: '127.0.0.1',
  port: 0,
  healIntervalMs: 0,
  planLogFile: join(await mkdtemp(join(tmpdir(), 'cortex-sync-watch-bench-')), 'plan-log.jsonl'),
  logger: createLogger({ write: () => {}, secrets: [apiKey] }),
  events: observe,
});

const nextRecord = async (after: number): Promise<RunRecord> => {
  for (;;) {
    const runs = watcher.history.runs();
    const last = runs[0];
    if (last && Number(last.runId.slice(4)) > after) return last;
    await sleep(2);
  }
};

const first = await nextRecord(0);
if (first.result !== 'applied') throw new Error(`the first sync did not apply: ${first.errors.join('; ')}`);
let seen = 1;

/**
 * Memory as the process has it, MB: RSS as sampled (no collection forced: what an operator sees),
 * then, at the first and last sample only, the heap after a full collection (needs `--expose-gc`);
 * collections forced between them would hide growth from RSS.
 */
const memory = (collect: boolean) => {
  const mb = (n: number) => Number((n / 2 ** 20).toFixed(1));
  const rssMb = mb(process.memoryUsage.rss());
  if (collect) {
    gc?.();
    gc?.();
  }
  const used = process.memoryUsage();
  return {
    rssMb,
    heapUsedMb: mb(used.heapUsed),
    heapTotalMb: mb(used.heapTotal),
    externalMb: mb(used.external),
    arrayBuffersMb: mb(used.arrayBuffers),
    rssAfterGcMb: mb(used.rss),
    collected: collect && gc !== undefined,
  };
};
const snapshotDir = option('--snapshot-dir');
const snapshot = (name: string): void => {
  if (snapshotDir) writeHeapSnapshot(join(snapshotDir, `${name}.heapsnapshot`));
};

if (scenario === 'change') {
  const changes = numberOption('--changes') ?? 20;
  const samples: {
    wallMs: number;
    runMs: number;
    loadMs: number;
    apiSpanMs: number;
    updates: number;
    requests: number;
    gets: number;
    operations: Record<string, number>;
    stages: Record<string, number>;
    readPath?: string;
    /** RSS right after the change was stored. */
    rssMb: number;
  }[] = [];
  const memoryAfter: ({ changes: number } & ReturnType<typeof memory>)[] = [{ changes: 0, ...memory(true) }];
  snapshot('after-first-sync');
  const sampleEvery = numberOption('--memory-every') ?? 10;
  /** Changes service `n`'s title and times it until its run is recorded. */
  const change = async (n: number): Promise<(typeof samples)[number]> => {
    const started = performance.now();
    await retitleService(dir, n, `Service ${n} (edit ${Date.now()})`);
    const record = await nextRecord(seen);
    const wallMs = performance.now() - started;
    seen = Number(record.runId.slice(4));
    const apiSpanMs = phase.lastResponse > 0 ? phase.lastResponse - phase.firstRequest : 0;
    const read = record.read;
    return {
      wallMs,
      runMs: record.durationMs,
      loadMs: Number.isFinite(phase.firstRequest) ? phase.firstRequest - phase.started : 0,
      apiSpanMs,
      updates: record.summary?.update ?? 0,
      requests: phase.requests,
      gets: phase.gets,
      operations: phase.operations,
      stages: phase.stages,
      ...(read ? { readPath: `${read.path}${read.reason ? ` (${read.reason})` : ''}` } : {}),
      rssMb: Number((process.memoryUsage.rss() / 2 ** 20).toFixed(1)),
    };
  };
  for (let n = 1; n <= changes; n += 1) {
    samples.push(await change(n));
    if (n % sampleEvery === 0 || n === changes) memoryAfter.push({ changes: n, ...memory(n === changes) });
    await sleep(100);
  }
  snapshot(`after-${changes}-changes`);
  await sleep(1000);
  const cpu = process.cpuUsage();
  const idleStarted = performance.now();
  const idleMs = (numberOption('--idle-seconds') ?? 10) * 1000;
  await sleep(idleMs);
  const used = process.cpuUsage(cpu);
  const idleWallMs = performance.now() - idleStarted;
  const runsDuringIdle = Number(watcher.history.runs()[0]?.runId.slice(4)) - seen;
  // Once the lease kept after the last apply has been let go: a change pays for taking it again.
  await sleep(Math.max(0, DEFAULT_LEASE_LINGER_MS - idleMs) + 2000);
  const afterLinger = await change(changes + 1);
  await watcher.stop(5000);
  report({
    firstSyncMs: first.durationMs,
    firstSummary: first.summary,
    samples,
    memoryAfter,
    afterLinger,
    idleCpuShare: (used.user + used.system) / 1000 / idleWallMs,
    idleWallMs,
    runsDuringIdle,
  });
} else {
  const cycles = numberOption('--cycles') ?? 500;
  if (!gc) throw new Error('run with --expose-gc');
  const heap = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed / 2 ** 20;
  };
  const samples: { cycle: number; heapMb: number }[] = [];
  let failed = 0;
  for (let cycle = 1; cycle <= cycles; cycle += 1) {
    watcher.runner.trigger('heal');
    await watcher.runner.idle();
    if (watcher.history.last()?.result !== 'applied') failed += 1;
    if (cycle === 10 || cycle % 50 === 0) samples.push({ cycle, heapMb: heap() });
  }
  await watcher.stop(5000);
  report({ cycles, failed, samples });
}
