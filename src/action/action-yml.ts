/**
 * `action.yml`, generated: the Action's own inputs and outputs (below) and every setting of the
 * table with an input (`engine/settings.ts`). `npm run action-yml` writes it; a test fails when the
 * committed file differs (as `schemas/` is checked).
 */
import { stringify } from 'yaml';
import type { AnySettingSpec } from '../core/settings.js';
import { SETTINGS } from '../engine/settings.js';

interface Input {
  description: string;
  required: false;
  default: string;
}

const input = (description: string, byDefault: string): Input => ({ description, required: false, default: byDefault });

/** The inputs that are not settings, in the order `action.yml` lists them (`command` first). */
const OWN_FIRST: Readonly<Record<string, Input>> = {
  command: input(
    'auto (default): plan on pull_request, apply on a push to the default branch (plan on other pushes and events); or validate, plan, apply; or drift (a scheduled check: what changed outside git, handled as `on-drift` says).',
    'auto',
  ),
};

const OWN: Readonly<Record<string, Input>> = {
  'api-key': input(
    "The Cortex API key (a secret). Without it a pull request is only validated (a fork's pull request never gets secrets); plan and apply need it.",
    '',
  ),
  'github-token': input(
    "Token for the plan comment and for finding the merged pull request (needs pull-requests write). Its own account (github-actions[bot] for the default token, <app>[bot] for a GitHub App's, the user for a personal token) writes the plan comment, and on merge only that account's comment is the reviewed plan.",
    '${{ github.token }}',
  ),
  comment: input(
    'Comment the plan on the pull request (one comment per source id and directory, updated in place) and the apply result on merge.',
    'true',
  ),
  'on-plan-drift': input(
    'On merge, when the plan differs from the one reviewed on the pull request (or none was reviewed): fail (default: apply nothing, exit 1 and say what differs on the pull request) or apply (apply anyway and say so loudly).',
    'fail',
  ),
  'plan-comment-author': input(
    "The login whose plan comment is the reviewed plan on merge, when the merge runs with another token than the pull request's plan (e.g. my-app[bot] when plans are commented with a GitHub App's token and merges run with GITHUB_TOKEN). Default: the account of github-token. It is resolved to its account id at each run and comments are matched by that id; an app's bot is named with its [bot] suffix (the bare name is refused). A plan run fails when this is not its own token's account.",
    '',
  ),
};

const OUTPUTS = {
  changes: { description: "'true' when the plan has (or the apply made) changes, else 'false'." },
  create: { description: 'Objects to create (plan) or created (apply).' },
  update: { description: 'Objects to update (plan) or updated (apply).' },
  delete: { description: 'Objects to delete (plan) or deleted (apply).' },
  archive: { description: 'Entities to archive (plan) or archived (apply).' },
  'plan-json': {
    description:
      'Path of the plan as JSON (the format of `cortex-sync plan --output json`); empty when no plan was made.',
  },
  'plan-log': {
    description:
      "Path of the apply's plan log (JSON Lines, one line per API operation, the lease's included); empty when the apply wrote nothing (no file is left then).",
  },
  'exit-code': {
    description: '0 success, 1 any error (invalid manifests, a refused or drifted plan, a failed apply).',
  },
};

/** The inputs of the settings of `table` that have one. */
const settingInputs = (table: readonly AnySettingSpec[]): Record<string, Input> =>
  Object.fromEntries(
    table.flatMap((spec) =>
      spec.input === undefined
        ? []
        : [
            [
              spec.input.name,
              input(
                spec.input.description ?? `${spec.help} (as ${spec.flag ?? spec.env ?? spec.key}).`,
                spec.input.default === undefined ? '' : String(spec.input.default as string | number | boolean),
              ),
            ],
          ],
    ),
  );

/** The text of `action.yml` for `table`. */
export const actionYml = (table: readonly AnySettingSpec[] = SETTINGS): string =>
  `# Generated from the table of settings (src/engine/settings.ts) by \`npm run action-yml\`: do not edit.\n${stringify(
    {
      name: 'cortex-sync',
      description:
        'Plan Cortex catalog changes on every pull request (one comment, updated in place) and apply the reviewed plan on merge.',
      author: 'cortex-sync',
      branding: { icon: 'refresh-cw', color: 'purple' },
      inputs: { ...OWN_FIRST, ...settingInputs(table), ...OWN },
      outputs: OUTPUTS,
      runs: { using: 'node24', main: 'dist-action/index.js' },
    },
    { lineWidth: 100, defaultStringType: 'PLAIN', defaultKeyType: 'PLAIN' },
  )}`;
