/**
 * A git remote as the source: one shallow working copy in the source's own folder (see
 * `source-folder.ts`), fetched at an interval (±5 % jitter) and on demand. Credentials come from
 * the environment or mounted files, or from the URL's `user:password@` (taken out of it), and
 * reach git only through its environment (never the command line, the remote URL or
 * `.git/config`), so they appear in no process list, no error and no log. Every git command runs
 * in a process group of its own that is killed when the run stops or the source closes.
 */
import { mkdir, realpath, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { isInsideFolder } from '../source/regular-file.js';
import { credentialFreeUrl } from './source-folder.js';
import { GitCommandError, killGroupsNow, runGit } from './git-process.js';
import { clearGitLeftovers, type GitLeftovers } from './git-leftovers.js';
import { jittered, type Source, type SourceSnapshot, type SourceTrigger } from './source.js';

export interface GitAuth {
  /** An HTTPS token (GitHub: a fine-grained token with contents:read), sent as a Basic header. */
  token?: string;
  /** `user:password` from the remote URL, sent as a Basic header instead of being kept in the URL. */
  basic?: string;
  /** A private key file for SSH remotes. */
  sshKeyFile?: string;
  /** A known_hosts file; without it, a host is trusted on first use (kept in `knownHostsFile`). */
  sshKnownHostsFile?: string;
}

export interface GitSourceOptions {
  url: string;
  /** Default: the remote's default branch. */
  branch?: string;
  /** Manifest root inside the repository; default the repository root. */
  path?: string;
  /** The working copy: this source's alone. */
  checkoutDir: string;
  /** Where SSH host keys trusted on first use are kept (without `sshKnownHostsFile`). */
  knownHostsFile: string;
  /** Poll interval; 0 = only webhooks and the heal interval. */
  intervalMs: number;
  auth?: GitAuth;
  /** Per git command; default 2 min. */
  timeoutMs?: number;
  random?: () => number;
  /** The process environment git runs with (PATH, HOME); credentials are added to it. */
  env: NodeJS.ProcessEnv;
  /** Told when a sync stopped git processes or removed lock files that a killed git left. */
  onLeftovers?: (leftovers: GitLeftovers) => void;
}

/** The remote as it may be logged: `user:password@`, query and fragment removed. */
export const describeRemote = (url: string): string => credentialFreeUrl(url);

/** The `user:password` (or token alone) of an http(s) URL, decoded; undefined when there is none. */
export const urlCredentials = (url: string): string | undefined => {
  const userInfo = /^https?:\/\/([^@/?#]*)@/i.exec(url.trim())?.[1];
  if (!userInfo) return undefined;
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const [user = '', ...password] = userInfo.split(':');
  return `${decode(user)}:${decode(password.join(':'))}`;
};

/** Secrets inside a remote URL (`https://user:token@host/...`, `?access_token=…`), to redact. */
export const remoteSecrets = (url: string): string[] => {
  const found: string[] = [];
  const credentials = urlCredentials(url);
  if (credentials !== undefined) {
    const [user = '', ...password] = credentials.split(':');
    const secret = password.join(':');
    found.push(secret || user);
  }
  const query = /\?([^#]*)/.exec(url)?.[1];
  for (const pair of query?.split('&') ?? []) found.push(pair.slice(pair.indexOf('=') + 1));
  return found.filter((s) => s.length >= 8);
};

const quote = (path: string): string => `'${path.replace(/'/g, `'\\''`)}'`;

const basicHeader = (auth: GitAuth): string | undefined => {
  const pair = auth.token ? `x-access-token:${auth.token}` : auth.basic;
  return pair === undefined ? undefined : `Authorization: Basic ${Buffer.from(pair).toString('base64')}`;
};

/** The environment git runs with: the caller's PATH/HOME and the credentials, nothing else. */
const gitEnvironment = (options: GitSourceOptions): Record<string, string> => {
  const base = options.env;
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'SSL_CERT_FILE', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  const auth = options.auth ?? {};
  const header = basicHeader(auth);
  if (header) {
    env.GIT_CONFIG_COUNT = '1';
    env.GIT_CONFIG_KEY_0 = 'http.extraHeader';
    env.GIT_CONFIG_VALUE_0 = header;
  }
  if (auth.sshKeyFile) {
    const knownHosts = auth.sshKnownHostsFile ?? options.knownHostsFile;
    const checking = auth.sshKnownHostsFile ? 'yes' : 'accept-new';
    env.GIT_SSH_COMMAND = [
      'ssh',
      `-i ${quote(auth.sshKeyFile)}`,
      '-o IdentitiesOnly=yes',
      '-o BatchMode=yes',
      `-o StrictHostKeyChecking=${checking}`,
      `-o UserKnownHostsFile=${quote(knownHosts)}`,
    ].join(' ');
  } else if (base.GIT_SSH_COMMAND) {
    env.GIT_SSH_COMMAND = base.GIT_SSH_COMMAND;
  }
  return env;
};

/** The header value is as secret as the token: every form is redacted. */
export const gitAuthSecrets = (auth: GitAuth | undefined): string[] => {
  if (!auth) return [];
  const header = basicHeader(auth);
  const pair = auth.token ?? auth.basic?.slice(auth.basic.indexOf(':') + 1);
  return [pair ?? '', header ? header.slice('Authorization: Basic '.length) : ''].filter((s) => s !== '');
};

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * `--path` names the folder; the repository decides what it is. Once its symlinks are followed it
 * must be inside the checkout: a commit that makes it (or a folder on the way) a symlink pointing
 * out would have the watcher read manifests from anywhere on its host. A path that does not exist
 * is the loader's to report.
 */
const checkInsideCheckout = async (dir: string, checkout: string, said: string): Promise<void> => {
  const realDir = await realpath(dir).catch(() => undefined);
  if (realDir === undefined) return;
  if (isInsideFolder(await realpath(checkout), realDir)) return;
  throw new Error(
    `--path ${said} is outside the checkout once its symlinks are followed (the repository made a folder on the way a symlink that points out of it); manifests are read only from inside the repository`,
  );
};

export interface GitSource extends Source {
  remoteRevision(): Promise<string>;
  /** Kills every git command still running, at once (the process is exiting and cannot wait). */
  killNow(): void;
}

/** `--path` as a prefix of the paths git reports (`''` for the repository's root). */
const manifestPrefix = (path: string | undefined): string => {
  if (path === undefined) return '';
  const normal = posix.normalize(path.split('\\').join('/')).replace(/^\.\//, '').replace(/\/+$/, '');
  return normal === '.' ? '' : normal;
};

export const createGitSource = (options: GitSourceOptions): GitSource => {
  const checkout = options.checkoutDir;
  const remote = options.url.trim().replace(/^(https?:\/\/)[^@/?#]*@/i, '$1');
  const env = gitEnvironment(options);
  /** Aborted by `close()`: every git command in flight (a fetch, a poll) stops with it. */
  const closing = new AbortController();
  const running = new Set<number>();
  let opened = false;
  let branch = options.branch;
  let pollTimer: NodeJS.Timeout | undefined;
  let lastSeen: string | undefined;

  /**
   * Whether the checkout may hold what a killed git left (`git-leftovers.ts`): at this process's
   * first sync (the watcher before it may have been killed), after a git command of ours was
   * stopped, and after git found a lock file in its way.
   */
  let leftoversPossible = true;
  const git = (args: string[], signal?: AbortSignal): Promise<string> =>
    runGit(args, {
      cwd: checkout,
      env,
      signal: signal ? AbortSignal.any([signal, closing.signal]) : closing.signal,
      running,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    }).catch((error: unknown) => {
      // Stopped mid-way, or refused by a lock file something left: the next sync clears what is left.
      if (
        error instanceof GitCommandError &&
        (error.reason !== 'failed' || /\.lock'?: File exists/.test(error.message))
      )
        leftoversPossible = true;
      throw error;
    });

  const clearLeftovers = async (): Promise<void> => {
    if (!leftoversPossible) return;
    leftoversPossible = false;
    const timeoutMs = options.timeoutMs ?? 120_000;
    const cleared = await clearGitLeftovers(checkout, { ownGroups: running, staleLockMs: 2 * timeoutMs + 60_000 });
    if (cleared.stopped.length > 0 || cleared.removed.length > 0) options.onLeftovers?.(cleared);
  };

  const open = async (signal?: AbortSignal): Promise<void> => {
    if (opened) return;
    await mkdir(checkout, { recursive: true, mode: 0o700 });
    if (!(await exists(join(checkout, '.git')))) {
      await git(['init', '--quiet'], signal);
      await git(['remote', 'add', 'origin', remote], signal);
    } else {
      await git(['remote', 'set-url', 'origin', remote], signal);
    }
    opened = true;
  };

  /** The followed branch: given, or the remote's HEAD. */
  const followed = async (signal?: AbortSignal): Promise<string> => {
    if (branch) return branch;
    const out = await git(['ls-remote', '--symref', 'origin', 'HEAD'], signal);
    const found = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(out)?.[1];
    if (!found) throw new Error(`cannot tell the default branch of ${describeRemote(options.url)}: pass --branch`);
    branch = found;
    return found;
  };

  const remoteRevision = async (signal?: AbortSignal): Promise<string> => {
    await open(signal);
    const name = await followed(signal);
    const out = await git(['ls-remote', 'origin', `refs/heads/${name}`], signal);
    const sha = /^([0-9a-f]{40,64})\s/m.exec(out)?.[1];
    if (!sha) throw new Error(`branch ${name} not found on ${describeRemote(options.url)}`);
    return sha;
  };

  /**
   * The files (relative to the manifest root) that differ between two commits of this checkout, as
   * git says; undefined when it cannot say (an object gone, a name that is not UTF-8): the load walks.
   */
  const changedBetween = async (from: string, to: string, signal: AbortSignal): Promise<string[] | undefined> => {
    if (from === to) return [];
    const out = await git(['diff', '--name-only', '-z', '--no-renames', from, to, '--'], signal).catch(() => undefined);
    if (out === undefined || out.includes('\uFFFD')) return undefined;
    const prefix = manifestPrefix(options.path);
    const changed: string[] = [];
    for (const file of out.split('\0')) {
      if (file === '') continue;
      if (prefix === '') changed.push(file);
      else if (file.startsWith(`${prefix}/`)) changed.push(file.slice(prefix.length + 1));
      // The manifest root itself changed (a folder turned into a file or a link): anything may have.
      else if (file === prefix || prefix.startsWith(`${file}/`)) return undefined;
    }
    return changed;
  };

  /** The commit the last complete sync checked out (a sync that failed midway may leave files between two). */
  let checkedOut: string | undefined;

  const sync = async (signal: AbortSignal): Promise<SourceSnapshot> => {
    const previous = checkedOut;
    checkedOut = undefined;
    await open(signal);
    await clearLeftovers();
    const name = await followed(signal);
    await git(
      ['fetch', '--depth', '1', '--no-tags', 'origin', `+refs/heads/${name}:refs/remotes/origin/${name}`],
      signal,
    );
    await git(['checkout', '--quiet', '--force', '--detach', `refs/remotes/origin/${name}`], signal);
    const revision = (await git(['rev-parse', 'HEAD'], signal)).trim();
    lastSeen = revision;
    const dir = options.path ? join(checkout, options.path) : checkout;
    if (options.path) await checkInsideCheckout(dir, checkout, options.path);
    // git names a file by the path it is stored at: under a --path reached through a symlink the
    // repository holds, a changed file has another name than the one the load knows it by.
    const storedAt = join(await realpath(checkout), manifestPrefix(options.path));
    const plainPath = (await realpath(dir).catch(() => undefined)) === storedAt;
    const changedFiles =
      previous === undefined || !plainPath ? undefined : await changedBetween(previous, revision, signal);
    checkedOut = revision;
    return { dir, revision, ...(changedFiles !== undefined ? { changedFiles } : {}) };
  };

  return {
    description: `${describeRemote(options.url)}${options.branch ? `#${options.branch}` : ''}`,
    sync,
    remoteRevision: () => remoteRevision(),
    killNow: () => killGroupsNow(running),
    watch: async (onChange: (trigger: SourceTrigger) => void, onError: (error: Error) => void) => {
      if (options.intervalMs <= 0 || pollTimer) return;
      const schedule = () => {
        if (closing.signal.aborted) return;
        pollTimer = setTimeout(
          () => {
            remoteRevision()
              .then((sha) => {
                // Before the first sync, the startup run fetches anyway.
                if (lastSeen !== undefined && sha !== lastSeen) {
                  lastSeen = sha;
                  onChange('commit');
                }
              })
              .catch((error: unknown) => {
                if (error instanceof GitCommandError && error.reason === 'aborted') return;
                onError(error instanceof Error ? error : new Error(String(error)));
              })
              .finally(schedule);
          },
          jittered(options.intervalMs, options.random),
        );
      };
      schedule();
    },
    close: async () => {
      closing.abort();
      clearTimeout(pollTimer);
    },
  };
};
