/**
 * The Action's entrypoint (bundled into `dist-action/index.js`): the real ports — `@actions/core`
 * for the runner, `@octokit/rest` at `GITHUB_API_URL` for GitHub, the engine — and the exit code.
 */
import { readFileSync } from 'node:fs';
import type { EventSink } from '../engine/context.js';
import { leaseEventLine } from '../engine/lease-events.js';
import { VERSION } from '../version.js';
import { realEngine } from './engine.js';
import { octokitGitHub } from './github.js';
import { runAction } from './run.js';
import { type ActionRuntime, actionsCoreRuntime } from './runtime.js';

const readEvent = (path: string | undefined): unknown => {
  if (!path) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (error) {
    throw new Error(`cannot read the event payload ${path}: ${(error as Error).message}`, { cause: error });
  }
};

/** Engine progress worth a log line: failures, rate-limit pauses, and who holds the apply lease. */
const logEvents = (runtime: ActionRuntime): EventSink => ({
  emit: (event) => {
    if (event.type === 'operation.done' && event.outcome === 'failed')
      runtime.info(`failed: ${event.action} ${event.kind}/${event.id}${event.error ? `: ${event.error}` : ''}`);
    else if (event.type === 'ratelimit.paused') runtime.info(`rate limited: pausing ${Math.ceil(event.ms / 1000)} s`);
    else {
      const lease = leaseEventLine(event);
      if (lease !== undefined) runtime.info(lease);
    }
  },
});

const main = async (): Promise<number> => {
  const env = process.env;
  const runtime = actionsCoreRuntime();
  // The runner cancels a job with SIGINT, then SIGTERM: stop starting new writes, finish the log.
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort(new Error(signal)));
  let event: unknown;
  try {
    event = readEvent(env.GITHUB_EVENT_PATH);
  } catch (error) {
    runtime.annotate({ severity: 'error', title: 'cortex-sync', message: (error as Error).message });
    return 1;
  }
  return runAction({
    runtime,
    env,
    event,
    engine: realEngine(stop.signal, logEvents(runtime)),
    cwd: process.cwd(),
    github: (token, run) =>
      octokitGitHub({
        token,
        apiUrl: env.GITHUB_API_URL ?? 'https://api.github.com',
        repository: run.repository,
        userAgent: `cortex-sync-action/${VERSION}`,
      }),
  });
};

process.exitCode = await main();
