/**
 * Settings, in order of precedence: command-line flags (or the Action's inputs, or the watcher's
 * settings), environment, `cortex-sync.yaml` at the manifest root (interface.md). The file
 * proposes, the operator decides: a flag or variable that is set, `false` included, beats the
 * file, for every setting. What the file may not decide at all is an error in it
 * (`config-file.ts`): the base URL and forcing a breaking entity-type schema. Of the settings that
 * widen deletes:
 * - `prune` and `pruneEntities` may come from the file (the plan names them and where they came
 *   from); the operator overrides them (`--no-prune`, `CORTEX_SYNC_PRUNE=false`,
 *   `CORTEX_SYNC_PRUNE_ENTITIES=archive`);
 * - the mass-delete guard is the operator's: the file may lower `maxDeleteShare` below the
 *   default, never raise it (a higher value is a warning, and the default applies);
 *   `maxDeleteCount` in the file only adds a limit;
 * - `protect` patterns add up: the file may add patterns, never remove the operator's.
 * `SyncConfig.origins` says where each effective setting came from.
 */
import { resolve } from 'node:path';
import { proxySettingsFrom, type ProxySettings } from '../api/proxy.js';
import type { Diagnostic } from '../core/model.js';
import { DEFAULT_MAX_DELETE_SHARE } from '../core/plan.js';
import { strictly } from '../core/strict.js';
import { excerpt } from '../source/excerpt.js';
import { resolveApiKey } from './api-key.js';
import { CONFIG_FILE, type ConfigFile, type ConfigFileLines, readConfigFile } from './config-file.js';
import { deriveOrigin, deriveSourceId } from './source-id.js';

export { CONFIG_FILE, type ConfigFile, configFileSchema, readConfigFile } from './config-file.js';

export const DEFAULT_BASE_URL = 'https://api.getcortexapp.com';

/** The client's default wait for one answer. */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30;

/** Flags (or Action inputs, or watcher settings) as parsed; undefined = not given, `false` = said no. */
export interface ConfigFlags {
  dir?: string;
  sourceId?: string;
  baseUrl?: string;
  prune?: boolean;
  pruneEntities?: 'archive' | 'delete';
  maxDeleteShare?: number;
  maxDeleteCount?: number;
  /** Added to the environment's and the file's patterns. */
  protect?: string[];
  allowMassDelete?: boolean;
  allowTakeover?: boolean;
  concurrency?: number;
  requestsPerMinute?: number;
  forceEntityTypeSchema?: boolean;
  /** Take the source's apply lease even when another apply holds it (the operator's way out of a stuck lease). */
  breakLease?: boolean;
  /** Every warning is an error (`--strict`). */
  strict?: boolean;
  /** A manifest root with no manifest is a deliberate empty repository, not a mistyped folder (`--allow-empty`). */
  allowEmpty?: boolean;
  /** What these flags are, in the plan's header: command-line flags (default), Action inputs or watcher settings. */
  from?: 'flag' | 'input' | 'setting';
  /** The folder whose identity is the run's origin when it is not `dir` (a watched `--dir` whose symlink moves). */
  originDir?: string;
}

/**
 * What an operator says for a run, by the same names in every runtime: the CLI's and the
 * watcher's flags, the Action's inputs. Undefined or '' = not said; `false` = said no (and beats
 * the environment and the file).
 */
export type OperatorSettings = Omit<ConfigFlags, 'from' | 'originDir'>;

/** What a runtime hands `configureRun`. */
export interface RunSettings {
  said: OperatorSettings;
  /** What the settings are, for the plan's header: command-line flags (default) or Action inputs. */
  from?: 'flag' | 'input' | 'setting';
  /** The API key given as a setting (the Action's `api-key` input): used as `CORTEX_API_KEY`. */
  apiKey?: string;
  /** The folder whose identity is the run's origin when it is not `dir` (a watched `--dir`). */
  originDir?: string;
}

/** The flags of `said`: what was not said (undefined, '') left out, `false` kept. */
const flagsOf = (settings: RunSettings): ConfigFlags => {
  const said = Object.fromEntries(
    Object.entries(settings.said).filter(([, value]) => value !== undefined && value !== ''),
  ) as OperatorSettings;
  return {
    ...said,
    ...(settings.from !== undefined ? { from: settings.from } : {}),
    ...(settings.originDir !== undefined ? { originDir: settings.originDir } : {}),
  };
};

/**
 * The one place every runtime's configuration is built (the CLI's commands, the watcher's runs, the
 * Action, `export`): what the operator said, then the environment, then `cortex-sync.yaml`, then
 * the defaults (`resolveConfig`).
 */
