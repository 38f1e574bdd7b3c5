/**
 * `cortex-sync.yaml` at the manifest root: what the repository proposes. Whoever can open a pull
 * request writes it, so:
 * - it is read only as a regular file inside the manifest root (`source/regular-file.ts`): a
 *   symlink pointing out of the root, a device, a FIFO or a socket is an error, and an error never
 *   quotes what such a file holds;
 * - the settings only the operator decides (`file: 'never'` in the table, `engine/settings.ts`) are
 *   errors here, naming the line and why: `baseUrl` (where the API key is sent),
 *   `forceEntityTypeSchema` (a schema change that breaks entities), the one-run switches;
 * - a document that is not a mapping is refused without quoting it;
 * - `requestsPerMinute` under `MIN_FILE_REQUESTS_PER_MINUTE` is an error (a file must not slow
 *   every read to a crawl).
 * The file is validated strictly; a bad key is an error naming the file and line.
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Diagnostic } from '../core/model.js';
import type { AnySettingSpec } from '../core/settings.js';
import { readRegularFile } from '../source/regular-file.js';
import { SETTINGS_FILE } from '../source/unowned.js';
import { DEFAULT_PARSE_LIMITS, parseManifestFile } from '../source/yaml.js';
import { zodIssuesToDiagnostics } from '../source/zod-diagnostics.js';
import { SETTINGS } from './settings.js';

export { MIN_FILE_REQUESTS_PER_MINUTE } from './settings.js';

export const CONFIG_FILE = SETTINGS_FILE;

/**
 * The file's schema, derived from the table (`engine/settings.ts`): every setting the file may
 * name (its own schema when it has a stricter one), strictly: any other key is an error naming its
 * line.
 */
export const configFileSchemaOf = (table: readonly AnySettingSpec[]) =>
  z.strictObject(
    Object.fromEntries(
      table
        .filter((spec) => spec.file !== 'never')
        .map((spec) => [spec.key, (spec.fileSchema ?? spec.value.schema).optional()]),
    ),
  );

export const configFileSchema = configFileSchemaOf(SETTINGS);
/** The file's settings as validated, by key. */
export type ConfigFile = Readonly<Record<string, unknown>> & { readonly sourceId?: string };

/** Where each setting of the file is written (line numbers), for messages and the plan's header. */
export type ConfigFileLines = Partial<Record<string, number>>;

interface ConfigFileRead {
  config: ConfigFile;
  diagnostics: Diagnostic[];
  lines: ConfigFileLines;
}

/** Settings the operator alone decides, refused in the file with the reason and the way to set them. */
const operatorOnly = (table: readonly AnySettingSpec[]): ReadonlyMap<string, string> =>
  new Map(table.flatMap((spec) => (spec.file === 'never' && spec.neverReason ? [[spec.key, spec.neverReason]] : [])));

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const kindOfValue = (value: unknown): string =>
  Array.isArray(value) ? 'a list' : value === null ? 'nothing' : `a ${typeof value}`;

const utf8 = new TextDecoder('utf-8', { fatal: true });

const fileError = (message: string, line = 1, column = 1, field?: string): Diagnostic => ({
  severity: 'error',
  code: 'config',
  message,
  file: CONFIG_FILE,
  line,
  column,
  ...(field !== undefined ? { field } : {}),
});

/** Reads and validates `cortex-sync.yaml` in `dir` (see the module comment); absent file → `{}`. */
export const readConfigFile = async (
  dir: string,
  table: readonly AnySettingSpec[] = SETTINGS,
): Promise<ConfigFileRead> => {
  const none: ConfigFileRead = { config: {}, diagnostics: [], lines: {} };
  const realRoot = await realpath(dir).catch(() => undefined);
  if (realRoot === undefined) return none;
  const read = readRegularFile(join(realRoot, CONFIG_FILE), {
    maxBytes: DEFAULT_PARSE_LIMITS.maxFileBytes,
    inside: realRoot,
  });
  if (!read.ok) {
    if (read.code === 'missing') return none;
    return {
      ...none,
      diagnostics: [fileError(`${CONFIG_FILE} ${read.reason}; it is not read, and nothing runs until it is fixed`)],
    };
  }
  let text: string;
  try {
    text = utf8.decode(read.bytes);
  } catch {
    return { ...none, diagnostics: [fileError(`${CONFIG_FILE} is not valid UTF-8 text`)] };
  }
  const parsed = parseManifestFile(CONFIG_FILE, text);
  const doc = parsed.documents[0];
  if (!doc || parsed.diagnostics.some((d) => d.severity === 'error'))
    return { ...none, diagnostics: parsed.diagnostics.filter((d) => d.code !== 'empty-manifest') };
  if (parsed.documents.length > 1) {
    const second = parsed.documents[1];
    const message = `${CONFIG_FILE} holds ${parsed.documents.length} YAML documents; the settings are one mapping (remove the \`---\` separators)`;
    return { ...none, diagnostics: [fileError(message, second?.line, second?.column)] };
  }
  if (!isRecord(doc.value)) {
    const message = `${CONFIG_FILE} must be a mapping of settings (\`key: value\` lines), but it holds ${kindOfValue(doc.value)}`;
    return { ...none, diagnostics: [fileError(message, doc.line, doc.column)] };
  }
  const never = operatorOnly(table);
  const refused = Object.keys(doc.value).flatMap((key) => {
    const why = never.get(key);
    const at = doc.locate([key]);
    return why === undefined
      ? []
      : [fileError(`\`${key}\` is not allowed in ${CONFIG_FILE}: ${why}`, at.line, at.column, key)];
  });
  // Own data properties only (`fromEntries`): a `__proto__` key is a key like any other (unknown).
  const settings = Object.fromEntries(Object.entries(doc.value).filter(([key]) => !never.has(key)));
  const result = configFileSchemaOf(table).safeParse(settings);
  if (!result.success)
    return { ...none, diagnostics: [...refused, ...zodIssuesToDiagnostics(result.error.issues, doc, {})] };
  const lines: ConfigFileLines = {};
  for (const key of Object.keys(result.data)) lines[key] = doc.locate([key]).line;
  return { config: result.data, diagnostics: [...refused, ...parsed.diagnostics], lines };
};
