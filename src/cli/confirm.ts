/**
 * The apply confirmation on a terminal, as Terraform asks it: only `yes` approves. Without a
 * terminal (CI, a pipe) there is no one to ask and the apply proceeds; `--auto-approve` skips it.
 */
import { createInterface } from 'node:readline';

export interface PromptIo {
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Someone can answer: both the input and the output the question goes to are terminals. */
export const canAsk = (io: PromptIo): boolean => Boolean(io.stdin?.isTTY) && Boolean(io.stderr.isTTY);

/** Asks on stderr, reads one line from stdin; true only for `yes`. An input that ends counts as no. */
export const askToApply = async (io: PromptIo, signal: AbortSignal): Promise<boolean> => {
  const input = io.stdin;
  if (!input) return false;
  io.stderr.write(
    "\nDo you want to perform these actions?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ",
  );
  const rl = createInterface({ input, terminal: false });
  try {
    const answer = await new Promise<string | undefined>((resolve) => {
      const onAbort = () => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      rl.once('line', (line) => resolve(line));
      rl.once('close', () => resolve(undefined));
    });
    io.stderr.write('\n');
    return answer?.trim() === 'yes';
  } finally {
    rl.close();
  }
};