export const configureRun = (
  settings: RunSettings,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ config: SyncConfig; diagnostics: Diagnostic[] }> =>
  resolveConfig(flagsOf(settings), settings.apiKey ? { ...env, CORTEX_API_KEY: settings.apiKey } : env, cwd);

/** Who decided a setting. */
export type SettingOrigin = 'flag' | 'environment' | 'file' | 'default';

export interface SettingSource {
  origin: SettingOrigin;
  /** How it was said: `--prune`, `CORTEX_SYNC_PRUNE`, `cortex-sync.yaml:3`, `default`. */
  name: string;
}

/** Settings whose origin is recorded. */
export type OriginSetting =
  | 'sourceId'
  | 'baseUrl'
  | 'apiKey'
  | 'prune'
  | 'pruneEntities'
  | 'allowMassDelete'
  | 'allowTakeover'
  | 'maxDeleteShare'
  | 'maxDeleteCount'
  | 'protect'
  | 'concurrency'
  | 'requestsPerMinute'
  | 'forceEntityTypeSchema'
  | 'leaseWaitMs'
  | 'requestTimeoutMs'
  | 'strict';

export type ConfigOrigins = Record<OriginSetting, SettingSource>;

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
  /**
   * Where each effective setting came from (flag, environment, file with its line, default), for
   * the plan's header. Set by `resolveConfig`; absent in configurations built by hand (tests).
   */
  origins?: ConfigOrigins;
  /** What the `flag` settings of `origins` were: command-line flags, Action inputs or watcher settings. */
  flagsAre?: 'flag' | 'input' | 'setting';
  /**
   * Where this run comes from, bound to the source id at its first apply (`engine/source-id.ts`;
   * not to be confused with `origins`, where each setting came from). Set by `resolveConfig`.
   */
  origin?: string;
  /** Take the apply lease even when another apply holds it. */
  breakLease?: boolean;
  /** The proxy from `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` (undefined: none). */
  proxy?: ProxySettings;
  /**
   * Every warning is an error: of the manifests, the references, the plan and the settings
   * (`--strict`, `CORTEX_SYNC_STRICT`, `strict` in the file or the Action's input). Absent: false.
   */
  strict?: boolean;
  /** A manifest root with no manifest is not an error (`--allow-empty`; see `source/unowned.ts`). */
  allowEmpty?: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);
const isLoopback = (hostname: string): boolean =>
  LOOPBACK_HOSTS.has(hostname.toLowerCase()) || /^127(?:\.\d{1,3}){3}$/.test(hostname);

/**
 * Where the key may go: `https`, or plain `http` only to a loopback host (an emulator, a local
 * proxy); no credentials, query or fragment in the URL, and no `/api/v1` the client adds itself.
 * `origin` names the setting for the message.
 */
export const checkBaseUrl = (value: string, origin: string): Diagnostic | undefined => {
  const fail = (why: string): Diagnostic => ({ severity: 'error', code: 'config', message: `${origin}: ${why}` });
  // `127.0.0.1:8787`, `localhost:8787`, `api.example.com`: a host without its scheme.
  const schemeless = !/^[a-z][a-z0-9+.-]*:\/\//i.test(value);
  const withScheme = (): string | undefined => {
    try {
      const guess = new URL(`https://${value}`);
      return `${isLoopback(guess.hostname) ? 'http' : 'https'}://${value}`;
    } catch {
      return undefined;
    }
  };
  const suggestion = schemeless ? withScheme() : undefined;
  if (suggestion !== undefined) return fail(`'${excerpt(value)}' has no scheme; did you mean ${excerpt(suggestion)}?`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail('not a valid URL');
  }
  if (url.username !== '' || url.password !== '') return fail('a base URL must not hold credentials');
  if (url.protocol === 'http:' && !isLoopback(url.hostname))
    return fail(
      `plain http sends the API key unencrypted; use https (http is allowed only to 127.0.0.1, localhost or [::1])`,
    );
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return fail(`expected an https URL, got the scheme ${url.protocol.replace(/:$/, '')}`);
  if (url.search !== '' || url.hash !== '') return fail('a base URL must not hold a query string or a fragment');
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/api\/v1$/i.test(path))
    return fail(
      `it ends in /api/v1, which cortex-sync adds to every request itself (each would go to …/api/v1/api/v1/… and fail with 404): use ${url.origin}${path.replace(/\/api\/v1$/i, '')}`,
    );
  return undefined;
};

