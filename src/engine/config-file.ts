/**
 * `cortex-sync.yaml` at the manifest root: what the repository proposes. Whoever can open a pull
 * request writes it, so:
 * - it is read only as a regular file inside the manifest root (`source/regular-file.ts`): a
 *   symlink pointing out of the root, a device, a FIFO or a socket is an error, and an error never
 *   quotes what such a file holds;
 * - the settings only the operator decides are errors here, naming the line and why: `baseUrl`
 *   (where the API key is sent) and `forceEntityTypeSchema` (a schema change that breaks entities);
 * - a document that is not a mapping is refused without quoting it;
 * - `requestsPerMinute` under `MIN_FILE_REQUESTS_PER_MINUTE` is an error (a file must not slow
 *   every read to a crawl).
 * The file is validated strictly; a bad key is an error naming the file and line.
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Diagnostic } from '../core/model.js';
import { readRegularFile } from '../source/regular-file.js';
import { SETTINGS_FILE } from '../source/unowned.js';
import { DEFAULT_PARSE_LIMITS, parseManifestFile } from '../source/yaml.js';
import { zodIssuesToDiagnostics } from '../source/zod-diagnostics.js';

export const CONFIG_FILE = SETTINGS_FILE;

/**
 * The lowest request rate the file may set (requests per minute). Below it every read crawls (at
 * 1 a minute a plan of 200 objects takes hours): a pull request must not be able to do that to
 * every plan and the watcher. The operator's `CORTEX_RATE_LIMIT` may go lower.
 */
export const MIN_FILE_REQUESTS_PER_MINUTE = 60;

export const configFileSchema = z.strictObject({
  /** Identifies this repository in the workspace's ownership records. */
  sourceId: z.string().min(1).max(200).optional(),
  prune: z.boolean().optional(),
  /** What prune does to an entity: archive (default, reversible) or delete. */
  pruneEntities: z.enum(['archive', 'delete']).optional(),
  /** Refuse a prune that removes more than this share of the managed objects (default 0.25; the file may only lower it). */
  maxDeleteShare: z.number().min(0).max(1).optional(),
  /** Refuse a prune that removes more than this many objects. */
  maxDeleteCount: z.int().min(0).optional(),
  /** `kind/id` patterns (`*` wildcard) never pruned: `entity/payments-*`. */
  protect: z.array(z.string().min(1)).optional(),
  concurrency: z.int().min(1).max(64).optional(),
  requestsPerMinute: z
    .int()
    .min(MIN_FILE_REQUESTS_PER_MINUTE, {
      error: `expected a whole number of at least ${MIN_FILE_REQUESTS_PER_MINUTE} (the lowest rate a repository file may set; the operator may set a lower one with CORTEX_RATE_LIMIT)`,
    })
    .optional(),
  /** How long an apply waits for another apply of this source to finish (seconds, default 120). */
  leaseWaitSeconds: z.int().min(0).max(3600).optional(),
  /** How long one request may wait for an answer before it counts as timed out (seconds, default 30). */
  requestTimeoutSeconds: z.int().min(1).max(600).optional(),
  /** Every warning is an error (default false). */
  strict: z.boolean().optional(),
});
export type ConfigFile = z.infer<typeof configFileSchema>;

/** Where each setting of the file is written (line numbers), for messages and the plan's header. */
export type ConfigFileLines = Partial<Record<keyof ConfigFile, number>>;

export interface ConfigFileRead {
  config: ConfigFile;
  diagnostics: Diagnostic[];
  lines: ConfigFileLines;
}

/** Settings the operator alone decides, refused in the file with the reason and the way to set them. */
const OPERATOR_ONLY: Readonly<Record<string, string>> = {
  baseUrl:
    'the API key is sent only to a base URL the operator chooses (--base-url or CORTEX_BASE_URL), never to one a repository file names',
  forceEntityTypeSchema:
    'a schema change that breaks existing entities is forced only by the operator (--force-entity-type-schema or CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA=true), never by a repository file',
};

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
export const readConfigFile = async (dir: string): Promise<ConfigFileRead> => {
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
  const refused: Diagnostic[] = [];
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc.value)) {
    const why = Object.hasOwn(OPERATOR_ONLY, key) ? OPERATOR_ONLY[key] : undefined;
    if (why === undefined) {
      settings[key] = value;
      continue;
    }
    const at = doc.locate([key]);
    refused.push(fileError(`\`${key}\` is not allowed in ${CONFIG_FILE}: ${why}`, at.line, at.column, key));
  }
  const result = configFileSchema.safeParse(settings);
  if (!result.success)
    return { ...none, diagnostics: [...refused, ...zodIssuesToDiagnostics(result.error.issues, doc, {})] };
  const lines: ConfigFileLines = {};
  for (const key of Object.keys(result.data) as (keyof ConfigFile)[]) lines[key] = doc.locate([key]).line;
  return { config: result.data, diagnostics: [...refused, ...parsed.diagnostics], lines };
};
