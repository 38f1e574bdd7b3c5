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
import { type DriftRepository, jittered, type Source, type SourceSnapshot, type SourceTrigger } from './source.js';

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

interface GitSourceOptions {
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
  driftRepository(): DriftRepository | undefined;
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

/** A checkout of the followed branch, synced on demand and polled for new commits. */
class GitCheckout {
  private readonly checkout: string;
  private readonly remote: string;
  private readonly env: Record<string, string>;
  /** Aborted by `close()`: every git command in flight (a fetch, a poll) stops with it. */
  readonly closing = new AbortController();
  readonly running = new Set<number>();
  private opened = false;
  private branch: string | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private lastSeen: string | undefined;
  /**
   * Whether the checkout may hold what a killed git left (`git-leftovers.ts`): at this process's
   * first sync (the watcher before it may have been killed), after a git command of ours was
   * stopped, and after git found a lock file in its way.
   */
  private leftoversPossible = true;
  /** The commit the last complete sync checked out (a sync that failed midway may leave files between two). */
  private checkedOut: string | undefined;

  constructor(private readonly options: GitSourceOptions) {
    this.checkout = options.checkoutDir;
    this.remote = options.url.trim().replace(/^(https?:\/\/)[^@/?#]*@/i, '$1');
    this.env = gitEnvironment(options);
    this.branch = options.branch;
  }

  private git(args: string[], signal?: AbortSignal): Promise<string> {
    return runGit(args, {
      cwd: this.checkout,
      env: this.env,
      signal: signal ? AbortSignal.any([signal, this.closing.signal]) : this.closing.signal,
      running: this.running,
      ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
    }).catch((error: unknown) => {
      // Stopped mid-way, or refused by a lock file something left: the next sync clears what is left.
      if (
        error instanceof GitCommandError &&
        (error.reason !== 'failed' || /\.lock'?: File exists/.test(error.message))
      )
        this.leftoversPossible = true;
      throw error;
    });
  }

  private async clearLeftovers(): Promise<void> {
    if (!this.leftoversPossible) return;
    this.leftoversPossible = false;
    const timeoutMs = this.options.timeoutMs ?? 120_000;
    const cleared = await clearGitLeftovers(this.checkout, {
      ownGroups: this.running,
      staleLockMs: 2 * timeoutMs + 60_000,
    });
    if (cleared.stopped.length > 0 || cleared.removed.length > 0) this.options.onLeftovers?.(cleared);
  }

  private async open(signal?: AbortSignal): Promise<void> {
    if (this.opened) return;
    await mkdir(this.checkout, { recursive: true, mode: 0o700 });
    if (!(await exists(join(this.checkout, '.git')))) {
      await this.git(['init', '--quiet'], signal);
      await this.git(['remote', 'add', 'origin', this.remote], signal);
    } else {
      await this.git(['remote', 'set-url', 'origin', this.remote], signal);
    }
    this.opened = true;
  }

  /** The followed branch: given, or the remote's HEAD. */
  private async followed(signal?: AbortSignal): Promise<string> {
    if (this.branch) return this.branch;
    const out = await this.git(['ls-remote', '--symref', 'origin', 'HEAD'], signal);
    const found = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(out)?.[1];
    if (!found) throw new Error(`cannot tell the default branch of ${describeRemote(this.options.url)}: pass --branch`);
    this.branch = found;
    return found;
  }

  async remoteRevision(signal?: AbortSignal): Promise<string> {
    await this.open(signal);
    const name = await this.followed(signal);
    const out = await this.git(['ls-remote', 'origin', `refs/heads/${name}`], signal);
    const sha = /^([0-9a-f]{40,64})\s/m.exec(out)?.[1];
    if (!sha) throw new Error(`branch ${name} not found on ${describeRemote(this.options.url)}`);
    return sha;
  }

  /**
   * The files (relative to the manifest root) that differ between two commits of this checkout, as
   * git says; undefined when it cannot say (an object gone, a name that is not UTF-8): the load walks.
   */
  private async changedBetween(from: string, to: string, signal: AbortSignal): Promise<string[] | undefined> {
    if (from === to) return [];
    const diff = ['diff', '--name-only', '-z', '--no-renames', from, to, '--'];
    const out = await this.git(diff, signal).catch(() => undefined);
    if (out === undefined || out.includes('\uFFFD')) return undefined;
    const prefix = manifestPrefix(this.options.path);
    const changed: string[] = [];
    for (const file of out.split('\0')) {
      if (file === '') continue;
      if (prefix === '') changed.push(file);
      else if (file.startsWith(`${prefix}/`)) changed.push(file.slice(prefix.length + 1));
      // The manifest root itself changed (a folder turned into a file or a link): anything may have.
      else if (file === prefix || prefix.startsWith(`${file}/`)) return undefined;
    }
    return changed;
  }

  async sync(signal: AbortSignal): Promise<SourceSnapshot> {
    const { options, checkout } = this;
    const previous = this.checkedOut;
    this.checkedOut = undefined;
    await this.open(signal);
    await this.clearLeftovers();
    const name = await this.followed(signal);
    const refspec = `+refs/heads/${name}:refs/remotes/origin/${name}`;
    await this.git(['fetch', '--depth', '1', '--no-tags', 'origin', refspec], signal);
    await this.git(['checkout', '--quiet', '--force', '--detach', `refs/remotes/origin/${name}`], signal);
    const revision = (await this.git(['rev-parse', 'HEAD'], signal)).trim();
    this.lastSeen = revision;
    const dir = options.path ? join(checkout, options.path) : checkout;
    if (options.path) await checkInsideCheckout(dir, checkout, options.path);
    // git names a file by the path it is stored at: under a --path reached through a symlink the
    // repository holds, a changed file has another name than the one the load knows it by.
    const storedAt = join(await realpath(checkout), manifestPrefix(options.path));
    const plainPath = (await realpath(dir).catch(() => undefined)) === storedAt;
    const changedFiles =
      previous === undefined || !plainPath ? undefined : await this.changedBetween(previous, revision, signal);
    this.checkedOut = revision;
    return { dir, revision, commit: true, ...(changedFiles !== undefined ? { changedFiles } : {}) };
  }

  /** Polls the remote every interval (jittered); a new commit triggers a run. */
  watch(onChange: (trigger: SourceTrigger) => void, onError: (error: Error) => void): void {
    if (this.options.intervalMs <= 0 || this.pollTimer) return;
    const schedule = () => {
      if (this.closing.signal.aborted) return;
      this.pollTimer = setTimeout(
        () => {
          this.remoteRevision()
            .then((sha) => {
              // Before the first sync, the startup run fetches anyway.
              if (this.lastSeen !== undefined && sha !== this.lastSeen) {
                this.lastSeen = sha;
                onChange('commit');
              }
            })
            .catch((error: unknown) => {
              if (error instanceof GitCommandError && error.reason === 'aborted') return;
              onError(error instanceof Error ? error : new Error(String(error)));
            })
            .finally(schedule);
        },
        jittered(this.options.intervalMs, this.options.random),
      );
    };
    schedule();
  }

  close(): void {
    this.closing.abort();
    clearTimeout(this.pollTimer);
  }

  /** Where a drift proposal is committed and pushed: this checkout, its credentials, its branch. */
  driftRepository(): DriftRepository | undefined {
    if (this.checkedOut === undefined || this.branch === undefined) return undefined;
    return {
      git: {
        run: (args, env = {}) =>
          runGit(args, {
            cwd: this.checkout,
            env: { ...this.env, ...env },
            signal: this.closing.signal,
            running: this.running,
          }),
      },
      prefix: manifestPrefix(this.options.path),
      branch: this.branch,
      revision: this.checkedOut,
      remote: this.options.url,
    };
  }
}

export const createGitSource = (options: GitSourceOptions): GitSource => {
  const checkout = new GitCheckout(options);
  return {
    description: `${describeRemote(options.url)}${options.branch ? `#${options.branch}` : ''}`,
    sync: (signal) => checkout.sync(signal),
    remoteRevision: () => checkout.remoteRevision(),
    killNow: () => killGroupsNow(checkout.running),
    watch: async (onChange: (trigger: SourceTrigger) => void, onError: (error: Error) => void) =>
      checkout.watch(onChange, onError),
    close: async () => checkout.close(),
    driftRepository: () => checkout.driftRepository(),
  };
};