/** The environment's settings, each checked like its file counterpart; a bad value is an error naming the variable. */
const environmentReader = (env: NodeJS.ProcessEnv, errors: Diagnostic[]) => {
  /** The trimmed value; blank counts as unset. */
  const text = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const fail = (name: string, expected: string, value: string): undefined => {
    errors.push({
      severity: 'error',
      code: 'config',
      message: `${name}: expected ${expected}, got '${excerpt(value)}'`,
    });
    return undefined;
  };
  return {
    text,
    int: (name: string, min: number, max: number): number | undefined => {
      const value = text(name);
      if (value === undefined) return undefined;
      const n = Number(value);
      if (Number.isInteger(n) && n >= min && n <= max) return n;
      const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
      return fail(name, `a whole number ${range}`, value);
    },
    share: (name: string): number | undefined => {
      const value = text(name);
      if (value === undefined) return undefined;
      const n = Number(value);
      return Number.isFinite(n) && n >= 0 && n <= 1 ? n : fail(name, 'a number from 0 to 1', value);
    },
    /** `true` or `false`; anything else is an error rather than a silent "no". */
    boolean: (name: string): boolean | undefined => {
      const value = text(name);
      if (value === undefined) return undefined;
      return value === 'true' || value === 'false' ? value === 'true' : fail(name, 'true or false', value);
    },
    choice: <T extends string>(name: string, choices: readonly T[]): T | undefined => {
      const value = text(name);
      if (value === undefined) return undefined;
      return (choices as readonly string[]).includes(value) ? (value as T) : fail(name, choices.join(' or '), value);
    },
    /** Comma-separated, blanks dropped. */
    list: (name: string): string[] | undefined =>
      text(name)
        ?.split(',')
        .map((p) => p.trim())
        .filter((p) => p !== ''),
  };
};

interface Choice<T> {
  value: T | undefined;
  source: SettingSource;
}

/** The first candidate that is set (flag, environment, file, in that order), else the default. */
const decide = <T, F extends T | undefined = T>(
  candidates: readonly Choice<T>[],
  fallback: { value: F; source: SettingSource },
): { value: T | F; source: SettingSource } => {
  for (const c of candidates) if (c.value !== undefined) return { value: c.value, source: c.source };
  return fallback;
};

const flag = (name: string): SettingSource => ({ origin: 'flag', name });
const variable = (name: string): SettingSource => ({ origin: 'environment', name });
const DEFAULT: SettingSource = { origin: 'default', name: 'default' };

