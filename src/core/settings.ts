/**
 * The settings table's contract (pure): one `SettingSpec` per setting says every way it is given
 * (flag, Action input, environment variable, `cortex-sync.yaml`), what the file may do with it,
 * its value's schema, its default and its help. The engine lists its own settings
 * (`engine/settings.ts`) and each kind lists its own beside its folder (`settings` of a
 * configurable kind); everything else — the file's schema, `--help`, the commands' flags, the
 * Action's inputs and `action.yml`, the README's table, the plan's delete-scope header — is derived
 * from the table.
 */
import { z } from 'zod';

/** What `cortex-sync.yaml` (a pull request controls it) may do with a setting. */
export type FileRule =
  /** Set it; the operator's flag or variable still wins. */
  | 'allowed'
  /** Only lower it below the default; a higher value is a warning and the default applies. */
  | 'lower-only'
  /** Add to what the operator says (a list), never remove from it. */
  | 'add-only'
  /** Not at all: naming it in the file is an error saying why (`neverReason`). */
  | 'never';

/** The commands (and the watcher) whose flags include a setting. */
export type SettingCommand = 'validate' | 'plan' | 'apply' | 'watch' | 'export';

/** How a setting's value is written as text (a flag, a variable, an input) and checked. */
interface SettingValue<T> {
  /** The value's schema: the file's entry, and every parsed text is checked against it. */
  schema: z.ZodType<T>;
  /** Text → value; `undefined` when it is not one (the message says `expected …`). */
  parse(text: string): T | undefined;
  /** What a good value is, for messages: `a whole number from 1 to 64`. */
  expected: string;
  /** `<n>` in `--concurrency <n>`; undefined: a switch (a boolean). */
  arg?: string;
}

interface SettingSpec<T = unknown> {
  /** The configuration's field and the file's key: `maxDeleteShare`. */
  key: string;
  /** What it is, for the README's table: `what prune does to entities`. */
  title: string;
  /** One line for `--help` and the flags. */
  help: string;
  /** `--prune-entities`; a boolean gets `--no-…` too when `negatable`. */
  flag?: string;
  /** A boolean flag that also has `--no-<flag>` (said `false`, beating the environment and the file). */
  negatable?: boolean;
  /** The help of `--no-<flag>`. */
  negatedHelp?: string;
  /** The commands whose flags include it (none: no flag). */
  commands: readonly SettingCommand[];
  /** The Action's input, with its own description (default: `help`); `default` is always said. */
  input?: { name: string; description?: string; default?: T };
  /** The environment variable. */
  env?: string;
  /** What the file may do with it. */
  file: FileRule;
  /** Why the file may never set it (the error names it); required when `file` is `never` and it has a file key. */
  neverReason?: string;
  /** The file's own schema when it is stricter than the value's (a floor a pull request may not go under). */
  fileSchema?: z.ZodType<T>;
  value: SettingValue<T>;
  /** The default; undefined: unset (or derived, as the source id is). */
  default?: T;
  /** The default as the README and `--help` say it, when it is not the value itself. */
  defaultText?: string;
  /** The configuration's field when it is not `key`, and the factor its value is scaled by (seconds → ms). */
  config?: { key: string; scale: number };
  /** The configuration leaves it out while it is the default (`strict`, `breakLease`: optional fields). */
  omitDefault?: boolean;
  /** Whether it lets a run remove (or take over) more than the defaults do: the plan's header names it. */
  widensDeletes?: boolean;
  /** The header's line when it widens: undefined when this value does not (`false`, the default). */
  widens?(value: T): string | undefined;
}

/** Any spec, as the table holds them. */
export type AnySettingSpec = SettingSpec<unknown>;

/** A spec with its value type checked where it is written. */
export const setting = <T>(spec: SettingSpec<T>): SettingSpec<T> => spec;

/** `true` or `false` (YAML 1.2 core spellings); anything else is not a silent "no". */
export const booleanValue: SettingValue<boolean> = {
  schema: z.boolean(),
  parse: (text) =>
    ['true', 'True', 'TRUE'].includes(text) ? true : ['false', 'False', 'FALSE'].includes(text) ? false : undefined,
  expected: 'true or false',
};

/** A whole number from `min` to `max`. */
export const intValue = (min: number, max = Number.MAX_SAFE_INTEGER, arg = '<n>'): SettingValue<number> => {
  const schema = z.int().min(min).max(max);
  return {
    schema,
    parse: (text) => {
      const n = text.trim() === '' ? NaN : Number(text);
      return schema.safeParse(n).success ? n : undefined;
    },
    expected: `a whole number ${max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`}`,
    arg,
  };
};

/** A share from 0 to 1. */
export const shareValue: SettingValue<number> = {
  schema: z.number().min(0).max(1),
  parse: (text) => {
    const n = text.trim() === '' ? NaN : Number(text);
    return Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined;
  },
  expected: 'a number from 0 to 1',
  arg: '<share>',
};

/** One of `choices`. */
export const choiceValue = <T extends string>(choices: readonly [T, ...T[]]): SettingValue<T> => ({
  schema: z.enum(choices),
  parse: (text) => ((choices as readonly string[]).includes(text) ? (text as T) : undefined),
  expected: choices.join(' or '),
  arg: `<${choices.join('|')}>`,
});

/** A non-empty text of at most `max` characters. */
export const textValue = (max: number, arg: string): SettingValue<string> => {
  const schema = z.string().min(1).max(max);
  return {
    schema,
    parse: (text) => (schema.safeParse(text).success ? text : undefined),
    expected: `a text of 1 to ${max} characters`,
    arg,
  };
};

/** Comma-separated entries (blanks dropped); the file writes a YAML list. */
export const listValue = (arg: string): SettingValue<string[]> => ({
  schema: z.array(z.string().min(1)),
  parse: (text) =>
    text
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== ''),
  expected: 'a comma-separated list',
  arg,
});
