/**
 * The apply confirmation, as Terraform asks it: only `yes` approves. It is asked whenever stdin is
 * a terminal (someone is there to answer), even when stdout or stderr go to a pipe
 * (`apply 2>&1 | tee log`): the question goes to stderr when that is a terminal, else straight to
 * the terminal (`/dev/tty`), else to stderr anyway. Without a terminal on stdin (CI, a pipe) there
 * is no one to ask and the apply proceeds; `--auto-approve` skips the question.
 */
import { createInterface } from 'node:readline';
import type { TerminalWriter } from '../runtime-io/io.js';

/** Somewhere to show the question on the terminal itself (the runtimes' shared IO defines it). */
export type { TerminalWriter };

export interface PromptIo {
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Opens the controlling terminal for writing (`/dev/tty`); undefined when there is none. */
  openTerminal?: () => TerminalWriter | undefined;
}

/** Someone can answer: the input is a terminal. */
export const canAsk = (io: PromptIo): boolean => Boolean(io.stdin?.isTTY);

const QUESTION =
  "\nDo you want to perform these actions?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ";

/** Asks (see the module comment), reads one line from stdin; true only for `yes`. An input that ends counts as no. */
export const askToApply = async (io: PromptIo, signal: AbortSignal): Promise<boolean> => {
  const input = io.stdin;
  if (!input) return false;
  const terminal = io.stderr.isTTY ? undefined : io.openTerminal?.();
  const say = (text: string) => (terminal ? terminal.write(text) : io.stderr.write(text));
  say(QUESTION);
  const rl = createInterface({ input, terminal: false });
  try {
    const answer = await new Promise<string | undefined>((resolve) => {
      const onAbort = () => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      rl.once('line', (line) => resolve(line));
      rl.once('close', () => resolve(undefined));
    });
    say('\n');
    return answer?.trim() === 'yes';
  } finally {
    rl.close();
    terminal?.close();
  }
};