export const resolveConfig = async (
  flags: ConfigFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ config: SyncConfig; diagnostics: Diagnostic[] }> => {
  const envErrors: Diagnostic[] = [];
  const read = environmentReader(env, envErrors);
  const dir = resolve(cwd, flags.dir ?? read.text('CORTEX_SYNC_DIR') ?? '.');
  const { config: file, diagnostics, lines } = await readConfigFile(dir);
  const inFile = (key: keyof ConfigFile): SettingSource => ({ origin: 'file', name: fileLine(lines, key) });
  const fromFile = <K extends keyof ConfigFile>(key: K): Choice<NonNullable<ConfigFile[K]>> => ({
    value: file[key] as NonNullable<ConfigFile[K]> | undefined,
    source: inFile(key),
  });

  const explicitSourceId = decide(
    [
      { value: flags.sourceId, source: flag('--source-id') },
      { value: read.text('CORTEX_SYNC_SOURCE_ID'), source: variable('CORTEX_SYNC_SOURCE_ID') },
      fromFile('sourceId'),
    ],
    { value: undefined, source: { origin: 'default', name: 'derived from GITHUB_REPOSITORY or the git remote' } },
  );
  const sourceId = explicitSourceId.value ?? (await deriveSourceId(dir, env));

  const envBaseUrl = read.text('CORTEX_BASE_URL');
  const baseUrl = decide(
    [
      { value: flags.baseUrl, source: flag('--base-url') },
      { value: envBaseUrl, source: variable('CORTEX_BASE_URL') },
    ],
    { value: DEFAULT_BASE_URL, source: DEFAULT },
  );
  const baseUrlProblem = checkBaseUrl(
    baseUrl.value,
    baseUrl.source.origin === 'default'
      ? 'the default base URL'
      : baseUrl.source.origin === 'flag' && flags.from === 'input'
        ? 'input `base-url`'
        : baseUrl.source.name,
  );
  if (baseUrlProblem) envErrors.push(baseUrlProblem);

  const proxy = proxySettingsFrom(env);
  for (const message of proxy.problems) envErrors.push({ severity: 'error', code: 'config', message });

  const key = resolveApiKey(env, { manifestRoot: dir, cwd });
  envErrors.push(...key.diagnostics);

  const prune = decide(
    [
      { value: flags.prune, source: flag(flags.prune === false ? '--no-prune' : '--prune') },
      { value: read.boolean('CORTEX_SYNC_PRUNE'), source: variable('CORTEX_SYNC_PRUNE') },
      fromFile('prune'),
    ],
    { value: false, source: DEFAULT },
  );
  const pruneEntities = decide(
    [
      { value: flags.pruneEntities, source: flag('--prune-entities') },
      {
        value: read.choice('CORTEX_SYNC_PRUNE_ENTITIES', ['archive', 'delete'] as const),
        source: variable('CORTEX_SYNC_PRUNE_ENTITIES'),
      },
      fromFile('pruneEntities'),
    ],
    { value: 'archive' as const, source: DEFAULT },
  );
  const maxDeleteShare = decide(
    [
      { value: flags.maxDeleteShare, source: flag('--max-delete-share') },
      { value: read.share('CORTEX_SYNC_MAX_DELETE_SHARE'), source: variable('CORTEX_SYNC_MAX_DELETE_SHARE') },
      { value: fileShare(file, lines, diagnostics), source: inFile('maxDeleteShare') },
    ],
    { value: DEFAULT_MAX_DELETE_SHARE, source: DEFAULT },
  );
  const maxDeleteCount = decide(
    [
      { value: flags.maxDeleteCount, source: flag('--max-delete-count') },
      {
        value: read.int('CORTEX_SYNC_MAX_DELETE_COUNT', 0, Number.MAX_SAFE_INTEGER),
        source: variable('CORTEX_SYNC_MAX_DELETE_COUNT'),
      },
      fromFile('maxDeleteCount'),
    ],
    { value: undefined, source: DEFAULT },
  );
  const protect = protectPatterns(flags.protect, read.list('CORTEX_SYNC_PROTECT'), file.protect, lines);
  const concurrency = decide(
    [
      { value: flags.concurrency, source: flag('--concurrency') },
      { value: read.int('CORTEX_SYNC_CONCURRENCY', 1, 64), source: variable('CORTEX_SYNC_CONCURRENCY') },
      fromFile('concurrency'),
    ],
    { value: 8, source: DEFAULT },
  );
  const requestsPerMinute = decide(
    [
      { value: flags.requestsPerMinute, source: flag('--requests-per-minute') },
      { value: read.int('CORTEX_RATE_LIMIT', 1, Number.MAX_SAFE_INTEGER), source: variable('CORTEX_RATE_LIMIT') },
      fromFile('requestsPerMinute'),
    ],
    { value: 1000, source: DEFAULT },
  );
  const forceEntityTypeSchema = decide(
    [
      { value: flags.forceEntityTypeSchema, source: flag('--force-entity-type-schema') },
      {
        value: read.boolean('CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA'),
        source: variable('CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA'),
      },
    ],
    { value: false, source: DEFAULT },
  );
  const leaseWaitSeconds = decide(
    [
      { value: read.int('CORTEX_SYNC_LEASE_WAIT', 0, 3600), source: variable('CORTEX_SYNC_LEASE_WAIT') },
      fromFile('leaseWaitSeconds'),
    ],
    { value: undefined, source: DEFAULT },
  );
  const requestTimeoutSeconds = decide(
    [
      { value: read.int('CORTEX_SYNC_TIMEOUT', 1, 600), source: variable('CORTEX_SYNC_TIMEOUT') },
      fromFile('requestTimeoutSeconds'),
    ],
    { value: DEFAULT_REQUEST_TIMEOUT_SECONDS, source: DEFAULT },
  );
  const strict = decide(
    [
      { value: flags.strict, source: flag(flags.strict === false ? '--no-strict' : '--strict') },
      { value: read.boolean('CORTEX_SYNC_STRICT'), source: variable('CORTEX_SYNC_STRICT') },
      fromFile('strict'),
    ],
    { value: false, source: DEFAULT },
  );
  const allowMassDelete = decide([{ value: flags.allowMassDelete, source: flag('--allow-mass-delete') }], {
    value: false,
    source: DEFAULT,
  });
  const allowTakeover = decide([{ value: flags.allowTakeover, source: flag('--allow-takeover') }], {
    value: false,
    source: DEFAULT,
  });

  const origins: ConfigOrigins = {
    sourceId: explicitSourceId.source,
    baseUrl: baseUrl.source,
    apiKey: key.from !== undefined ? variable(key.from) : { origin: 'default', name: 'not set' },
    prune: prune.source,
    pruneEntities: pruneEntities.source,
    allowMassDelete: allowMassDelete.source,
    allowTakeover: allowTakeover.source,
    maxDeleteShare: maxDeleteShare.source,
    maxDeleteCount: maxDeleteCount.source,
    protect: protect.source,
    concurrency: concurrency.source,
    requestsPerMinute: requestsPerMinute.source,
    forceEntityTypeSchema: forceEntityTypeSchema.source,
    leaseWaitMs: leaseWaitSeconds.source,
    requestTimeoutMs: requestTimeoutSeconds.source,
    strict: strict.source,
  };
  return {
    diagnostics: strictly([...diagnostics, ...envErrors], strict.value),
    config: {
      dir,
      ...(sourceId !== undefined ? { sourceId } : {}),
      baseUrl: baseUrl.value,
      ...(key.apiKey !== undefined ? { apiKey: key.apiKey } : {}),
      prune: prune.value,
      pruneEntities: pruneEntities.value,
      allowMassDelete: allowMassDelete.value,
      allowTakeover: allowTakeover.value,
      maxDeleteShare: maxDeleteShare.value,
      ...(maxDeleteCount.value !== undefined ? { maxDeleteCount: maxDeleteCount.value } : {}),
      protect: protect.value,
      concurrency: concurrency.value,
      requestsPerMinute: requestsPerMinute.value,
      forceEntityTypeSchema: forceEntityTypeSchema.value,
      ...(leaseWaitSeconds.value !== undefined ? { leaseWaitMs: leaseWaitSeconds.value * 1000 } : {}),
      requestTimeoutMs: requestTimeoutSeconds.value * 1000,
      origins,
      ...(flags.from !== undefined ? { flagsAre: flags.from } : {}),
      origin: read.text('CORTEX_SYNC_ORIGIN') ?? (await deriveOrigin(flags.originDir ?? dir, env)),
      ...(flags.breakLease ? { breakLease: true } : {}),
      ...(proxy.settings ? { proxy: proxy.settings } : {}),
      ...(strict.value ? { strict: true } : {}),
      ...(flags.allowEmpty ? { allowEmpty: true } : {}),
    },
  };
};

