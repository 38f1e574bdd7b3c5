/**
 * The binary as it ships (`bundleCli`), run as a child process: stdin from `/dev/null`, from a
 * pipe with `input` written into it, or closed; stdout and stderr captured.
 */
import { spawn } from 'node:child_process';
import { API_KEY } from './run.js';

export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SpawnOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** The emulator's URL: the key and base URL are set for it. */
  emulatorUrl?: string;
  /** stdin: `/dev/null` (the default), a pipe with `pipe` written into it then closed, or no fd 0 at all. */
  stdin?: 'dev-null' | 'closed' | { pipe: string };
}

export const runBin = (entry: string, args: readonly string[], options: SpawnOptions): Promise<ProcessRun> =>
  new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NO_COLOR: '1',
      ...(options.emulatorUrl ? { CORTEX_BASE_URL: options.emulatorUrl, CORTEX_API_KEY: API_KEY } : {}),
      ...options.env,
    };
    const input = options.stdin ?? 'dev-null';
    const stdin = typeof input === 'object' ? 'pipe' : 'ignore';
    // `closed`: the shell closes fd 0 (`<&-`) before node starts.
    const [command, argv] =
      input === 'closed'
        ? ['sh', ['-c', 'exec "$0" "$@" <&-', process.execPath, entry, ...args]]
        : [process.execPath, [entry, ...args]];
    const child = spawn(command, argv, { cwd: options.cwd, env, stdio: [stdin, 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    if (typeof input === 'object') child.stdin?.end(input.pipe);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
