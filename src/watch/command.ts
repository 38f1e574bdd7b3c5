/**
 * `cortex-sync watch`: flags and environment → a running watcher; prints
 * `listening on http://HOST:PORT` as its first stdout line, then JSON log lines; on SIGTERM or
 * SIGINT stops within `--shutdown-timeout` and exits 0. Each source gets a folder of its own in
 * the cache directory (its checkout, its plan log), locked while this process uses it.
 */
import { realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '../core/errors.js';
import { requireApiKey } from '../engine/api-client.js';
import { resolveApiKey, resolveSecret } from '../engine/api-key.js';
import { systemClock } from '../engine/context.js';
import { configureRun, type OperatorSettings } from '../engine/config.js';
import { type CliIo, manifestRootProblems } from '../runtime-io/io.js';
import { createDirSource } from './dir-source.js';
import { DurationError, formatDuration, parseDuration } from './duration.js';
import {
  createGitSource,
  describeRemote,
  type GitAuth,
  gitAuthSecrets,
  remoteSecrets,
  urlCredentials,
} from './git-source.js';
import { DEFAULT_LISTEN, ListenSyntaxError, parseListen } from './listen.js';
import { createLogger } from './log.js';
import { systemProcessProbe } from './process-identity.js';
import { ListenError } from './server.js';
import type { Source } from './source.js';
import { dirSourceFolder, gitSourceFolder } from './source-folder.js';
import { acquireSourceLock, describeHolder, type LockRecord } from './source-lock.js';
import { DEFAULT_LEASE_LINGER_MS, DEFAULT_PRUNE_SETTLE_MS, startWatcher } from './watcher.js';

export interface WatchFlags {
  repo?: string;
  branch?: string;
  path?: string;
  dir?: string;
  /** Default: `CORTEX_SYNC_LISTEN`, else 127.0.0.1:8080. */
  listen?: string;
  interval: number;
  healInterval: number;
  shutdownTimeout: number;
  backoff: number;
  pruneSettle?: number;
  leaseLinger?: number;
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

/** Checked as commander parses it, so a bad value is an error naming the flag. */
const listenFlag = (value: string): string => {
  try {
    parseListen(value);
    return value;
  } catch (error) {
    throw new InvalidArgumentError(error instanceof ListenSyntaxError ? error.message : String(error));
  }
};

/** What the flags say for every run, by the names every runtime uses (`engine/config.ts`). */
const settingsOf = (o: WatchFlags, dir: string): OperatorSettings => ({
  dir,
  sourceId: o.sourceId,
  baseUrl: o.baseUrl,
  prune: o.prune,
  allowMassDelete: o.allowMassDelete,
  allowTakeover: o.allowTakeover,
  concurrency: o.concurrency,
});

/** The listen address and where it came from, for messages. */
const listenSetting = (o: WatchFlags, env: NodeJS.ProcessEnv): { value: string; named: string } => {
  if (o.listen !== undefined) return { value: o.listen, named: '--listen' };
  if (env.CORTEX_SYNC_LISTEN?.trim()) return { value: env.CORTEX_SYNC_LISTEN.trim(), named: 'CORTEX_SYNC_LISTEN' };
  return { value: DEFAULT_LISTEN, named: 'the default listen address' };
};

export const runWatch = async (o: WatchFlags, io: CliIo): Promise<number> => {
  if (Boolean(o.repo) === Boolean(o.dir)) throw new ConfigError('watch needs exactly one of --repo URL or --dir DIR');
  const cacheDir = resolve(io.cwd, o.cacheDir ?? io.env.CORTEX_SYNC_CACHE_DIR ?? join(tmpdir(), 'cortex-sync-watch'));
  // CORTEX_API_KEY or CORTEX_API_KEY_FILE, outside what the repository controls (its checkout or --dir).
  const secretPlace = { manifestRoot: o.repo ? cacheDir : resolve(io.cwd, o.dir ?? '.'), cwd: io.cwd };
  const key = resolveApiKey(io.env, secretPlace);
  if (key.diagnostics.length > 0) throw new ConfigError(key.diagnostics.map((d) => d.message).join('; '));
  const apiKey = requireApiKey(key, 'watch applies to the live workspace');
  const listenAt = listenSetting(o, io.env);
  let listen;
  try {
    listen = parseListen(listenAt.value);
  } catch (error) {
    throw new ConfigError(`${listenAt.named}: ${error instanceof Error ? error.message : String(error)}`);
  }
  // The webhook secret and the git token follow the API key's rules (a value, or a regular file
  // outside what the repository controls).
  const secretOf = (name: string): string | undefined => {
    const secret = resolveSecret(io.env, name, secretPlace);
    if (secret.diagnostics.length > 0) throw new ConfigError(secret.diagnostics.map((d) => d.message).join('; '));
    return secret.value;
  };
  const webhookSecret = secretOf('CORTEX_SYNC_WEBHOOK_SECRET');
  const auth: GitAuth = {};
  const token = secretOf('CORTEX_SYNC_GIT_TOKEN');
  if (token) auth.token = token;
  const fromUrl = o.repo ? urlCredentials(o.repo) : undefined;
  if (fromUrl && !token) auth.basic = fromUrl;
  if (io.env.CORTEX_SYNC_SSH_KEY_FILE) auth.sshKeyFile = io.env.CORTEX_SYNC_SSH_KEY_FILE;
  if (io.env.CORTEX_SYNC_SSH_KNOWN_HOSTS_FILE) auth.sshKnownHostsFile = io.env.CORTEX_SYNC_SSH_KNOWN_HOSTS_FILE;
  const secrets = [...gitAuthSecrets(auth), ...(o.repo ? remoteSecrets(o.repo) : [])];
  const logger = createLogger({
    write: (line) => io.stdout.write(line),
    secrets: [apiKey, webhookSecret ?? '', ...secrets],
  });

  let dir: string | undefined;
  if (o.dir !== undefined) {
    dir = resolve(io.cwd, o.dir);
    const problems = await manifestRootProblems(dir, '--dir');
    if (problems[0]) throw new ConfigError(problems[0].message);
  }
  const described = o.repo ? `${describeRemote(o.repo)}${o.branch ? `#${o.branch}` : ''}` : (dir ?? '');
  const folder = join(
    cacheDir,
    o.repo
      ? gitSourceFolder({ url: o.repo, ...(o.branch ? { branch: o.branch } : {}), ...(o.path ? { path: o.path } : {}) })
      : dirSourceFolder(await realpath(dir ?? '.')),
  );
  let lost: (holder: LockRecord | undefined) => void = () => {};
  const lockLost = new Promise<LockRecord | undefined>((resolveLost) => {
    lost = resolveLost;
  });
  const locking = acquireSourceLock({
    folder,
    source: described,
    probe: systemProcessProbe,
    clock: systemClock,
    ...(io.stop ? { signal: io.stop } : {}),
    onWatching: (holder, ms) =>
      logger.warn('the source folder is locked by a watcher that cannot be checked from here', {
        folder,
        holder: describeHolder(holder),
        takeOverIfUnchangedFor: formatDuration(ms),
      }),
    onLost: (holder) => lost(holder),
  });
  const lock = await locking.catch((error: unknown) => {
    // Stopped while waiting to see whether the folder's holder is alive: nothing was started.
    if (io.stop?.aborted) return undefined;
    throw error;
  });
  if (!lock) {
    logger.info('stopped before the source folder was free', { folder });
    return 0;
  }

  // A second SIGTERM exits at once: git, in process groups of its own, must not outlive us.
  let killGit = () => {};
  const onExit = () => killGit();
  process.once('exit', onExit);
  try {
    const git = o.repo
      ? createGitSource({
          url: o.repo,
          ...(o.branch ? { branch: o.branch } : {}),
          ...(o.path ? { path: o.path } : {}),
          checkoutDir: join(folder, 'checkout'),
          knownHostsFile: join(cacheDir, 'known_hosts'),
          intervalMs: o.interval,
          auth,
          env: io.env,
        })
      : undefined;
    if (git) killGit = () => git.killNow();
    const source: Source = git ?? createDirSource({ dir: dir ?? '.' });

    let watcher;
    try {
      watcher = await startWatcher({
        source,
        // A --dir root is its origin as configured, wherever a symlink there points this time.
        resolveConfig: (root) =>
          configureRun({ said: settingsOf(o, root), ...(dir !== undefined ? { originDir: dir } : {}) }, io.env, io.cwd),
        apiKey,
        secrets,
        host: listen.host,
        port: listen.port,
        healIntervalMs: o.healInterval,
        pruneSettleMs: o.pruneSettle ?? DEFAULT_PRUNE_SETTLE_MS,
        leaseLingerMs: o.leaseLinger ?? DEFAULT_LEASE_LINGER_MS,
        ...(webhookSecret ? { webhookSecret } : {}),
        ...(o.branch ? { branch: o.branch } : {}),
        planLogFile: resolve(io.cwd, o.planLog ?? join(folder, 'plan-log.jsonl')),
        logger,
        backoff: { baseMs: Math.max(1, o.backoff) },
        onListening: (url) => {
          io.stdout.write(`listening on ${url}\n`);
          logger.info('watching', {
            source: source.description,
            folder,
            interval: o.repo ? o.interval : undefined,
            healInterval: o.healInterval,
            webhooks: Boolean(webhookSecret),
          });
        },
      });
    } catch (error) {
      await source.close();
      if (error instanceof ListenError) throw new ConfigError(`${listenAt.named} ${listenAt.value}: ${error.reason}`);
      throw error;
    }
    const stopped = (io.untilStopped?.() ?? new Promise<void>(() => {})).then(() => 'stopped' as const);
    const why = await Promise.race([stopped, lockLost.then((holder) => ({ holder }))]);
    if (why !== 'stopped') {
      logger.error('another process took this source folder: stopping', {
        folder,
        ...(why.holder ? { holder: describeHolder(why.holder) } : {}),
      });
    }
    await watcher.stop(o.shutdownTimeout);
    return why === 'stopped' ? 0 : 1;
  } finally {
    process.off('exit', onExit);
    await lock.release();
  }
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
    .addOption(
      new Option(
        '--listen <host:port>',
        `address of the health, metrics and webhook port (env CORTEX_SYNC_LISTEN; default ${DEFAULT_LISTEN}, this machine only; 0.0.0.0:8080 for every interface)`,
      ).argParser(listenFlag),
    )
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
    .addOption(
      new Option(
        '--prune-settle <duration>',
        'a delete or archive waits until its manifest has been missing this long (seen missing twice); 0 = at once',
      )
        .argParser(duration)
        .default(DEFAULT_PRUNE_SETTLE_MS, formatDuration(DEFAULT_PRUNE_SETTLE_MS)),
    )
    .addOption(
      new Option(
        '--lease-linger <duration>',
        "keep the source's apply lease this long after an apply, so that a change that follows is applied without taking it again; another apply of the source waits meanwhile (0 = release after each apply)",
      )
        .argParser(duration)
        .default(DEFAULT_LEASE_LINGER_MS, formatDuration(DEFAULT_LEASE_LINGER_MS)),
    )
    .option(
      '--cache-dir <dir>',
      'a folder per source: its checkout and plan log (env CORTEX_SYNC_CACHE_DIR; default a temp directory)',
    )
    .option('--plan-log <file>', "JSON Lines log of every API operation (default: in the source's folder)")
    .option('--prune', 'remove objects this repository manages whose manifests are gone')
    .option('--no-prune', 'never prune, whatever cortex-sync.yaml or CORTEX_SYNC_PRUNE says')
    .option('--allow-mass-delete', 'allow a prune above the configured share or count of managed objects')
    .option('--allow-takeover', 'take over objects another source id manages')
    .option('--source-id <id>', 'identifies this repository in the ownership records')
    .option('--base-url <url>', 'API base address (env CORTEX_BASE_URL)')
    .option('--concurrency <n>', 'changes applied at once (1–64)', concurrency)
    .action(async (o: WatchFlags) => {
      done(await runWatch(o, io));
    });
};
