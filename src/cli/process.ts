/**
 * The binary's process glue: real streams and environment, and the stop signals. The first
 * SIGINT/SIGTERM aborts the run's signal (an apply stops starting changes, finishes those in
 * flight, writes its logs and exits 130 / 143); a second one exits at once.
 */
import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import { signalExitCode } from '../core/outcome.js';
import type { TerminalWriter } from './confirm.js';
import { runCli } from './main.js';

/** The controlling terminal for writing, or undefined when the process has none. */
const openTerminal = (): TerminalWriter | undefined => {
  try {
    const fd = openSync('/dev/tty', 'w');
    return { write: (text) => void writeSync(fd, text), close: () => closeSync(fd) };
  } catch {
    return undefined;
  }
};

/** Whether fd 1 is a pipe or a socket (another program reads it), not a terminal or a file. */
const stdoutIsPipe = (): boolean => {
  try {
    const stat = fstatSync(1);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
};

type StopSignal = 'SIGINT' | 'SIGTERM';

/**
 * A reader that stops reading (`cortex-sync plan | head`) closes the pipe: later writes fail with
 * EPIPE. Output to a closed pipe is dropped, quietly, and the command runs to its end: an apply
 * is never cut short halfway because a pager was closed, and no stack trace follows `--help | head`.
 */
const ignoreClosedPipe = (stream: NodeJS.WriteStream): void => {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    throw error;
  });
};

export const runProcess = async (): Promise<number> => {
  ignoreClosedPipe(process.stdout);
  ignoreClosedPipe(process.stderr);
  const controller = new AbortController();
  const onSignal = (name: StopSignal) => {
    if (controller.signal.aborted) {
      process.stderr.write(`\n${name} again: exiting at once.\n`);
      process.exit(signalExitCode(name));
    }
    process.stderr.write(`\n${name}: stopping (${name} again to exit at once).\n`);
    controller.abort(name);
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  const untilStopped = () =>
    new Promise<void>((resolve) => {
      if (controller.signal.aborted) resolve();
      else controller.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  try {
    return await runCli(process.argv.slice(2), {
      stdin: process.stdin,
      openTerminal,
      stdout: process.stdout,
      stderr: process.stderr,
      stdoutIsPipe: stdoutIsPipe(),
      env: process.env,
      cwd: process.cwd(),
      untilStopped,
      stop: controller.signal,
    });
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
};
