/**
 * End-to-end harness: the real CLI (in-process, same code as the binary) against the real
 * emulator over HTTP on 127.0.0.1.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/main.js';
import type { Clock } from '../../src/core/clock.js';
import { startEmulator } from '../../packages/emulator/src/server.js';

export const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples');
export const API_KEY = 'e2e-secret-key-0123456789abcdef';

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const collect = (): { stream: PassThrough; text: () => string } => {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
};

/** Runs `cortex-sync <args>` in-process against `emulator`, from `cwd`. */
export const cli = async (
  args: string[],
  options: { emulator?: Emulator; cwd: string; env?: NodeJS.ProcessEnv; clock?: Clock },
): Promise<CliRun> => {
  const out = collect();
  const err = collect();
  const env: NodeJS.ProcessEnv = {
    NO_COLOR: '1',
    // No terminal on stdin: approved beforehand, as CI runs it.
    CORTEX_SYNC_AUTO_APPROVE: 'true',
    ...(options.emulator ? { CORTEX_BASE_URL: options.emulator.url, CORTEX_API_KEY: API_KEY } : {}),
    ...options.env,
  };
  const code = await runCli(args, {
    stdout: out.stream,
    stderr: err.stream,
    env,
    cwd: options.cwd,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  return { code, stdout: out.text(), stderr: err.text() };
};

export const startTestEmulator = (options: Parameters<typeof startEmulator>[0] = {}): Promise<Emulator> =>
  startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0, ...options });

/** A fresh temporary directory, removed by the returned cleanup. */
export const tempDir = async (prefix = 'cortex-sync-e2e-'): Promise<string> => mkdtemp(join(tmpdir(), prefix));

/** A temporary copy of examples/ (a complete repository of every kind). */
export const copyExamples = async (): Promise<string> => {
  const dir = await tempDir();
  await cp(EXAMPLES, dir, { recursive: true });
  return dir;
};

export const writeFiles = async (root: string, files: Record<string, string>): Promise<void> => {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
};

export const removeDir = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });

export const readText = (path: string): Promise<string> => readFile(path, 'utf8');

/** Requests the emulator logged since index `from`. */
export const requestsSince = (emulator: Emulator, from: number) => emulator.requests.slice(from);
export const writesSince = (emulator: Emulator, from: number) =>
  requestsSince(emulator, from).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));

/** A minimal service descriptor. */
export const serviceYaml = (tag: string, extra = ''): string =>
  `openapi: 3.0.1\ninfo:\n  title: ${tag}\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n${extra}`;
