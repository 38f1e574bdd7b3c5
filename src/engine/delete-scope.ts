/**
 * The plan's header (pure): who the plan acts for (source id, origin, binding) and every setting
 * that lets it remove or take over more than the defaults do, with where each came from (the
 * operator: a flag, an Action input, a watcher setting, the environment; or the repository's
 * `cortex-sync.yaml`), so that a reviewer of a pull request sees a file that widens deletes.
 * Protect patterns and a count limit are compared with what this source's record holds (written
 * with the settings of the apply that last changed it): a pattern removed or a limit raised since
 * is named too.
 */
import type { DeleteScope, ScopeSettingName, SettingFrom, WidenedSetting } from '../core/model.js';
import { DEFAULT_MAX_DELETE_SHARE } from '../core/plan.js';
import { countOf } from '../core/plural.js';
import type { SourceBinding } from '../core/source-binding.js';
import type { SyncConfig } from './config.js';
import type { RecordMeta } from '../ownership/store.js';

type ScopeConfig = Pick<
  SyncConfig,
  | 'sourceId'
  | 'prune'
  | 'pruneEntities'
  | 'maxDeleteShare'
  | 'maxDeleteCount'
  | 'protect'
  | 'allowMassDelete'
  | 'allowTakeover'
  | 'origins'
  | 'flagsAre'
>;

/** Removed protect patterns listed in the header; the effect counts them all. */
const MAX_PATTERNS_SHOWN = 20;

const percent = (share: number): string => `${Math.round(share * 1000) / 10} %`;

export const deleteScopeOf = (
  config: ScopeConfig,
  recorded: RecordMeta | undefined,
  binding: SourceBinding | undefined,
): DeleteScope => {
  /** Who decided a setting: the operator's flags are an Action's inputs or a watcher's settings there. */
  const from = (setting: ScopeSettingName): SettingFrom => {
    const origin = config.origins?.[setting]?.origin ?? 'default';
    return origin === 'flag' ? (config.flagsAre ?? 'flag') : origin;
  };
  const widened: WidenedSetting[] = [];
  const add = (setting: ScopeSettingName, value: WidenedSetting['value'], effect: string, source = from(setting)) => {
    const name = config.origins?.[setting]?.name;
    widened.push({
      setting,
      value,
      from: source,
      ...(name !== undefined && source !== 'default' && source === from(setting) ? { name } : {}),
      effect,
    });
  };

  if (config.prune) add('prune', true, 'objects of this source whose manifests are gone are removed');
  if (config.pruneEntities === 'delete')
    add('pruneEntities', 'delete', 'pruned entities are deleted, not archived (a delete cannot be undone)');
  if (config.maxDeleteShare > DEFAULT_MAX_DELETE_SHARE)
    add(
      'maxDeleteShare',
      config.maxDeleteShare,
      `one apply may remove up to ${percent(config.maxDeleteShare)} of the managed objects (default ${percent(DEFAULT_MAX_DELETE_SHARE)})`,
    );
  const recordedCount = recorded?.maxDeleteCount;
  if (recordedCount !== undefined && (config.maxDeleteCount === undefined || config.maxDeleteCount > recordedCount))
    add(
      'maxDeleteCount',
      config.maxDeleteCount ?? null,
      config.maxDeleteCount === undefined
        ? `no count limit any more (the ownership record has ${recordedCount})`
        : `raised from ${recordedCount} (the ownership record's)`,
      // Only the file sets it: gone from there is the file's doing.
      from('maxDeleteCount') === 'default' ? 'file' : from('maxDeleteCount'),
    );
  const removedPatterns = (recorded?.protect ?? []).filter((p) => !config.protect.includes(p));
  if (removedPatterns.length > 0)
    add(
      'protect',
      // A record is anyone's to edit: a header never lists more than a screenful of its patterns.
      removedPatterns.slice(0, MAX_PATTERNS_SHOWN),
      `no longer protected: ${countOf(removedPatterns.length, 'pattern')} the ownership record has from an earlier apply`,
      from('protect') === 'default' ? 'file' : from('protect'),
    );
  if (config.allowMassDelete) add('allowMassDelete', true, 'the share, count and whole-kind guards of prune are off');
  if (config.allowTakeover)
    add('allowTakeover', true, 'objects and source ids of other sources or origins may be taken over');

  return {
    ...(config.sourceId !== undefined ? { sourceId: config.sourceId } : {}),
    ...(binding !== undefined ? { origin: binding.origin, binding: binding.state } : {}),
    ...(binding?.recordedOrigin !== undefined && binding.recordedOrigin !== binding.origin
      ? { recordedOrigin: binding.recordedOrigin }
      : {}),
    widened,
  };
};
