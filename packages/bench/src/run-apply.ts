/**
 * A benchmark child: one `reconcile` in apply mode, the client built as the CLI builds it
 * (requests per minute and concurrency from `--rpm` / `--concurrency`), printing one JSON line
 * with the client's counters and the outcome of every change.
 *
 * Usage: `node run-apply.js --dir DIR [--rpm N] [--concurrency N]`; CORTEX_BASE_URL and
 * CORTEX_API_KEY from the environment.
 */
import { createEngineContext } from '../../../src/engine/context.js';
import { reconcile } from '../../../src/engine/reconcile.js';
import {
  clientFromEnvironment,
  numberOption,
  operationCounter,
  option,
  processFigures,
  report,
  timed,
} from './child-common.js';

const dir = option('--dir');
if (!dir) throw new Error('--dir is required');
const rpm = numberOption('--rpm');
const concurrency = numberOption('--concurrency');
const ops = operationCounter();
const { config, client } = await clientFromEnvironment(
  {
    dir,
    ...(rpm !== undefined ? { requestsPerMinute: rpm } : {}),
    ...(concurrency !== undefined ? { concurrency } : {}),
  },
  ops.onRequest,
);
const run = await timed(() => reconcile({ config, mode: 'apply' }, createEngineContext(client)));
const result = run.value;
const outcomes = { ok: 0, failed: 0, skipped: 0 };
const failures: string[] = [];
if (result.status === 'applied') {
  for (const r of result.report.results) {
    outcomes[r.outcome]++;
    if (r.outcome === 'failed' && failures.length < 5)
      failures.push(`${r.change.kind}/${r.change.id}: ${r.error ?? ''}`);
  }
}
report({
  mode: 'apply',
  wallMs: run.wallMs,
  cpuMs: run.cpuMs,
  status: result.status,
  summary: 'plan' in result ? result.plan.summary : undefined,
  errors: result.diagnostics
    .filter((d) => d.severity === 'error')
    .map((d) => d.message)
    .slice(0, 5),
  writeRequests: result.status === 'applied' ? result.report.writeRequests : 0,
  outcomes,
  failures,
  stats: client.stats(),
  byOperation: ops.counts(),
  ...processFigures(),
});
