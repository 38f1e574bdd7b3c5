/**
 * Settings, in order of precedence: command-line flags, environment, `cortex-sync.yaml` at the
 * manifest root (interface.md). The file is validated strictly; a bad key is an error naming the
 * file and line. The base URL (where the API key is sent) comes only from the flag, the
 * environment or the default: the repository's file is written by whoever can open a pull
 * request, so a `baseUrl` there is an error.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import type { Diagnostic, ScopeSettingName, SettingFrom } from '../core/model.js';
import { parseManifestFile } from '../source/yaml.js';
import { zodIssuesToDiagnostics } from '../source/zod-diagnostics.js';
import { deriveOrigin, deriveSourceId } from './source-id.js';

export const CONFIG_FILE = 'cortex-sync.yaml';
export const DEFAULT_BASE_URL = 'https://api.getcortexapp.com';

export const configFileSchema = z.strictObject({
  /** Identifies this repository in the workspace's ownership records. */
  sourceId: z.string().min(1).max(200).optional(),
  prune: z.boolean().optional(),
  /** What prune does to an entity: archive (default, reversible) or delete. */
  pruneEntities: z.enum(['archive', 'delete']).optional(),
  /** Refuse a prune that removes more than this share of the managed objects (default 0.25). */
  maxDeleteShare: z.number().min(0).max(1).optional(),
  /** Refuse a prune that removes more than this many objects. */
  maxDeleteCount: z.int().min(0).optional(),
  /** `kind/id` patterns (`*` wildcard) never pruned: `entity/payments-*`. */
  protect: z.array(z.string().min(1)).optional(),
  concurrency: z.int().min(1).max(64).optional(),
  requestsPerMinute: z.int().min(1).optional(),
  forceEntityTypeSchema: z.boolean().optional(),
  /** How long an apply waits for another apply of this source to finish (seconds, default 120). */
  leaseWaitSeconds: z.int().min(0).max(3600).optional(),
  /** How long one request may wait for an answer before it counts as timed out (seconds, default 30). */
  requestTimeoutSeconds: z.int().min(1).max(600).optional(),
});
export type ConfigFile = z.infer<typeof configFileSchema>;

/** The client's default wait for one answer. */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30;

/** Flags as the CLI parsed them; undefined = not given. */
export interface ConfigFlags {
  dir?: string;
  sourceId?: string;
  baseUrl?: string;
  prune?: boolean;
  allowMassDelete?: boolean;
  allowTakeover?: boolean;
  concurrency?: number;
  requestsPerMinute?: number;
  forceEntityTypeSchema?: boolean;
  /** Take the source's apply lease even when another apply holds it (the operator's way out of a stuck lease). */
  breakLease?: boolean;
  /** What these flags are, in the plan's header: command-line flags (default), Action inputs or watcher settings. */
  from?: 'flag' | 'input' | 'setting';
  /** The folder whose identity is the run's origin when it is not `dir` (a watched `--dir` whose symlink moves). */
  originDir?: string;
}

export interface SyncConfig {
  dir: string;
  /** Undefined when none is set and none can be derived (plan/apply then refuse). */
  sourceId?: string;
  baseUrl: string;
  apiKey?: string;
  prune: boolean;
  pruneEntities: 'archive' | 'delete';
  allowMassDelete: boolean;
  allowTakeover: boolean;
  maxDeleteShare: number;
  maxDeleteCount?: number;
  protect: string[];
  concurrency: number;
  requestsPerMinute: number;
  forceEntityTypeSchema: boolean;
  /** How long an apply waits for another apply of this source to finish; default in `engine/lease.ts`. */
  leaseWaitMs?: number;
  /** Per request attempt (a hung server); default 30 s. */
  requestTimeoutMs?: number;
  /** Where this run comes from, bound to the source id at its first apply (`engine/source-id.ts`). */
  origin?: string;
  /** Take the apply lease even when another apply holds it. */
  breakLease?: boolean;
  /** Where each setting that limits removals came from, for the plan's header (absent: the default). */
  settingsFrom?: Partial<Record<ScopeSettingName, SettingFrom>>;
}

