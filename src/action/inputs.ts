/**
 * The Action's inputs (action.yml), read through a getter (`@actions/core`'s `getInput` at run
 * time) and checked: a bad value is an error naming the input, before anything runs. The inputs
 * that are settings come from the table of settings (`engine/settings.ts`): each is read by its
 * spec (an input with a `default` is always said, so `cortex-sync.yaml` cannot turn it on); the
 * others (`command`, `api-key`, `github-token`, …) are the Action's own, listed in `ACTION_INPUTS`.
 */
import { printable } from '../core/printable.js';
import type { AnySettingSpec } from '../core/settings.js';
import type { OperatorSettings } from '../engine/config.js';
import { SETTINGS } from '../engine/settings.js';

type ActionCommand = 'auto' | 'validate' | 'plan' | 'apply' | 'drift';
type PlanDriftPolicy = 'fail' | 'apply';

export interface ActionInputs {
  command: ActionCommand;
  /** Manifest root, relative to the workspace (`.` by default). */
  dir: string;
  /** Empty when not given: plan and apply then cannot run (a fork's pull request has no secrets). */
  apiKey: string;
  githubToken: string;
  comment: boolean;
  onPlanDrift: PlanDriftPolicy;
  /** The login whose plan comment counts on merge; empty: the identity of `github-token`. */
  planCommentAuthor: string;
  /**
   * The settings' inputs by their keys (`prune`, `sourceId`, `strict`, …): one given, or one with a
   * default (`prune`, `allow-mass-delete`: always said, `false` included); the others left out.
   */
  said: OperatorSettings;
}

export class InputError extends Error {
  override readonly name = 'InputError';
}

const COMMANDS: readonly ActionCommand[] = ['auto', 'validate', 'plan', 'apply', 'drift'];
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

/** The settings' inputs of `table`, each read by its spec; a bad value is an error naming the input. */
export const readSettingInputs = (
  get: (name: string) => string,
  table: readonly AnySettingSpec[] = SETTINGS,
): OperatorSettings =>
  Object.fromEntries(
    table.flatMap((spec) => {
      if (spec.input === undefined) return [];
      const text = get(spec.input.name).trim();
      if (text === '') return spec.input.default !== undefined ? [[spec.key, spec.input.default]] : [];
      const value = spec.value.parse(text);
      if (value === undefined || !spec.value.schema.safeParse(value).success)
        throw new InputError(`input \`${spec.input.name}\`: expected ${spec.value.expected}, got '${printable(text)}'`);
      return [[spec.key, value]];
    }),
  );

/** A GitHub login (`octocat`, `my-app[bot]`), or '' when not set. */
const login = (name: string, value: string): string => {
  if (value === '' || /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/i.test(value)) return value;
  throw new InputError(`input \`${name}\`: expected a GitHub login such as octocat or my-app[bot], got '${value}'`);
};

/** `get(name)` returns the trimmed input or '' when it is not set. */
export const readInputs = (get: (name: string) => string): ActionInputs => {
  const said = readSettingInputs(get);
  return {
    command: oneOf('command', get('command'), COMMANDS, 'auto'),
    dir: typeof said.dir === 'string' ? said.dir : '.',
    apiKey: get('api-key'),
    githubToken: get('github-token'),
    comment: bool('comment', get('comment'), true),
    onPlanDrift: oneOf('on-plan-drift', get('on-plan-drift'), DRIFT_POLICIES, 'fail'),
    planCommentAuthor: login('plan-comment-author', get('plan-comment-author')),
    said,
  };
};
