/**
 * The flags of `cortex-sync webhook-route --jq EXPR --payload FILE [--dir D]`, defined when the
 * command is named (`src/cli/main.ts`); its action imports `run-command.ts`: offline, which entity
 * of the repository an inbound custom webhook would give a payload to, and why.
 */
import type { Command } from 'commander';
import type { CliIo } from '../runtime-io/io.js';

export interface WebhookRouteOptions {
  jq: string;
  payload: string;
  dir?: string;
}

/** Adds the flags of `webhook-route` to its command; `done` receives the exit code. */
export const defineWebhookRouteCommand = (command: Command, io: CliIo, done: (code: number) => void): void => {
  command
    .requiredOption('--jq <expr>', "the integration's Entity tag JQ")
    .requiredOption('--payload <file>', 'a JSON file holding the payload')
    .option('--dir <dir>', 'manifest root (default: the current directory)')
    .action(async (o: WebhookRouteOptions) => {
      const { runWebhookRoute } = await import('./run-command.js');
      done(await runWebhookRoute(o, io));
    });
};