/** Where a setting came from: the first of flag, environment, file that is set. */
const settingFrom = (flags: ConfigFlags, flag: unknown, env: unknown, file: unknown): SettingFrom | undefined =>
  flag !== undefined
    ? (flags.from ?? 'flag')
    : env !== undefined
      ? 'environment'
      : file !== undefined
        ? 'file'
        : undefined;

/** Reads and validates `cortex-sync.yaml` in `dir`; absent file → `{}`. */
export const readConfigFile = async (dir: string): Promise<{ config: ConfigFile; diagnostics: Diagnostic[] }> => {
  let text: string;
  try {
    text = await readFile(join(dir, CONFIG_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { config: {}, diagnostics: [] };
    throw new ConfigError(`cannot read ${CONFIG_FILE}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = parseManifestFile(CONFIG_FILE, text);
  const doc = parsed.documents[0];
  if (!doc || parsed.diagnostics.some((d) => d.severity === 'error'))
    return { config: {}, diagnostics: parsed.diagnostics.filter((d) => d.code !== 'empty-manifest') };
  const { baseUrl: fileBaseUrl, ...settings } = isRecord(doc.value) ? doc.value : { value: doc.value };
  const refused: Diagnostic[] = [];
  if (fileBaseUrl !== undefined) {
    const at = doc.locate(['baseUrl']);
    refused.push({
      severity: 'error',
      code: 'config',
      message: `\`baseUrl\` is not allowed in ${CONFIG_FILE}: the API key is sent only to a base URL the operator chooses (--base-url or CORTEX_BASE_URL), never to one a repository file names`,
      file: CONFIG_FILE,
      line: at.line,
      column: at.column,
      field: 'baseUrl',
    });
  }
  const result = configFileSchema.safeParse(isRecord(doc.value) ? settings : doc.value);
  if (!result.success)
    return { config: {}, diagnostics: [...refused, ...zodIssuesToDiagnostics(result.error.issues, doc, {})] };
  return { config: result.data, diagnostics: [...refused, ...parsed.diagnostics] };
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);
const isLoopback = (hostname: string): boolean =>
  LOOPBACK_HOSTS.has(hostname.toLowerCase()) || /^127(?:\.\d{1,3}){3}$/.test(hostname);

/**
 * Where the key may go: `https`, or plain `http` only to a loopback host (an emulator, a local
 * proxy); no credentials in the URL. `origin` names the setting for the message.
 */
export const checkBaseUrl = (value: string, origin: string): Diagnostic | undefined => {
  const fail = (why: string): Diagnostic => ({ severity: 'error', code: 'config', message: `${origin}: ${why}` });
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail('not a valid URL');
  }
  if (url.username !== '' || url.password !== '') return fail('a base URL must not hold credentials');
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    return isLoopback(url.hostname)
      ? undefined
      : fail(
          `plain http sends the API key unencrypted; use https (http is allowed only to 127.0.0.1, localhost or [::1])`,
        );
  }
  return fail(`expected an https URL, got the scheme ${url.protocol.replace(/:$/, '')}`);
};

/** A whole-number environment setting, checked like its file counterpart; a bad value is an error. */
const envInt = (env: NodeJS.ProcessEnv, name: string, max: number, errors: Diagnostic[]): number | undefined => {
  const value = env[name];
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (Number.isInteger(n) && n >= 1 && n <= max) return n;
  const range = max === Number.MAX_SAFE_INTEGER ? '≥ 1' : `from 1 to ${max}`;
  errors.push({
    severity: 'error',
    code: 'config',
    message: `${name}: expected a whole number ${range}, got '${value}'`,
  });
  return undefined;
};

/** `true` or `false`; anything else is an error rather than a silent "no". */
const envBoolean = (env: NodeJS.ProcessEnv, name: string, errors: Diagnostic[]): boolean | undefined => {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  errors.push({ severity: 'error', code: 'config', message: `${name}: expected true or false, got '${value}'` });
  return undefined;
};

