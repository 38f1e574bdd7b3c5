/**
 * One invocation of the CLI as its commands see it: the process IO behind the key redaction,
 * colour, the stop signal, the clock, and where the exit code and the API's host go. Built by
 * `main.ts` before anything is parsed, so every byte printed (help and errors included) passes the
 * redaction. Light on purpose: it is on the path of `--help`.
 */
import { keysToRedact } from '../engine/api-key.js';
import { type Clock, systemClock } from '../engine/context.js';
import { type CliIo, useColor } from '../runtime-io/io.js';
import { createOutputRedaction, type OutputRedaction } from './safe-output.js';

export interface CliSession {
  /** The process IO with stdout and stderr wrapped by `redaction`. */
  io: CliIo;
  redaction: OutputRedaction;
  /** Never aborted when the caller cannot stop the run. */
  stop: AbortSignal;
  /** The run's clock (the system clock unless the caller gives one). */
  clock: Clock;
  colorOut: boolean;
  colorErr: boolean;
  /** The command's exit code. */
  exit: (code: number) => void;
  /** The API's host, named when a request gets no answer (set when a command opens its client). */
  apiHost: string | undefined;
  /** Resolves once everything written so far to stdout and stderr has left this process (a pipe is written asynchronously). */
  flushed: () => Promise<void>;
}

/** Resolves when `stream` has written everything before this call (its callback runs in order). */
const drained = (stream: NodeJS.WritableStream): Promise<void> =>
  new Promise((resolve) => {
    stream.write('', () => resolve());
  });

export const createSession = (processIo: CliIo, exit: (code: number) => void): CliSession => {
  const redaction = createOutputRedaction(keysToRedact(processIo.env, processIo.cwd));
  const io: CliIo = {
    ...processIo,
    stdout: redaction.wrap(processIo.stdout),
    stderr: redaction.wrap(processIo.stderr),
  };
  return {
    io,
    redaction,
    stop: io.stop ?? new AbortController().signal,
    clock: io.clock ?? systemClock,
    colorOut: useColor(io.stdout, io.env),
    colorErr: useColor(io.stderr, io.env),
    exit,
    apiHost: undefined,
    flushed: async () => {
      await Promise.all([drained(processIo.stdout), drained(processIo.stderr)]);
    },
  };
};
