/**
 * The apply confirmation, as Terraform asks it: only `yes` approves, and only someone at a
 * terminal can answer. Without a terminal on stdin (CI, cron, ssh without -t, `</dev/null`, a
 * pipe) nothing is asked and nothing is applied unless the operator approved beforehand
 * (`--auto-approve`, or `CORTEX_SYNC_AUTO_APPROVE=true`): `approvalProblem` says so.
 *
 * The question comes after the whole plan. The plan is on stdout, and Node writes to a pipe
 * asynchronously: a large plan may still sit in the process's buffer when the question is written,
 * so stdout and stderr are flushed first. Where it goes:
 * - stdout, when the plan is text and stdout is a pipe (`apply | tee log`, `apply 2>&1 | tee log`):
 *   it travels behind the plan through the same program, so the screen ends on the question, as
 *   Terraform's does;
 * - else stderr when that is a terminal, else straight to the terminal (`/dev/tty`), else stderr.
 */
import { createInterface } from 'node:readline';
import type { TerminalWriter } from '../runtime-io/io.js';

/** Somewhere to show the question on the terminal itself (the runtimes' shared IO defines it). */
export type { TerminalWriter };

interface PromptIo {
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** stdout is a pipe or a socket (another program shows it), not a terminal or a file. */
  stdoutIsPipe?: boolean;
  /** Opens the controlling terminal for writing (`/dev/tty`); undefined when there is none. */
  openTerminal?: () => TerminalWriter | undefined;
}

/** Someone can answer: the input is a terminal. */
export const canAsk = (io: Pick<PromptIo, 'stdin'>): boolean => Boolean(io.stdin?.isTTY);

/** `CORTEX_SYNC_AUTO_APPROVE`: `true` or `false` exactly (as every boolean variable); anything else is an error. */
export const autoApproveFromEnvironment = (env: NodeJS.ProcessEnv): { value?: boolean; error?: string } => {
  const raw = env.CORTEX_SYNC_AUTO_APPROVE?.trim();
  if (raw === undefined || raw === '') return {};
  if (raw === 'true' || raw === 'false') return { value: raw === 'true' };
  return { error: `CORTEX_SYNC_AUTO_APPROVE: expected true or false, got '${raw.slice(0, 20)}'` };
};

/** Why this apply may not go on: nobody approved it and nobody can be asked. */
export const NOT_APPROVED =
  'apply asks before it writes, and stdin is not a terminal, so no one can answer: pass --auto-approve, or set CORTEX_SYNC_AUTO_APPROVE=true (CI), to apply without asking; `plan` shows what would change. Nothing was read or written';

const QUESTION =
  "\nDo you want to perform these actions?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ";

/**
 * Asks (see the module comment) once `flushed` resolves, reads one line from stdin; true only for
 * `yes`. An input that ends counts as no. `planOnStdout`: the plan just printed is text on stdout.
 */
export const askToApply = async (
  io: PromptIo,
  signal: AbortSignal,
  options: { planOnStdout: boolean; flushed: () => Promise<void> },
): Promise<boolean> => {
  const input = io.stdin;
  if (!input) return false;
  await options.flushed();
  const behindPlan = options.planOnStdout && !io.stdout.isTTY && io.stdoutIsPipe === true;
  const terminal = behindPlan || io.stderr.isTTY ? undefined : io.openTerminal?.();
  const say = (text: string) =>
    behindPlan ? io.stdout.write(text) : terminal ? terminal.write(text) : io.stderr.write(text);
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
