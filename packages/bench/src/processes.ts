/**
 * Child processes of the benchmark: the emulator (its own process, so its CPU and event loop
 * never mix with what is measured) and the measuring children (`run-plan.js`, `run-apply.js`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { RequestLogEntry } from '../../emulator/src/server.js';

const HERE = import.meta.dirname;

/** The parent's environment without any CORTEX_* setting (the repository's config file decides). */
const cleanEnvironment = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CORTEX_')));

export interface EmulatorProcess {
  url: string;
  /** The emulator's request log (API requests only, control requests are not logged). */
  requests(): Promise<RequestLogEntry[]>;
  /** SIGTERM: the emulator saves `dataFile` (when given) and exits. */
  stop(): Promise<void>;
}

export interface EmulatorProcessOptions {
  apiKey: string;
  /** Requests per minute; 0 = no limit. */
  rateLimit: number;
  burst?: number;
  dataFile?: string;
}

const exited = (child: ChildProcess): Promise<number> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code ?? 1));
  });

/** Starts `emulator-process.js` and waits for its URL. */
export const startEmulatorProcess = async (options: EmulatorProcessOptions): Promise<EmulatorProcess> => {
  const args = [join(HERE, 'emulator-process.js'), '--rate-limit', String(options.rateLimit)];
  if (options.burst !== undefined) args.push('--burst', String(options.burst));
  if (options.dataFile !== undefined) args.push('--data', options.dataFile);
  const child = spawn(process.execPath, args, {
    env: { ...cleanEnvironment(), CORTEX_API_KEY: options.apiKey },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`the emulator exited with code ${code} before it listened`)));
  });
  return {
    url,
    requests: async () => {
      const res = await fetch(`${url}/_emulator/requests`);
      if (!res.ok) throw new Error(`GET /_emulator/requests answered ${res.status}`);
      return ((await res.json()) as { requests: RequestLogEntry[] }).requests;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
};

export interface ChildRun {
  script: 'run-plan.js' | 'run-apply.js';
  args: string[];
  /** Node flags such as `--expose-gc` or `--cpu-prof`. */
  nodeFlags?: string[];
  emulator: EmulatorProcess;
  apiKey: string;
  /** More environment for the child (`CORTEX_SYNC_ORIGIN`, say). */
  env?: NodeJS.ProcessEnv;
}

/** Runs a measuring child and returns the JSON line it printed. */
export const runChild = async <T>(run: ChildRun): Promise<T> => {
  const child = spawn(process.execPath, [...(run.nodeFlags ?? []), join(HERE, run.script), ...run.args], {
    env: { ...cleanEnvironment(), CORTEX_BASE_URL: run.emulator.url, CORTEX_API_KEY: run.apiKey, ...run.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on('data', (c: Buffer) => out.push(c));
  child.stderr?.on('data', (c: Buffer) => err.push(c));
  const code = await exited(child);
  const stdout = Buffer.concat(out).toString('utf8').trim();
  if (code !== 0) {
    throw new Error(
      `${run.script} ${run.args.join(' ')} exited with ${code}: ${Buffer.concat(err).toString('utf8').slice(-2000)}`,
    );
  }
  const last = stdout.split('\n').pop() ?? '';
  return JSON.parse(last) as T;
};
