/**
 * The flags of the table of settings (`engine/settings.ts`) as commander options: each setting
 * whose `commands` name a command gets its flag there (a negatable boolean its `--no-…` too), its
 * value checked as commander parses it, so a bad value is an error naming the flag. A flag not
 * given stays undefined (not said), so the environment and the file decide. Command-specific
 * arguments that are not settings (`--output`, `--out`, `--dry-run`, the watcher's durations) are
 * plain options of their command.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { AnySettingSpec, SettingCommand } from '../core/settings.js';

/** What the flag's help adds: where else the setting is said. */
const alsoSaid = (spec: AnySettingSpec): string => {
  const places = [
    ...(spec.env !== undefined ? [`env ${spec.env}`] : []),
    ...(spec.file === 'allowed' || spec.file === 'add-only'
      ? [`${spec.key} in cortex-sync.yaml${spec.file === 'add-only' ? ' adds to it' : ''}`]
      : spec.file === 'lower-only'
        ? [`cortex-sync.yaml may only lower it`]
        : []),
  ];
  return places.length > 0 ? ` (${places.join('; ')})` : '';
};

/** The commander option of one setting's flag. */
const settingOption = (spec: AnySettingSpec & { flag: string }): Option => {
  const arg = spec.value.arg;
  if (arg === undefined) return new Option(spec.flag, `${spec.help}${alsoSaid(spec)}`);
  const parse = (text: string, previous: unknown): unknown => {
    const value = spec.value.parse(text.trim());
    if (value === undefined || !spec.value.schema.safeParse(value).success)
      throw new InvalidArgumentError(`expected ${spec.value.expected}`);
    // A list flag may be repeated: its entries add up.
    return Array.isArray(value) && Array.isArray(previous)
      ? [...(previous as unknown[]), ...(value as unknown[])]
      : value;
  };
  return new Option(`${spec.flag} ${arg}`, `${spec.help}${alsoSaid(spec)}`).argParser(parse);
};

/** Adds the flags of every setting of `table` that applies to `command`. */
export const addSettingOptions = (cmd: Command, command: SettingCommand, table: readonly AnySettingSpec[]): Command => {
  for (const spec of table) {
    if (spec.flag === undefined || !spec.commands.includes(command)) continue;
    cmd.addOption(settingOption({ ...spec, flag: spec.flag }));
    if (spec.negatable)
      cmd.addOption(
        new Option(
          `--no-${spec.flag.slice(2)}`,
          spec.negatedHelp ??
            `not ${spec.key} in this run, whatever ${[spec.env, 'cortex-sync.yaml'].filter(Boolean).join(' or ')} says`,
        ),
      );
  }
  return cmd;
};

/** What the flags of `o` say, by the settings' keys (undefined: not said). */
export const settingsSaid = (o: object, table: readonly AnySettingSpec[]): Record<string, unknown> =>
  Object.fromEntries(
    table.flatMap((spec) => {
      const value = (o as Record<string, unknown>)[spec.key];
      return Object.hasOwn(o, spec.key) && value !== undefined ? [[spec.key, value]] : [];
    }),
  );
