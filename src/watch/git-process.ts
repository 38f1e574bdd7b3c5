/**
 * Runs one git command in a process group of its own, so that stopping it stops everything it
 * started: `git fetch` over HTTPS runs `git remote-https`, over SSH runs `ssh`, and killing only
 * `git` would leave those running (and the watcher's process alive) until the remote answers.
 * On abort or timeout the whole group gets SIGTERM, then SIGKILL after a grace period.
 */
import { spawn } from 'node:child_process';

interface GitRunOptions {
  cwd: string;
  /** The complete environment (nothing is inherited). */
  env: Record<string, string>;
  signal?: AbortSignal;
  /** Default 2 min. */
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL; default 2 s. */
  killGraceMs?: number;
  /** The git binary; default `git` on PATH. */
  binary?: string;
  /** Process groups running now: each is added when it starts and removed when it ends. */
  running?: Set<number>;
}

/** Kills every group in `running` at once (for a process that is exiting and cannot wait). */
export const killGroupsNow = (running: ReadonlySet<number>): void => {
  for (const pgid of running) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
};

/** A git command that failed, was stopped or timed out; the message holds git's last lines of stderr. */
export class GitCommandError extends Error {
  constructor(
    message: string,
    readonly reason: 'failed' | 'aborted' | 'timeout',
  ) {
    super(message);
    this.name = 'GitCommandError';
  }
}

const MAX_OUTPUT = 256 * 1024;

/**
 * What git said went wrong, for an error message: its `fatal:` and `error:` lines when it wrote
 * any (a hint after them, such as the one after "Unable to create '….lock': File exists", would
 * push them out of a tail), else its last few lines; progress lines dropped.
 */
const lastLines = (stderr: string): string => {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^(remote: )?(Counting|Compressing|Receiving|Resolving|Enumerating)/.test(l));
  const said = lines.filter((l) => /^(fatal|error):/.test(l));
  return (said.length > 0 ? said : lines).slice(-3).join(' / ');
};

/** `git args…` → its stdout; rejects with `GitCommandError`. Its process group never outlives the call. */
export const runGit = (args: readonly string[], options: GitRunOptions): Promise<string> =>
  new Promise((resolve, reject) => {
    const name = `git ${args[0] ?? ''}`;
    if (options.signal?.aborted) {
      reject(new GitCommandError(`${name} was not started: stopping`, 'aborted'));
      return;
    }
    const child = spawn(options.binary ?? 'git', [...args], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pgid = child.pid;
    if (pgid !== undefined) options.running?.add(pgid);
    let stdout = '';
    let stderr = '';
    let stopped: 'aborted' | 'timeout' | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-MAX_OUTPUT);
    });
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is gone already.
      }
    };
    const stop = (why: 'aborted' | 'timeout') => {
      if (stopped) return;
      stopped = why;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), options.killGraceMs ?? 2000);
    };
    const onAbort = () => stop('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs ?? 120_000);
    const finish = (error: GitCommandError | undefined) => {
      if (pgid !== undefined) options.running?.delete(pgid);
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
      // Once stopped, whatever git started and is still running goes with it.
      if (stopped) killGroup('SIGKILL');
      if (error) reject(error);
      else resolve(stdout);
    };
    child.once('error', (error: NodeJS.ErrnoException) =>
      finish(new GitCommandError(`${name} could not start: ${error.code ?? error.message}`, 'failed')),
    );
    child.once('close', (code, signal) => {
      if (stopped === 'aborted') return finish(new GitCommandError(`${name} stopped: shutting down`, 'aborted'));
      if (stopped === 'timeout') {
        const seconds = Math.round((options.timeoutMs ?? 120_000) / 1000);
        return finish(new GitCommandError(`${name} did not finish within ${seconds}s and was stopped`, 'timeout'));
      }
      if (code === 0) return finish(undefined);
      const detail = lastLines(stderr);
      const how = code === null ? `was killed (${signal ?? 'signal'})` : `failed (exit ${code})`;
      finish(new GitCommandError(`${name} ${how}${detail ? `: ${detail}` : ''}`, 'failed'));
    });
  });
