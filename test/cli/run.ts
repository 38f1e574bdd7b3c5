/**
 * Runs the real `cortex-sync` entrypoint in-process (same code as the binary) with captured
 * streams, an explicit environment (nothing leaks in from the test process) and an optional TTY.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/main.js';
import type { Clock } from '../../src/engine/context.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';

export const API_KEY = 'cli-test-secret-key-0123456789abcdef';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A stream that keeps what is written to it; `isTTY` as a terminal would set it. */
export const capture = (isTTY = false): { stream: PassThrough & { isTTY?: boolean }; text: () => string } => {
  const stream: PassThrough & { isTTY?: boolean } = new PassThrough();
  if (isTTY) stream.isTTY = true;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
};

export interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Point the CLI at this emulator with its key. */
  emulator?: RunningEmulator;
  /** All three streams are terminals, or the ones named. */
  tty?: boolean | { stdin?: boolean; stdout?: boolean; stderr?: boolean };
  /** What the user types (stdin is a terminal when `tty` says so). */
  input?: string;
  /** The controlling terminal (`/dev/tty`): what is written to it is kept in `terminal.text`. */
  terminal?: { text: string; opened: number };
  clock?: Clock;
  untilStopped?: (stdout: () => string) => Promise<void>;
}

export const cli = async (args: string[], options: RunOptions): Promise<CliRun> => {
  const tty =
    typeof options.tty === 'object' ? options.tty : { stdin: options.tty, stdout: options.tty, stderr: options.tty };
  const out = capture(tty.stdout);
  const err = capture(tty.stderr);
  const env: NodeJS.ProcessEnv = {
    // As CI runs it: approved beforehand, unless the test gives stdin a terminal to ask on.
    ...(tty.stdin ? {} : { CORTEX_SYNC_AUTO_APPROVE: 'true' }),
    ...(options.emulator ? { CORTEX_BASE_URL: options.emulator.url, CORTEX_API_KEY: API_KEY } : {}),
    ...options.env,
  };
  const untilStopped = options.untilStopped;
  const stdin: PassThrough & { isTTY?: boolean } = new PassThrough();
  if (tty.stdin) stdin.isTTY = true;
  const terminal = options.terminal;
  if (options.input !== undefined) stdin.end(options.input);
  const code = await runCli(args, {
    stdin,
    ...(terminal
      ? {
          openTerminal: () => {
            terminal.opened += 1;
            return { write: (text: string) => void (terminal.text += text), close: () => {} };
          },
        }
      : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    stdout: out.stream,
    stderr: err.stream,
    env,
    cwd: options.cwd,
    ...(untilStopped ? { untilStopped: () => untilStopped(out.text) } : {}),
  });
  return { code, stdout: out.text(), stderr: err.text() };
};

export const startTestEmulator = (): Promise<RunningEmulator> =>
  startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });

export const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'cortex-sync-cli-'));
export const removeDir = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });

export const writeFiles = async (root: string, files: Record<string, string>): Promise<void> => {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
};

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
};

/** A minimal service descriptor; `extra` is appended under `info`. */
export const serviceYaml = (tag: string, extra = ''): string =>
  `openapi: 3.0.1\ninfo:\n  title: ${tag}\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n${extra}`;

// eslint-disable-next-line no-control-regex
export const ANSI = /\u001b\[/;
