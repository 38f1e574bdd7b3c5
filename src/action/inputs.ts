/**
 * The Action's inputs (action.yml), read through a getter (`@actions/core`'s `getInput` at run
 * time) and checked: a bad value is an error naming the input, before anything runs.
 */

export type ActionCommand = 'auto' | 'validate' | 'plan' | 'apply';
export type PlanDriftPolicy = 'fail' | 'apply';

export interface ActionInputs {
  command: ActionCommand;
  /** Manifest root, relative to the workspace (`.` by default). */
  dir: string;
  /** Empty when not given: plan and apply then cannot run (a fork's pull request has no secrets). */
  apiKey: string;
  /** Empty when not given (the environment or the default applies). */
  baseUrl: string;
  /** Always decided here (default false): `prune` in cortex-sync.yaml never turns it on under the Action. */
  prune: boolean;
  /** Empty when not given (cortex-sync.yaml, then `GITHUB_REPOSITORY`). */
  sourceId: string;
  githubToken: string;
  comment: boolean;
  onPlanDrift: PlanDriftPolicy;
  allowMassDelete: boolean;
  forceEntityTypeSchema: boolean;
  /** Apply as a source id bound to another origin (a renamed repository), rebinding it here. */
  allowTakeover: boolean;
  /** The login whose plan comment counts on merge; empty: the identity of `github-token`. */
  planCommentAuthor: string;
}

export class InputError extends Error {
  override readonly name = 'InputError';
}

const COMMANDS: readonly ActionCommand[] = ['auto', 'validate', 'plan', 'apply'];
const DRIFT_POLICIES: readonly PlanDriftPolicy[] = ['fail', 'apply'];

const oneOf = <T extends string>(name: string, value: string, allowed: readonly T[], fallback: T): T => {
  if (value === '') return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new InputError(`input \`${name}\`: expected one of ${allowed.join(', ')}, got '${value}'`);
};

/** YAML 1.2 core-schema booleans, as `@actions/core`'s `getBooleanInput` accepts them. */
const bool = (name: string, value: string, fallback: boolean): boolean => {
  if (value === '') return fallback;
  if (['true', 'True', 'TRUE'].includes(value)) return true;
  if (['false', 'False', 'FALSE'].includes(value)) return false;
  throw new InputError(`input \`${name}\`: expected true or false, got '${value}'`);
};

/** A GitHub login (`octocat`, `my-app[bot]`), or '' when not set. */
const login = (name: string, value: string): string => {
  if (value === '' || /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/i.test(value)) return value;
  throw new InputError(`input \`${name}\`: expected a GitHub login such as octocat or my-app[bot], got '${value}'`);
};

/** `get(name)` returns the trimmed input or '' when it is not set. */
export const readInputs = (get: (name: string) => string): ActionInputs => ({
  command: oneOf('command', get('command'), COMMANDS, 'auto'),
  dir: get('dir') || '.',
  apiKey: get('api-key'),
  baseUrl: get('base-url'),
  prune: bool('prune', get('prune'), false),
  sourceId: get('source-id'),
  githubToken: get('github-token'),
  comment: bool('comment', get('comment'), true),
  onPlanDrift: oneOf('on-plan-drift', get('on-plan-drift'), DRIFT_POLICIES, 'fail'),
  allowMassDelete: bool('allow-mass-delete', get('allow-mass-delete'), false),
  forceEntityTypeSchema: bool('force-entity-type-schema', get('force-entity-type-schema'), false),
  allowTakeover: bool('allow-takeover', get('allow-takeover'), false),
  planCommentAuthor: login('plan-comment-author', get('plan-comment-author')),
});
