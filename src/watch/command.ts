/**
 * `cortex-sync watch`: flags and environment → a running watcher; prints
 * `listening on http://HOST:PORT` as its first stdout line, then JSON log lines; on SIGTERM or
 * SIGINT stops within `--shutdown-timeout` and exits 0.
 */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '../core/errors.js';
import { resolveApiKey } from '../engine/api-key.js';
import { type ConfigFlags, resolveConfig } from '../engine/config.js';
import type { CliIo } from '../cli/io.js';
import { createDirSource } from './dir-source.js';
import { DurationError, parseDuration } from './duration.js';
import { createGitSource, type GitAuth, gitAuthSecrets, readSecretFile, remoteSecrets } from './git-source.js';
import { createLogger } from './log.js';
import type { Source } from './source.js';
import { startWatcher } from './watcher.js';

export interface WatchFlags {
  repo?: string;
  branch?: string;
  path?: string;
  dir?: string;
  listen: string;
  interval: number;
  healInterval: number;
  shutdownTimeout: number;
  backoff: number;
  cacheDir?: string;
  planLog?: string;
  prune?: boolean;
  allowMassDelete?: boolean;
  allowTakeover?: boolean;
  sourceId?: string;
  baseUrl?: string;
  concurrency?: number;
}

const duration = (value: string): number => {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof DurationError ? error.message : String(error));
  }
};

const concurrency = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError('expected a whole number from 1 to 64');
  return n;
};

/** `HOST:PORT`, `[::1]:PORT` or `:PORT` (all interfaces). */
export const parseListen = (value: string): { host: string; port: number } => {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value.trim());
  const port = Number(match?.[3]);
  if (!match || !Number.isInteger(port) || port > 65535) {
    throw new InvalidArgumentError(`expected HOST:PORT such as 0.0.0.0:8080 or 127.0.0.1:0, got '${value}'`);
  }
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
};

