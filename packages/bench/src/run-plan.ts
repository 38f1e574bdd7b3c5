/**
 * A benchmark child: measures one thing in a fresh process and prints one JSON line.
 *
 * - `plan`: one `reconcile` in plan mode, the client built as the CLI builds it;
 * - `floor`: `loadManifests` alone on the same files (read + parse + validate: the floor);
 * - `memory`: `--runs` consecutive plans with one client, heap sampled after `global.gc()` (run
 *   node with `--expose-gc`).
 *
 * Usage: `node [--expose-gc] run-plan.js plan|floor|memory --dir DIR [--rpm N] [--runs N]`.
 * The API base URL and key come from CORTEX_BASE_URL and CORTEX_API_KEY.
 */
import { createEngineContext } from '../../../src/engine/context.js';
import { reconcile } from '../../../src/engine/reconcile.js';
import { KIND_HANDLERS } from '../../../src/kinds/registry.js';
import { loadManifests } from '../../../src/source/load.js';
import {
  clientFromEnvironment,
  numberOption,
  operationCounter,
  option,
  processFigures,
  report,
  timed,
} from './child-common.js';

const mode = process.argv[2];
const dir = option('--dir');
if (!dir) throw new Error('--dir is required');
const rpm = numberOption('--rpm');
const flags = { dir, ...(rpm !== undefined ? { requestsPerMinute: rpm } : {}) };

const planOnce = async () => {
  const ops = operationCounter();
  const { config, client } = await clientFromEnvironment(flags, ops.onRequest);
  const run = await timed(() => reconcile({ config, mode: 'plan' }, createEngineContext(client)));
  const result = run.value;
  return {
    wallMs: run.wallMs,
    cpuMs: run.cpuMs,
    status: result.status,
    summary: 'plan' in result ? result.plan.summary : undefined,
    errors: result.diagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => d.message)
      .slice(0, 5),
    requests: client.stats().requestsSent,
    stats: client.stats(),
    byOperation: ops.counts(),
  };
};

const floor = async () => {
  const run = await timed(() => loadManifests(dir, KIND_HANDLERS));
  return {
    wallMs: run.wallMs,
    cpuMs: run.cpuMs,
    objects: run.value.objects.length,
    files: run.value.files.length,
    errors: run.value.diagnostics.filter((d) => d.severity === 'error').length,
  };
};

const memory = async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run node with --expose-gc');
  const runs = numberOption('--runs') ?? 10;
  const ops = operationCounter();
  const { config, client } = await clientFromEnvironment(flags, ops.onRequest);
  const heapMb: number[] = [];
  const wallMs: number[] = [];
  const changes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const run = await timed(() => reconcile({ config, mode: 'plan' }, createEngineContext(client)));
    wallMs.push(run.wallMs);
    const summary = 'plan' in run.value ? run.value.plan.summary : undefined;
    changes.push(summary ? summary.create + summary.update + summary.delete + summary.archive : -1);
    gc();
    gc();
    heapMb.push(process.memoryUsage().heapUsed / 1024 / 1024);
  }
  return { runs, heapMb, wallMs, changes, requests: client.stats().requestsSent };
};

const measure = mode === 'plan' ? planOnce : mode === 'floor' ? floor : mode === 'memory' ? memory : undefined;
if (!measure) throw new Error(`unknown mode ${mode}: plan, floor or memory`);
const value = await measure();
report({ mode, ...value, ...processFigures() });