/** `cortex-sync.yaml:3`, or the file alone when the line is not known. */
const fileLine = (lines: ConfigFileLines, key: keyof ConfigFile): string =>
  lines[key] !== undefined ? `${CONFIG_FILE}:${lines[key]}` : CONFIG_FILE;

/**
 * The file's `maxDeleteShare` when it tightens the guard; a value above the default is a warning
 * (only the operator may loosen the guard) and is not used.
 */
const fileShare = (file: ConfigFile, lines: ConfigFileLines, diagnostics: Diagnostic[]): number | undefined => {
  const share = file.maxDeleteShare;
  if (share === undefined || share <= DEFAULT_MAX_DELETE_SHARE) return share;
  const percent = (n: number) => `${Math.round(n * 1000) / 10} %`;
  diagnostics.push({
    severity: 'warning',
    code: 'config',
    message: `maxDeleteShare ${share} in ${CONFIG_FILE} would raise the mass-delete guard above ${percent(DEFAULT_MAX_DELETE_SHARE)}; a repository file may only lower it, so ${percent(DEFAULT_MAX_DELETE_SHARE)} applies (the operator raises it with CORTEX_SYNC_MAX_DELETE_SHARE, or passes --allow-mass-delete for one run)`,
    file: CONFIG_FILE,
    line: lines.maxDeleteShare ?? 1,
    column: 1,
    field: 'maxDeleteShare',
  });
  return undefined;
};

/** Every pattern of the flag, the environment and the file (the file adds, never removes). */
const protectPatterns = (
  fromFlag: readonly string[] | undefined,
  fromEnv: readonly string[] | undefined,
  fromFile: readonly string[] | undefined,
  lines: ConfigFileLines,
): { value: string[]; source: SettingSource } => {
  const value = [...new Set([...(fromFlag ?? []), ...(fromEnv ?? []), ...(fromFile ?? [])])];
  const names = [
    ...(fromFlag?.length ? ['--protect'] : []),
    ...(fromEnv?.length ? ['CORTEX_SYNC_PROTECT'] : []),
    ...(fromFile?.length ? [fileLine(lines, 'protect')] : []),
  ];
  const origin: SettingOrigin = fromFlag?.length
    ? 'flag'
    : fromEnv?.length
      ? 'environment'
      : fromFile?.length
        ? 'file'
        : 'default';
  return { value, source: { origin, name: names.length > 0 ? names.join(' + ') : 'default' } };
};
