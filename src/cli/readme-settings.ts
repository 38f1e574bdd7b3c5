/**
 * The README's table of settings, generated (pure): one row per setting of the table
 * (`engine/settings.ts`) — its key, flag, environment variable, Action input, what
 * `cortex-sync.yaml` may do with it, its default and its help — written between
 * `<!-- settings:start -->` and `<!-- settings:end -->`. `npm run docs:settings` writes it; a test
 * fails when the committed README differs (as `action.yml` is checked).
 */
import type { AnySettingSpec, FileRule } from '../core/settings.js';
import { SETTINGS } from '../engine/settings.js';

export const SETTINGS_START = '<!-- settings:start -->';
export const SETTINGS_END = '<!-- settings:end -->';

/** A cell's text: `|` and line breaks would end the cell or the row. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const code = (text: string): string => `\`${text}\``;

const RULES: Readonly<Record<Exclude<FileRule, 'never'>, string>> = {
  allowed: 'set it (a flag or variable wins)',
  'lower-only': 'only lower it below the default (higher: a warning, the default applies)',
  'add-only': "add to the operator's, never remove from them",
};

const flagOf = (spec: AnySettingSpec): string => {
  if (spec.flag === undefined) return '—';
  const flags = [spec.flag, ...(spec.negatable ? [`--no-${spec.flag.slice(2)}`] : [])].map((f) =>
    code(spec.value.arg === undefined ? f : `${f} ${spec.value.arg}`),
  );
  return `${flags.join(', ')} (${spec.commands.join(', ')})`;
};

const inputOf = (spec: AnySettingSpec): string => (spec.input === undefined ? '—' : code(spec.input.name));

const fileOf = (spec: AnySettingSpec): string =>
  spec.file === 'never'
    ? `never${spec.neverReason === undefined ? '' : `: ${spec.neverReason}`}`
    : `${RULES[spec.file]}${spec.fileSchema === undefined ? '' : `; ${spec.fileSchema.description ?? 'stricter than a flag'}`}`;

const defaultOf = (spec: AnySettingSpec): string =>
  spec.defaultText ??
  (spec.default === undefined
    ? '—'
    : Array.isArray(spec.default) && spec.default.length === 0
      ? '—'
      : code(JSON.stringify(spec.default).replace(/^"|"$/g, '')));

const HEADER = [
  '| key (`cortex-sync.yaml`) | setting | flag (commands) | environment | Action input | the file may | value | default |',
  '|---|---|---|---|---|---|---|---|',
];

/** The table's rows for `table` (markdown). */
export const settingsTableMarkdown = (table: readonly AnySettingSpec[] = SETTINGS): string =>
  [
    ...HEADER,
    ...table.map(
      (spec) =>
        `| ${[
          code(spec.key),
          spec.title === spec.help ? spec.title : `${spec.title}: ${spec.help}`,
          flagOf(spec),
          spec.env === undefined ? '—' : code(spec.env),
          inputOf(spec),
          fileOf(spec),
          spec.value.expected,
          defaultOf(spec),
        ]
          .map(cell)
          .join(' | ')} |`,
    ),
  ].join('\n');

/** `readme` with the text between its markers replaced by the table; an error when a marker is missing. */
export const withSettingsTable = (readme: string, table: readonly AnySettingSpec[] = SETTINGS): string => {
  const start = readme.indexOf(SETTINGS_START);
  const end = readme.indexOf(SETTINGS_END);
  if (start < 0 || end < start)
    throw new Error(`README.md has no ${SETTINGS_START} … ${SETTINGS_END} markers for the table of settings`);
  return `${readme.slice(0, start + SETTINGS_START.length)}\n${settingsTableMarkdown(table)}\n${readme.slice(end)}`;
};
