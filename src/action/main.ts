/**
 * The Action's entrypoint (bundled into `dist-action/index.js`): the real ports — `@actions/core`
 * for the runner, `@octokit/rest` at `GITHUB_API_URL` for GitHub, the engine — and the exit code.
 */
import { readFileSync } from 'node:fs';
import { VERSION } from '../version.js';
import { realEngine } from './engine.js';
import { octokitGitHub } from './github.js';
import { runAction } from './run.js';
import { actionsCoreRuntime, logEngineEvents } from './runtime.js';

const readEvent = (path: string | undefined): unknown => {
  if (!path) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (error) {
    throw new Error(`cannot read the event payload ${path}: ${(error as Error).message}`, { cause: error });
  }
};

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
    engine: realEngine(stop.signal, logEngineEvents(runtime)),
    cwd: process.cwd(),
    github: (token, run, proxy) =>
      octokitGitHub({
        token,
        apiUrl: env.GITHUB_API_URL ?? 'https://api.github.com',
        repository: run.repository,
        userAgent: `cortex-sync-action/${VERSION}`,
        ...(proxy ? { proxy } : {}),
      }),
  });
};

process.exitCode = await main();
