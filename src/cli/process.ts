/**
 * The binary's process glue: real streams and environment, and the stop signals. The first
 * SIGINT, SIGTERM or SIGHUP aborts the run's signal: an apply stops starting changes, finishes
 * those in flight, writes its summary and plan log, releases its lease and exits 130 / 143 / 129.
 * A second SIGINT or SIGTERM (the operator insisting) exits at once, leaving the lease to expire;
 * a second SIGHUP does not (a hangup is delivered twice, by the kernel and by the shell, and nobody
 * is there to insist). With the terminal gone, output that cannot be written is dropped.
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

type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/**
 * A reader that stops reading (`cortex-sync plan | head`) closes the pipe: later writes fail with
 * EPIPE; a terminal that hung up fails them with EIO. Output that cannot be written is dropped,
 * quietly, and the command runs to its end: an apply is never cut short halfway because a pager
 * was closed or the terminal went away, and no stack trace follows `--help | head`.
 */
const ignoreClosedPipe = (stream: NodeJS.WriteStream): void => {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'EIO' || error.code === 'ERR_STREAM_DESTROYED') return;
    throw error;
  });
};

/** A second signal after `first`: exit at once, unless both are hangups (see the module comment). */
const insists = (first: unknown, again: StopSignal): boolean => !(first === 'SIGHUP' && again === 'SIGHUP');

export const runProcess = async (): Promise<number> => {
  ignoreClosedPipe(process.stdout);
  ignoreClosedPipe(process.stderr);
  const controller = new AbortController();
  const onSignal = (name: StopSignal) => {
    if (controller.signal.aborted) {
      if (!insists(controller.signal.reason, name)) return;
      process.stderr.write(`\n${name} again: exiting at once.\n`);
      process.exit(signalExitCode(name));
    }
    // A hangup comes twice (the kernel and the shell), so a second one does not exit at once.
    const hint = name === 'SIGHUP' ? 'SIGINT or SIGTERM to exit at once' : `${name} again to exit at once`;
    process.stderr.write(`\n${name}: stopping (${hint}).\n`);
    controller.abort(name);
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  const onHup = () => onSignal('SIGHUP');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  process.on('SIGHUP', onHup);
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
    process.off('SIGHUP', onHup);
  }
};
