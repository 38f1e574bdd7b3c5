/** What the CLI needs from its process, injected so tests run it in-process. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); used by long-running commands. */
  untilStopped?: () => Promise<void>;
}

/** Colour only on a TTY, and never when NO_COLOR is set (https://no-color.org). */
export const useColor = (stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean =>
  Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';

export const writeLine = (stream: NodeJS.WritableStream, text = ''): void => {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
};
