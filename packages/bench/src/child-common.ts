/**
 * What the benchmark's child processes share: the client built as the CLI builds it (plus an
 * observer), resource figures, and the one JSON line a child prints for the parent.
 */
import { resolve } from 'node:path';
import { createApiClient } from '../../../src/api/client.js';
import type { RequestEvent } from '../../../src/api/types.js';
import { type ConfigFlags, resolveConfig, type SyncConfig } from '../../../src/engine/config.js';

/** Resource use of the whole child process so far. */
export interface ProcessFigures {
  /** Since the process started (module loading included). */
  processWallMs: number;
  /** User + system CPU of the whole process. */
  processCpuMs: number;
  /** Peak resident set size. */
  maxRssMb: number;
}

export const processFigures = (): ProcessFigures => {
  const usage = process.resourceUsage();
  return {
    processWallMs: performance.now(),
    processCpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
    maxRssMb: usage.maxRSS / 1024,
  };
};

/** Wall and CPU time of one operation in this process. */
export const timed = async <T>(fn: () => Promise<T>): Promise<{ value: T; wallMs: number; cpuMs: number }> => {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await fn();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { value, wallMs, cpuMs: (used.user + used.system) / 1000 };
};

/** Requests per operation, with tags and ids folded (`list dependencies of \`…\``). */
export const operationCounter = () => {
  const counts = new Map<string, number>();
  return {
    onRequest: (event: RequestEvent): void => {
      const operation = event.operation
        .replace(/`[^`]*`/g, '`…`')
        .replace(/"[^"]*"/g, '"…"')
        .replace(
          /^((?:read|upsert|archive|unarchive|delete) (?:entity(?: descriptor)?|Scaffolder template)) .+$/,
          '$1 …',
        );
      const name = `${event.method} ${operation}`;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    },
    counts: (): Record<string, number> => Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b))),
  };
};

/** Config and client exactly as `cortex-sync plan|apply` builds them, with an observer. */
export const clientFromEnvironment = async (
  flags: ConfigFlags,
  onRequest: (event: RequestEvent) => void,
): Promise<{ config: SyncConfig; client: ReturnType<typeof createApiClient> }> => {
  // resolveConfig joins `dir` to the working directory: give it the absolute root as the latter.
  const { config } = await resolveConfig({ ...flags, dir: '.' }, process.env, resolve(flags.dir ?? '.'));
  if (!config.apiKey) throw new Error('CORTEX_API_KEY must be set');
  const client = createApiClient({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    requestsPerMinute: config.requestsPerMinute,
    concurrency: config.concurrency,
    onRequest,
  });
  return { config, client };
};

export const option = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};

export const numberOption = (name: string): number | undefined => {
  const value = option(name);
  return value === undefined ? undefined : Number(value);
};

/** The child's answer: one JSON line on stdout, then exit (keep-alive sockets would hold the process). */
export const report = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`, () => process.exit(0));
};