/** A secret from the environment, or from the file an `…_FILE` variable names (a mounted Secret). */
const secretFromEnv = async (env: NodeJS.ProcessEnv, name: string): Promise<string | undefined> => {
  if (env[name]) return env[name];
  const file = env[`${name}_FILE`];
  if (!file) return undefined;
  try {
    return await readSecretFile(file);
  } catch (error) {
    throw new ConfigError(`${name}_FILE: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
};

const syncFlags = (o: WatchFlags, dir: string): ConfigFlags => ({
  dir,
  ...(o.sourceId !== undefined ? { sourceId: o.sourceId } : {}),
  ...(o.baseUrl !== undefined ? { baseUrl: o.baseUrl } : {}),
  ...(o.prune ? { prune: true } : {}),
  ...(o.allowMassDelete ? { allowMassDelete: true } : {}),
  ...(o.allowTakeover ? { allowTakeover: true } : {}),
  ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
});

export const runWatch = async (o: WatchFlags, io: CliIo): Promise<number> => {
  if (Boolean(o.repo) === Boolean(o.dir)) throw new ConfigError('watch needs exactly one of --repo URL or --dir DIR');
  const cacheDir = resolve(io.cwd, o.cacheDir ?? io.env.CORTEX_SYNC_CACHE_DIR ?? join(tmpdir(), 'cortex-sync-watch'));
  // CORTEX_API_KEY or CORTEX_API_KEY_FILE, outside what the repository controls (its checkout or --dir).
  const key = resolveApiKey(io.env, { manifestRoot: o.repo ? cacheDir : resolve(io.cwd, o.dir ?? '.'), cwd: io.cwd });
  if (key.diagnostics.length > 0) throw new ConfigError(key.diagnostics.map((d) => d.message).join('; '));
  const apiKey = key.apiKey;
  if (!apiKey)
    throw new ConfigError('CORTEX_API_KEY (or CORTEX_API_KEY_FILE) is not set: watch applies to the live workspace');
  const listen = parseListen(o.listen);
  const webhookSecret = await secretFromEnv(io.env, 'CORTEX_SYNC_WEBHOOK_SECRET');
  const auth: GitAuth = {};
  const token = await secretFromEnv(io.env, 'CORTEX_SYNC_GIT_TOKEN');
  if (token) auth.token = token;
  if (io.env.CORTEX_SYNC_SSH_KEY_FILE) auth.sshKeyFile = io.env.CORTEX_SYNC_SSH_KEY_FILE;
  if (io.env.CORTEX_SYNC_SSH_KNOWN_HOSTS_FILE) auth.sshKnownHostsFile = io.env.CORTEX_SYNC_SSH_KNOWN_HOSTS_FILE;

  const secrets = [apiKey, webhookSecret ?? '', ...gitAuthSecrets(auth), ...(o.repo ? remoteSecrets(o.repo) : [])];
  const logger = createLogger({ write: (line) => io.stdout.write(line), secrets });
  const source: Source = o.repo
    ? createGitSource({
        url: o.repo,
        ...(o.branch ? { branch: o.branch } : {}),
        ...(o.path ? { path: o.path } : {}),
        cacheDir,
        intervalMs: o.interval,
        auth,
        env: io.env,
      })
    : createDirSource({ dir: resolve(io.cwd, o.dir ?? '.') });

  const watcher = await startWatcher({
    source,
    resolveConfig: (dir) => resolveConfig(syncFlags(o, dir), io.env, io.cwd),
    apiKey,
    host: listen.host,
    port: listen.port,
    healIntervalMs: o.healInterval,
    ...(webhookSecret ? { webhookSecret } : {}),
    ...(o.branch ? { branch: o.branch } : {}),
    planLogFile: resolve(io.cwd, o.planLog ?? join(cacheDir, 'plan-log.jsonl')),
    logger,
    backoff: { baseMs: Math.max(1, o.backoff) },
    onListening: (url) => {
      io.stdout.write(`listening on ${url}\n`);
      logger.info('watching', {
        source: source.description,
        interval: o.repo ? o.interval : undefined,
        healInterval: o.healInterval,
        webhooks: Boolean(webhookSecret),
      });
    },
  });
  await (io.untilStopped?.() ?? new Promise<void>(() => {}));
  await watcher.stop(o.shutdownTimeout);
  return 0;
};

/** Adds `watch` to the program; `done` receives the exit code. */
export const registerWatchCommand = (program: Command, io: CliIo, done: (code: number) => void): void => {
  program
    .command('watch')
    .description(
      'keep the workspace in sync with a git branch (or a local directory); serves health, metrics, webhooks',
    )
    .option('--repo <url>', 'git remote to follow (https://, ssh://, git@host:, file://)')
    .option('--branch <name>', 'branch to follow (default: the remote default branch)')
    .option('--path <path>', 'manifest root inside the repository')
    .option('--dir <dir>', 'follow a local directory instead of a remote')
    .option('--listen <host:port>', 'address of the health, metrics and webhook port', '0.0.0.0:8080')
    .addOption(
      new Option('--interval <duration>', 'how often to fetch the branch (0 = webhooks only)')
        .argParser(duration)
        .default(60_000, '1m'),
    )
    .addOption(
      new Option('--heal-interval <duration>', 're-plan and put back drift this often (0 = off)')
        .argParser(duration)
        .default(600_000, '10m'),
    )
    .addOption(
      new Option('--shutdown-timeout <duration>', 'on SIGTERM, wait this long for in-flight work')
        .argParser(duration)
        .default(30_000, '30s'),
    )
    .addOption(
      new Option('--backoff <duration>', 'first retry delay after a failed run (doubles, up to 5m)')
        .argParser(duration)
        .default(5000, '5s'),
    )
    .option('--cache-dir <dir>', 'working copy and plan log (env CORTEX_SYNC_CACHE_DIR; default a temp directory)')
    .option('--plan-log <file>', 'JSON Lines log of every API operation (default <cache-dir>/plan-log.jsonl)')
    .option('--prune', 'remove objects this repository manages whose manifests are gone')
    .option('--allow-mass-delete', 'allow a prune above the configured share or count of managed objects')
    .option('--allow-takeover', 'take over objects another source id manages')
    .option('--source-id <id>', 'identifies this repository in the ownership records')
    .option('--base-url <url>', 'API base address (env CORTEX_BASE_URL)')
    .option('--concurrency <n>', 'changes applied at once (1–64)', concurrency)
    .action(async (o: WatchFlags) => {
      done(await runWatch(o, io));
    });
};