export const resolveConfig = async (
  flags: ConfigFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ config: SyncConfig; diagnostics: Diagnostic[] }> => {
  const dir = resolve(cwd, flags.dir ?? env.CORTEX_SYNC_DIR ?? '.');
  const { config: file, diagnostics } = await readConfigFile(dir);
  const sourceId = flags.sourceId ?? env.CORTEX_SYNC_SOURCE_ID ?? file.sourceId ?? (await deriveSourceId(dir, env));
  const envErrors: Diagnostic[] = [];
  const envPrune = envBoolean(env, 'CORTEX_SYNC_PRUNE', envErrors);
  const envConcurrency = envInt(env, 'CORTEX_SYNC_CONCURRENCY', 64, envErrors);
  const envRate = envInt(env, 'CORTEX_RATE_LIMIT', Number.MAX_SAFE_INTEGER, envErrors);
  const envLeaseWait =
    env.CORTEX_SYNC_LEASE_WAIT?.trim() === '0' ? 0 : envInt(env, 'CORTEX_SYNC_LEASE_WAIT', 3600, envErrors);
  const leaseWaitSeconds = envLeaseWait ?? file.leaseWaitSeconds;
  const requestTimeoutSeconds =
    envInt(env, 'CORTEX_SYNC_TIMEOUT', 600, envErrors) ?? file.requestTimeoutSeconds ?? DEFAULT_REQUEST_TIMEOUT_SECONDS;
  const envBaseUrl = env.CORTEX_BASE_URL?.trim() ? env.CORTEX_BASE_URL.trim() : undefined;
  const baseUrl = flags.baseUrl ?? envBaseUrl ?? DEFAULT_BASE_URL;
  const baseUrlProblem = checkBaseUrl(
    baseUrl,
    flags.baseUrl !== undefined ? '--base-url' : envBaseUrl !== undefined ? 'CORTEX_BASE_URL' : 'the default base URL',
  );
  if (baseUrlProblem) envErrors.push(baseUrlProblem);
  const from = (flag: unknown, envValue: unknown, fileValue: unknown) => settingFrom(flags, flag, envValue, fileValue);
  const settingsFrom = Object.fromEntries(
    Object.entries({
      prune: from(flags.prune, envPrune, file.prune),
      pruneEntities: from(undefined, undefined, file.pruneEntities),
      maxDeleteShare: from(undefined, undefined, file.maxDeleteShare),
      maxDeleteCount: from(undefined, undefined, file.maxDeleteCount),
      protect: from(undefined, undefined, file.protect),
      allowMassDelete: from(flags.allowMassDelete, undefined, undefined),
      allowTakeover: from(flags.allowTakeover, undefined, undefined),
    }).filter(([, v]) => v !== undefined),
  );
  return {
    diagnostics: [...diagnostics, ...envErrors],
    config: {
      dir,
      ...(sourceId !== undefined ? { sourceId } : {}),
      baseUrl,
      ...(env.CORTEX_API_KEY ? { apiKey: env.CORTEX_API_KEY } : {}),
      prune: flags.prune ?? envPrune ?? file.prune ?? false,
      pruneEntities: file.pruneEntities ?? 'archive',
      allowMassDelete: flags.allowMassDelete ?? false,
      allowTakeover: flags.allowTakeover ?? false,
      maxDeleteShare: file.maxDeleteShare ?? 0.25,
      ...(file.maxDeleteCount !== undefined ? { maxDeleteCount: file.maxDeleteCount } : {}),
      protect: file.protect ?? [],
      concurrency: flags.concurrency ?? envConcurrency ?? file.concurrency ?? 8,
      requestsPerMinute: flags.requestsPerMinute ?? envRate ?? file.requestsPerMinute ?? 1000,
      forceEntityTypeSchema: flags.forceEntityTypeSchema ?? file.forceEntityTypeSchema ?? false,
      ...(leaseWaitSeconds !== undefined ? { leaseWaitMs: leaseWaitSeconds * 1000 } : {}),
      requestTimeoutMs: requestTimeoutSeconds * 1000,
      origin: env.CORTEX_SYNC_ORIGIN?.trim() || (await deriveOrigin(flags.originDir ?? dir, env)),
      ...(flags.breakLease ? { breakLease: true } : {}),
      settingsFrom,
    },
  };
};
