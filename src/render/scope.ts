/**
 * The plan's header: the settings that let it remove (or take over) more than the defaults do,
 * each with where it came from, so a reviewer sees a `cortex-sync.yaml` that widens deletes
 * before reading a single change. Shown by the text and Markdown plans and the Action's comment;
 * the JSON plan has it as `deleteScope` (Markdown: `scopeMarkdown` in `markdown.ts`). Nothing is shown when nothing is widened.
 */
import type { DeleteScope, JsonValue, Plan, SettingFrom, WidenedSetting } from '../core/model.js';
import { printable } from '../core/printable.js';

export const SETTING_FROM_LABEL: Record<SettingFrom, string> = {
  flag: 'flag',
  input: 'Action input',
  setting: 'watcher setting',
  environment: 'environment',
  file: 'cortex-sync.yaml',
  record: 'ownership record',
  default: 'default',
};

/** A setting's value as written (not yet made printable: each surface escapes it its own way). */
/**
 * Where a setting came from, for a reader: the file's line or the variable's or flag's name when
 * known (`cortex-sync.yaml:3`, `CORTEX_SYNC_PRUNE`, `--prune`), else the kind of source. An Action
 * input or a watcher setting is named as such (its flag name would mislead).
 */
export const settingSaidBy = (w: WidenedSetting): string =>
  w.name !== undefined && (w.from === 'flag' || w.from === 'environment' || w.from === 'file')
    ? printable(w.name)
    : SETTING_FROM_LABEL[w.from];

export const rawScopeValue = (v: JsonValue): string => (typeof v === 'string' ? v : JSON.stringify(v));

const scopeValue = (v: JsonValue): string => printable(rawScopeValue(v));

const scopeOwner = (scope: DeleteScope): string =>
  scope.sourceId === undefined
    ? ''
    : ` of source \`${printable(scope.sourceId)}\`${scope.origin !== undefined ? ` (origin \`${printable(scope.origin)}\`)` : ''}`;

/** The header as text lines (empty when nothing is widened). */
export const scopeTextLines = (plan: Plan): string[] => {
  const scope = plan.scope;
  if (!scope || scope.widened.length === 0) return [];
  return [
    `Settings that widen what this plan${scopeOwner(scope)} may remove:`,
    ...scope.widened.map((w) => `  ! ${w.setting}: ${scopeValue(w.value)} (${settingSaidBy(w)}): ${w.effect}`),
    '',
  ];
};
