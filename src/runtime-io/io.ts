import { realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute, join, normalize } from 'node:path';
import type { ApiError } from '../core/errors.js';
import type { Diagnostic } from '../core/model.js';
import type { Clock } from '../core/clock.js';
import { DEFAULT_PARSE_LIMITS } from '../source/parse-limits.js';
import { readRegularFile } from '../source/regular-file.js';

/**
 * What every runtime started from the command line shares about its process, and nothing else:
 * the streams, environment and stop signal (injected, so tests run them in-process), colour,
 * line output, the manifest root's checks and the hint for an unreachable API. The CLI, `watch`,
 * `export` and `webhook-route` import it; none imports another runtime's code.
 */

/** The controlling terminal, opened for writing a question (`/dev/tty`). */
export interface TerminalWriter {
  write(text: string): void;
  close(): void;
}

/** What the CLI needs from its process, injected so tests run it in-process. */
export interface CliIo {
  /** Where a confirmation is read from (asked whenever it is a terminal). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** The controlling terminal, for the question when stderr is not a terminal (`/dev/tty`). */
  openTerminal?: () => TerminalWriter | undefined;
  /** The run's clock (default: the system clock); tests pass a fake one. */
  clock?: Clock;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** stdout is a pipe or a socket (`apply | tee log`): the apply's question follows the plan there. */
  stdoutIsPipe?: boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM/SIGHUP); used by long-running commands. */
  untilStopped?: () => Promise<void>;
  /**
   * Aborted when the process is asked to stop; its reason is the signal's name (`'SIGINT'`,
   * `'SIGTERM'`, `'SIGHUP'`). A running apply stops starting changes, finishes those in flight,
   * writes the plan log and the ownership record, releases its lease, reports what was and was not
   * done, and exits 130 / 143 / 129.
   */
  stop?: AbortSignal;
}

/** The signal a stop request names (SIGINT when it names none). */
export const stoppedBy = (stop: AbortSignal | undefined): 'SIGHUP' | 'SIGINT' | 'SIGTERM' =>
  stop?.reason === 'SIGTERM' ? 'SIGTERM' : stop?.reason === 'SIGHUP' ? 'SIGHUP' : 'SIGINT';

/** Colour only on a TTY, and never when NO_COLOR is set (https://no-color.org). */
export const useColor = (stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean =>
  Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';

export const writeLine = (stream: NodeJS.WritableStream, text = ''): void => {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
};

/** A manifest root that does not exist or is a file: said as such, before anything else goes wrong. */
export const manifestRootProblems = async (dir: string, named: string): Promise<Diagnostic[]> => {
  const found = await stat(dir).catch(() => undefined);
  const problem = !found
    ? `${named} ${dir} does not exist`
    : !found.isDirectory()
      ? `${named} ${dir} is a file, not a folder: give the folder that holds the manifests`
      : undefined;
  return problem ? [{ severity: 'error', code: 'config', message: problem }] : [];
};

/** `host:port` of a base URL (the URL itself when it does not parse). */
export const hostOf = (baseUrl: string): string => {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
};

/** The system's error code somewhere in a cause chain (`ECONNREFUSED`, `ENOTFOUND`, …). */
const causeCode = (error: unknown): string | undefined => {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
};

/** What a request without an answer was waiting for: the host, the operation, and why if the system said. */
export const unreachableHint = (error: ApiError, host: string): string => {
  const code = causeCode(error);
  const waited =
    error.code === 'TIMEOUT'
      ? `${host} did not answer ${error.method} ${error.path} in time`
      : `no answer from ${host} to ${error.method} ${error.path}${code ? ` (${code})` : ''}`;
  return `${waited}: check the base URL (--base-url / CORTEX_BASE_URL) and that the API is reachable from here`;
};

/**
 * A manifest's text by its path relative to the root (for showing a line of it), read under the
 * loader's rules: a regular file inside the root, never a symlink out of it, a FIFO or a device.
 */
export const manifestText = (root: string) => {
  let realRoot: string | undefined;
  return (file: string): string | undefined => {
    if (isAbsolute(file) || normalize(file).startsWith('..')) return undefined;
    try {
      realRoot ??= realpathSync.native(root);
    } catch {
      return undefined;
    }
    const read = readRegularFile(join(realRoot, file), {
      maxBytes: DEFAULT_PARSE_LIMITS.maxFileBytes,
      inside: realRoot,
    });
    return read.ok ? read.bytes.toString('utf8') : undefined;
  };
};
