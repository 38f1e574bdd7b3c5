/**
 * Settings, in order of precedence: command-line flags (or the Action's inputs, or the watcher's
 * settings), environment, `cortex-sync.yaml` at the manifest root (the README's settings table). The file
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
import type { AnySettingSpec } from '../core/settings.js';
import { strictly } from '../core/strict.js';
import { excerpt } from '../source/excerpt.js';
import { resolveApiKey } from './api-key.js';
import { readConfigFile } from './config-file.js';
import { type Decided, decideSetting, type SettingSource } from './settings-resolve.js';
import { SETTINGS } from './settings.js';
import { deriveOrigin, deriveSourceId } from './source-id.js';

export { CONFIG_FILE, type ConfigFile, configFileSchema, readConfigFile } from './config-file.js';
export { DEFAULT_BASE_URL } from '../api/request-parts.js';
export { DEFAULT_REQUEST_TIMEOUT_SECONDS } from './settings.js';
export type { SettingOrigin, SettingSource } from './settings-resolve.js';

/** Flags (or Action inputs, or watcher settings) as parsed; undefined = not given, `false` = said no. */
export interface ConfigFlags {
  dir?: string;
  sourceId?: string;
  baseUrl?: string;
  prune?: boolean;
  pruneEntities?: 'archive' | 'delete';
  entityWrites?: 'replace' | 'merge';
  forceConflicts?: boolean;
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
  /** What a heal does with drift (`--on-drift`). */
  onDrift?: 'heal' | 'pr' | 'report';
  /** What these flags are, in the plan's header: command-line flags (default), Action inputs or watcher settings. */
  from?: 'flag' | 'input' | 'setting';
  /** The folder whose identity is the run's origin when it is not `dir` (a watched `--dir` whose symlink moves). */
  originDir?: string;
  /** A kind's own setting (its folder's `settings`), by its key. */
  [key: string]: unknown;
}

/**
 * What an operator says for a run, by the same names in every runtime: the CLI's and the
 * watcher's flags, the Action's inputs. Undefined or '' = not said; `false` = said no (and beats
 * the environment and the file).
 */
export type OperatorSettings = Omit<ConfigFlags, 'from' | 'originDir'>;

