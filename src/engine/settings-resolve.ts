/**
 * One setting decided from its spec (`engine/settings.ts`): the operator's flag (or Action input,
 * or watcher setting), then its environment variable, then `cortex-sync.yaml` as its file rule
 * allows, then the default. A flag or variable that is set, `false` included, beats the file; a
 * blank variable counts as unset; a bad value is an error naming the flag or variable.
 */
import type { Diagnostic } from '../core/model.js';
import type { AnySettingSpec } from '../core/settings.js';
import { excerpt } from '../source/excerpt.js';
import { CONFIG_FILE, type ConfigFileLines } from './config-file.js';

/** Who decided a setting. */
export type SettingOrigin = 'flag' | 'environment' | 'file' | 'default';

export interface SettingSource {
  origin: SettingOrigin;
  /** How it was said: `--prune`, `CORTEX_SYNC_PRUNE`, `cortex-sync.yaml:3`, `default`. */
  name: string;
}

export interface Decided {
  value: unknown;
  source: SettingSource;
}

/** What a setting is decided from: the flags as parsed, the environment, the file as validated. */
interface SettingInputs {
  flags: Readonly<Record<string, unknown>>;
  env: NodeJS.ProcessEnv;
  file: Readonly<Record<string, unknown>>;
  lines: ConfigFileLines;
}

const DEFAULT: SettingSource = { origin: 'default', name: 'default' };

/** `cortex-sync.yaml:3`, or the file alone when the line is not known. */
const fileLine = (lines: ConfigFileLines, key: string): string =>
  lines[key] !== undefined ? `${CONFIG_FILE}:${lines[key]}` : CONFIG_FILE;

const configError = (message: string): Diagnostic => ({ severity: 'error', code: 'config', message });

/** How the flag was said: `--no-prune` for a negatable flag said `false`. */
const flagName = (spec: AnySettingSpec, value: unknown): string =>
  spec.negatable && value === false && spec.flag ? `--no-${spec.flag.slice(2)}` : (spec.flag ?? spec.key);

/** The flag's value, checked against the setting's schema (a runtime may hand it in without commander). */
const fromFlag = (spec: AnySettingSpec, said: unknown, problems: Diagnostic[]): Decided | undefined => {
  if (said === undefined || said === '') return undefined;
  const name = flagName(spec, said);
  if (!spec.value.schema.safeParse(said).success) {
    problems.push(
      configError(`${name}: expected ${spec.value.expected}, got '${excerpt(JSON.stringify(said) ?? '')}'`),
    );
    return undefined;
  }
  return { value: said, source: { origin: 'flag', name } };
};

/** The variable's value, trimmed; blank counts as unset. */
const fromEnv = (spec: AnySettingSpec, env: NodeJS.ProcessEnv, problems: Diagnostic[]): Decided | undefined => {
  if (spec.env === undefined) return undefined;
  const text = env[spec.env]?.trim();
  if (text === undefined || text === '') return undefined;
  const value = spec.value.parse(text);
  if (value === undefined || !spec.value.schema.safeParse(value).success) {
    problems.push(configError(`${spec.env}: expected ${spec.value.expected}, got '${excerpt(text)}'`));
    return undefined;
  }
  return { value, source: { origin: 'environment', name: spec.env } };
};

/**
 * The file's value as its rule allows: a `lower-only` value above the default is a warning and is
 * not used (only the operator may loosen such a limit).
 */
const fromFile = (spec: AnySettingSpec, inputs: SettingInputs, problems: Diagnostic[]): Decided | undefined => {
  const value = Object.hasOwn(inputs.file, spec.key) ? inputs.file[spec.key] : undefined;
  if (value === undefined || spec.file === 'never') return undefined;
  if (
    spec.file === 'lower-only' &&
    typeof value === 'number' &&
    typeof spec.default === 'number' &&
    value > spec.default
  ) {
    const operator = [spec.env, spec.flag].filter((n) => n !== undefined).join(' or ');
    problems.push({
      severity: 'warning',
      code: 'config',
      message: `${spec.key} ${value} in ${CONFIG_FILE} would raise the limit above its default ${spec.defaultText ?? String(spec.default)}; a repository file may only lower it, so the default applies (the operator raises it with ${operator}${spec.widensDeletes ? ', or passes --allow-mass-delete for one run' : ''})`,
      file: CONFIG_FILE,
      line: inputs.lines[spec.key] ?? 1,
      column: 1,
      field: spec.key,
    });
    return undefined;
  }
  return { value, source: { origin: 'file', name: fileLine(inputs.lines, spec.key) } };
};

/** An `add-only` list: every entry of the flag, the environment and the file; the file adds, never removes. */
const addedUp = (said: (Decided | undefined)[], spec: AnySettingSpec): Decided => {
  const given = said.filter((d): d is Decided => d !== undefined && Array.isArray(d.value) && d.value.length > 0);
  const value = [...new Set(given.flatMap((d) => d.value as unknown[]))];
  const first = given[0];
  if (first === undefined) return { value: spec.default ?? [], source: DEFAULT };
  return { value, source: { origin: first.source.origin, name: given.map((d) => d.source.name).join(' + ') } };
};

/** One setting decided (see the module comment). */
export const decideSetting = (spec: AnySettingSpec, inputs: SettingInputs, problems: Diagnostic[]): Decided => {
  const said = [
    fromFlag(spec, inputs.flags[spec.key], problems),
    fromEnv(spec, inputs.env, problems),
    fromFile(spec, inputs, problems),
  ];
  if (spec.file === 'add-only') return addedUp(said, spec);
  return said.find((d) => d !== undefined) ?? { value: spec.default, source: DEFAULT };
};
