/**
 * `cortex-sync watch`: flags and environment → a running watcher; prints
 * `listening on http://HOST:PORT` as its first stdout line, then JSON log lines; on SIGTERM or
 * SIGINT stops within `--shutdown-timeout` and exits 0. Each source gets a folder of its own in
 * the cache directory (its checkout, its plan log), locked while this process uses it.
 */
import { realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { requireApiKey } from '../engine/api-client.js';
import { resolveApiKey, resolveSecret } from '../engine/api-key.js';
import { systemClock } from '../engine/context.js';
import { configureRun, type OperatorSettings } from '../engine/config.js';
import { SETTINGS } from '../engine/settings.js';
import { type CliIo, manifestRootProblems } from '../runtime-io/io.js';
import { settingsSaid } from '../runtime-io/setting-options.js';
import { createDirSource } from './dir-source.js';
import { formatDuration } from './duration.js';
import {
  createGitSource,
  describeRemote,
  type GitAuth,
  gitAuthSecrets,
  remoteSecrets,
  urlCredentials,
} from './git-source.js';
import { DEFAULT_LISTEN, parseListen } from './listen.js';
import { createLogger, type Logger } from './log.js';
import { systemProcessProbe } from './process-identity.js';
import { ListenError } from './server.js';
import type { Source } from './source.js';
import { dirSourceFolder, gitSourceFolder } from './source-folder.js';
import { acquireSourceLock, describeHolder, type LockRecord } from './source-lock.js';
import type { WatchFlags } from './command.js';
import { DEFAULT_LEASE_LINGER_MS, DEFAULT_PRUNE_SETTLE_MS } from './defaults.js';
import { driftGitHubOf } from './drift-proposals.js';
import { startWatcher } from './watcher.js';
import { DEFAULT_PLAN_LOG_KEEP, DEFAULT_PLAN_LOG_MAX_BYTES } from './plan-log-rotation.js';

/** What the flags say for every run, by the names every runtime uses (the table of settings, `engine/settings.ts`). */
const settingsOf = (o: WatchFlags, dir: string): OperatorSettings => ({ ...settingsSaid(o, SETTINGS), dir });

/** The listen address and where it came from, for messages. */
const listenSetting = (o: WatchFlags, env: NodeJS.ProcessEnv): { value: string; named: string } => {
  if (o.listen !== undefined) return { value: o.listen, named: '--listen' };
  if (env.CORTEX_SYNC_LISTEN?.trim()) return { value: env.CORTEX_SYNC_LISTEN.trim(), named: 'CORTEX_SYNC_LISTEN' };
  return { value: DEFAULT_LISTEN, named: 'the default listen address' };
};

/** `a.example, b.example` → the names (blank entries dropped). */
export const hostNames = (list: string | undefined): string[] =>
  (list ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');

/** What the operator gave the watcher outside the manifests: the key, the address, the secrets. */
export interface WatchAccess {
  apiKey: string;
  listenAt: { value: string; named: string };
  listen: ReturnType<typeof parseListen>;
  webhookSecret: string | undefined;
  auth: GitAuth;
  /** Every secret of git's (token, URL credentials), redacted from every line. */
  secrets: string[];
}

/** The API key, the listen address, the webhook secret and git's credentials, each checked. */
export const watchAccess = (o: WatchFlags, io: CliIo, cacheDir: string): WatchAccess => {
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
  const secrets = [
    ...gitAuthSecrets(auth),
    ...(o.repo ? remoteSecrets(o.repo) : []),
    // The drift pull request's token (`--on-drift pr`).
    ...(io.env.GITHUB_TOKEN ? [io.env.GITHUB_TOKEN] : []),
  ];
  return { apiKey, listenAt, listen, webhookSecret, auth, secrets };
};

/** The watched source's folder in the cache directory, its description, and the `--dir` root (checked). */
const sourcePlace = async (o: WatchFlags, io: CliIo, cacheDir: string) => {
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
  return { dir, described, folder };
};

/** The source folder's lock (undefined: stopped while waiting for it) and a promise of its loss. */
export const lockSourceFolder = async (folder: string, described: string, io: CliIo, logger: Logger) => {
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
  return { lock, lockLost };
};

/** The git source of `--repo` (undefined for `--dir`), its checkout in `folder`. */
const gitSourceOf = (
  o: WatchFlags,
  io: CliIo,
  place: { folder: string; cacheDir: string },
  auth: GitAuth,
  logger: Logger,
) =>
  o.repo
    ? createGitSource({
        url: o.repo,
        ...(o.branch ? { branch: o.branch } : {}),
        ...(o.path ? { path: o.path } : {}),
        checkoutDir: join(place.folder, 'checkout'),
        knownHostsFile: join(place.cacheDir, 'known_hosts'),
        intervalMs: o.interval,
        auth,
        env: io.env,
        onLeftovers: ({ stopped, removed }) =>
          logger.warn('cleared what a killed git left in the checkout', {
            ...(stopped.length > 0 ? { stoppedGitProcesses: stopped.length } : {}),
            ...(removed.length > 0 ? { removedLockFiles: removed.join(', ') } : {}),
          }),
      })
    : undefined;

/** The watcher on `source`, listening; a listen failure is a configuration error naming the setting. */
const startOn = async (
  o: WatchFlags,
  io: CliIo,
  run: { source: Source; dir: string | undefined; folder: string; access: WatchAccess; logger: Logger },
) => {
  const { source, dir, folder, access, logger } = run;
  const { webhookSecret, listen, listenAt } = access;
  try {
    return await startWatcher({
      source,
      // A --dir root is its origin as configured, wherever a symlink there points this time.
      resolveConfig: (root) =>
        configureRun({ said: settingsOf(o, root), ...(dir !== undefined ? { originDir: dir } : {}) }, io.env, io.cwd),
      apiKey: access.apiKey,
      secrets: access.secrets,
      host: listen.host,
      port: listen.port,
      allowedHosts: hostNames(o.allowedHosts ?? io.env.CORTEX_SYNC_ALLOWED_HOSTS),
      healIntervalMs: o.healInterval,
      pruneSettleMs: o.pruneSettle ?? DEFAULT_PRUNE_SETTLE_MS,
      leaseLingerMs: o.leaseLinger ?? DEFAULT_LEASE_LINGER_MS,
      ...(webhookSecret ? { webhookSecret } : {}),
      ...(o.branch ? { branch: o.branch } : {}),
      planLogFile: resolve(io.cwd, o.planLog ?? join(folder, 'plan-log.jsonl')),
      planLogRotation: {
        maxBytes: o.planLogMaxSize ?? DEFAULT_PLAN_LOG_MAX_BYTES,
        keep: o.planLogKeep ?? DEFAULT_PLAN_LOG_KEEP,
      },
      logger,
      backoff: { baseMs: Math.max(1, o.backoff) },
      drift: {
        github: driftGitHubOf(io.env, o.repo, access.auth.token ?? access.auth.basic?.split(':').slice(1).join(':')),
      },
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
};

export const runWatch = async (o: WatchFlags, io: CliIo): Promise<number> => {
  // Many sources, or a replica that must be elected before it writes: `sources.ts`.
  if (o.config !== undefined || o.leaderElect === true) return (await import('./sources.js')).runSources(o, io);
  if (Boolean(o.repo) === Boolean(o.dir)) throw new ConfigError('watch needs exactly one of --repo URL or --dir DIR');
  const cacheDir = resolve(io.cwd, o.cacheDir ?? io.env.CORTEX_SYNC_CACHE_DIR ?? join(tmpdir(), 'cortex-sync-watch'));
  const access = watchAccess(o, io, cacheDir);
  const logger = createLogger({
    write: (line) => io.stdout.write(line),
    secrets: [access.apiKey, access.webhookSecret ?? '', ...access.secrets],
  });
  const { dir, described, folder } = await sourcePlace(o, io, cacheDir);
  const { lock, lockLost } = await lockSourceFolder(folder, described, io, logger);
  if (!lock) {
    logger.info('stopped before the source folder was free', { folder });
    return 0;
  }

  // A second SIGTERM exits at once: git, in process groups of its own, must not outlive us.
  let killGit = () => {};
  const onExit = () => killGit();
  process.once('exit', onExit);
  try {
    const git = gitSourceOf(o, io, { folder, cacheDir }, access.auth, logger);
    if (git) killGit = () => git.killNow();
    const source: Source = git ?? createDirSource({ dir: dir ?? '.' });
    const watcher = await startOn(o, io, { source, dir, folder, access, logger });
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