/** What a runtime hands `configureRun`. */
interface RunSettings {
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
  const said: OperatorSettings = Object.fromEntries(
    Object.entries(settings.said).filter(([, value]) => value !== undefined && value !== ''),
  );
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

/** Settings whose origin is recorded. */
type OriginSetting =
  | 'sourceId'
  | 'baseUrl'
  | 'apiKey'
  | 'prune'
  | 'pruneEntities'
  | 'entityWrites'
  | 'forceConflicts'
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
  | 'strict'
  | 'dir'
  | 'origin'
  | 'breakLease'
  | 'allowEmpty'
  | 'onDrift';

/** Where each setting of the table came from, by its configuration field (a kind's own setting too, by its key). */
export type ConfigOrigins = Record<OriginSetting, SettingSource>;

export interface SyncConfig {
  dir: string;
  /** Undefined when none is set and none can be derived (plan/apply then refuse). */
  sourceId?: string;
  baseUrl: string;
  apiKey?: string;
  prune: boolean;
  pruneEntities: 'archive' | 'delete';
  /** How entities are written: the whole descriptor (`replace`) or only the declared keys (`merge`, ADR 0004). */
  entityWrites?: 'replace' | 'merge';
  /** In merge mode, take over keys another source declares (`--force-conflicts`; never from the file). */
  forceConflicts?: boolean;
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
  /**
   * What a heal does with drift (`--on-drift`, `onDrift` in the file, the Action's `on-drift`):
   * `heal` puts git's values back, `pr` proposes the live values as a pull request, `report` only
   * says so. Absent: heal.
   */
  onDrift?: 'heal' | 'pr' | 'report';
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);
const isLoopback = (hostname: string): boolean =>
  LOOPBACK_HOSTS.has(hostname.toLowerCase()) || /^127(?:\.\d{1,3}){3}$/.test(hostname);

/**
 * Where the key may go: `https`, or plain `http` only to a loopback host (an emulator, a local
 * proxy); no credentials, query or fragment in the URL, and no `/api/v1` the client adds itself.
 * `origin` names the setting for the message.
 */
const checkBaseUrl = (value: string, origin: string): Diagnostic | undefined => {
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

const configError = (message: string): Diagnostic => ({ severity: 'error', code: 'config', message });

/** The base URL's problem, naming where it was said (`input \`base-url\`` under the Action). */
const baseUrlProblem = (decided: Decided, flags: ConfigFlags): Diagnostic | undefined =>
  checkBaseUrl(
    String(decided.value),
    decided.source.origin === 'default'
      ? 'the default base URL'
      : decided.source.origin === 'flag' && flags.from === 'input'
        ? 'input `base-url`'
        : decided.source.name,
  );

/** The decided values as configuration fields (seconds scaled to ms; unset and omitted defaults left out). */
const asConfig = (table: readonly AnySettingSpec[], decided: ReadonlyMap<string, Decided>) => {
  const fields: Record<string, unknown> = {};
  const origins: Record<string, SettingSource> = {};
  for (const spec of table) {
    const { value, source } = decided.get(spec.key) ?? {
      value: undefined,
      source: { origin: 'default', name: 'default' },
    };
    const field = spec.config?.key ?? spec.key;
    origins[field] = source;
    if (value === undefined || (spec.omitDefault && value === spec.default)) continue;
    fields[field] = spec.config && typeof value === 'number' ? value * spec.config.scale : value;
  }
  return { fields, origins };
};

/**
 * The run's configuration from the table of settings (`engine/settings.ts`): each decided by
 * `decideSetting` (flag > environment > file as its rule allows > default), then what is derived
 * (the source id and origin when unset, the API key, the proxy). `table` is the registry's unless
 * a test hands in its own kinds' settings.
 */
export const resolveConfig = async (
  flags: ConfigFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
  table: readonly AnySettingSpec[] = SETTINGS,
): Promise<{ config: SyncConfig; diagnostics: Diagnostic[] }> => {
  const problems: Diagnostic[] = [];
  const inputs = { flags, env, file: {}, lines: {} };
  const dirSpec = table.find((spec) => spec.key === 'dir');
  const saidDir = dirSpec && decideSetting(dirSpec, inputs, problems).value;
  const dir = resolve(cwd, typeof saidDir === 'string' ? saidDir : '.');
  const { config: file, diagnostics, lines } = await readConfigFile(dir, table);
  const decided = new Map<string, Decided>();
  for (const spec of table) decided.set(spec.key, decideSetting(spec, { flags, env, file, lines }, diagnostics));
  decided.set('dir', { value: dir, source: decided.get('dir')?.source ?? { origin: 'default', name: 'default' } });
  const sourceId = decided.get('sourceId');
  if (sourceId && sourceId.value === undefined)
    decided.set('sourceId', {
      value: await deriveSourceId(dir, env),
      source: { origin: 'default', name: 'derived from GITHUB_REPOSITORY or the git remote' },
    });
  const baseUrl = decided.get('baseUrl');
  const badUrl = baseUrl && baseUrlProblem(baseUrl, flags);
  if (badUrl) problems.push(badUrl);
  const proxy = proxySettingsFrom(env);
  problems.push(...proxy.problems.map(configError));
  const key = resolveApiKey(env, { manifestRoot: dir, cwd });
  problems.push(...key.diagnostics);
  const { fields, origins } = asConfig(table, decided);
  origins.apiKey =
    key.from !== undefined ? { origin: 'environment', name: key.from } : { origin: 'default', name: 'not set' };
  const strict = decided.get('strict')?.value === true;
  const config = {
    ...fields,
    ...(key.apiKey !== undefined ? { apiKey: key.apiKey } : {}),
    origins: origins as ConfigOrigins,
    ...(flags.from !== undefined ? { flagsAre: flags.from } : {}),
    origin: (fields.origin as string | undefined) ?? (await deriveOrigin(flags.originDir ?? dir, env)),
    ...(proxy.settings ? { proxy: proxy.settings } : {}),
  } as SyncConfig;
  return { diagnostics: strictly([...diagnostics, ...problems], strict), config };
};
