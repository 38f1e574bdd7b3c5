/**
 * The plan's header (pure): who the plan acts for (source id, origin, binding) and every setting
 * that lets it remove or take over more than the defaults do, with where each came from (the
 * operator: a flag, an Action input, a watcher setting, the environment; or the repository's
 * `cortex-sync.yaml`), so that a reviewer of a pull request sees a file that widens deletes.
 * Derived from the table of settings (`engine/settings.ts`): every setting marked `widensDeletes` is
 * named by its own `widens` line (a setting without one, whenever it is not its default). Protect
 * patterns and a count limit are compared with what this source's record holds (written with the
 * settings of the apply that last changed it): a pattern removed or a limit raised since is named
 * too.
 */
import type { DeleteScope, JsonValue, SettingFrom, WidenedSetting } from '../core/model.js';
import { countOf } from '../core/plural.js';
import type { AnySettingSpec } from '../core/settings.js';
import type { SourceBinding } from '../core/source-binding.js';
import type { SettingSource, SyncConfig } from './config.js';
import { SETTINGS } from './settings.js';
import type { RecordMeta } from '../ownership/store.js';

/** The configuration: a kind's own setting is a field by its key (a fixture's too). */
type ScopeConfig = Partial<SyncConfig> & Pick<SyncConfig, 'protect'>;

/** Removed protect patterns listed in the header; the effect counts them all. */
const MAX_PATTERNS_SHOWN = 20;

/** One line of the header, before who said it is known. */
interface Widening {
  value: JsonValue;
  effect: string;
  /** Who widened it when the configuration's origin is the default (the record's comparison: the file). */
  from?: SettingFrom;
}

/** The settings compared with this source's record rather than with their defaults. */
const AGAINST_THE_RECORD: Readonly<
  Record<string, (config: ScopeConfig, recorded: RecordMeta | undefined) => Widening | undefined>
> = {
  maxDeleteCount: (config, recorded) => {
    const recordedCount = recorded?.maxDeleteCount;
    if (recordedCount === undefined || (config.maxDeleteCount !== undefined && config.maxDeleteCount <= recordedCount))
      return undefined;
    return {
      value: config.maxDeleteCount ?? null,
      effect:
        config.maxDeleteCount === undefined
          ? `no count limit any more (the ownership record has ${recordedCount})`
          : `raised from ${recordedCount} (the ownership record's)`,
      // Only the file sets it: gone from there is the file's doing.
      from: 'file',
    };
  },
  protect: (config, recorded) => {
    const removed = (recorded?.protect ?? []).filter((p) => !config.protect.includes(p));
    if (removed.length === 0) return undefined;
    return {
      // A record is anyone's to edit: a header never lists more than a screenful of its patterns.
      value: removed.slice(0, MAX_PATTERNS_SHOWN),
      effect: `no longer protected: ${countOf(removed.length, 'pattern')} the ownership record has from an earlier apply`,
      from: 'file',
    };
  },
};

/** A setting's value as the table says it (the configuration's field, unscaled). */
const valueOf = (config: ScopeConfig, spec: AnySettingSpec): unknown => {
  const value = (config as Readonly<Record<string, unknown>>)[spec.config?.key ?? spec.key];
  return spec.config !== undefined && typeof value === 'number' ? value / spec.config.scale : value;
};

/** How a setting of the table widens this run, if it does. */
const wideningOf = (config: ScopeConfig, recorded: RecordMeta | undefined, spec: AnySettingSpec) => {
  const againstRecord = AGAINST_THE_RECORD[spec.key];
  if (againstRecord !== undefined) return againstRecord(config, recorded);
  const value = valueOf(config, spec);
  if (value === undefined) return undefined;
  const effect =
    spec.widens !== undefined
      ? spec.widens(value)
      : JSON.stringify(value) !== JSON.stringify(spec.default)
        ? `${spec.title}: not the default (${spec.defaultText ?? JSON.stringify(spec.default ?? null)})`
        : undefined;
  return effect === undefined ? undefined : { value: value as JsonValue, effect };
};

export const deleteScopeOf = (
  config: ScopeConfig,
  recorded: RecordMeta | undefined,
  binding: SourceBinding | undefined,
  table: readonly AnySettingSpec[] = SETTINGS,
): DeleteScope => {
  /** Who decided a setting: the operator's flags are an Action's inputs or a watcher's settings there. */
  const origins: Readonly<Record<string, SettingSource>> = config.origins ?? {};
  const from = (field: string): SettingFrom => {
    const origin = origins[field]?.origin ?? 'default';
    return origin === 'flag' ? (config.flagsAre ?? 'flag') : origin;
  };
  const widened: WidenedSetting[] = [];
  for (const spec of table.filter((s) => s.widensDeletes === true)) {
    const widening = wideningOf(config, recorded, spec);
    if (widening === undefined) continue;
    const field = spec.config?.key ?? spec.key;
    const said = from(field);
    const source = said === 'default' && widening.from !== undefined ? widening.from : said;
    const name = origins[field]?.name;
    widened.push({
      setting: spec.key,
      value: widening.value,
      from: source,
      ...(name !== undefined && source !== 'default' && source === said ? { name } : {}),
      effect: widening.effect,
    });
  }

  return {
    ...(config.sourceId !== undefined ? { sourceId: config.sourceId } : {}),
    ...(binding !== undefined ? { origin: binding.origin, binding: binding.state } : {}),
    ...(binding?.recordedOrigin !== undefined && binding.recordedOrigin !== binding.origin
      ? { recordedOrigin: binding.recordedOrigin }
      : {}),
    widened,
  };
};
