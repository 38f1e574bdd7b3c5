/**
 * A git remote as the source: one shallow working copy in a cache directory, fetched at an
 * interval (±5 % jitter) and on demand. Credentials come from the environment or mounted files
 * and reach git only through its environment (never the command line, the remote URL or
 * `.git/config`), so they appear in no process list, no error and no log.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type SimpleGit, simpleGit } from 'simple-git';
import { jittered, type Source, type SourceSnapshot, type SourceTrigger } from './source.js';

export interface GitAuth {
  /** An HTTPS token (GitHub: a fine-grained token with contents:read), sent as a Basic header. */
  token?: string;
  /** A private key file for SSH remotes. */
  sshKeyFile?: string;
  /** A known_hosts file; without it, a host is trusted on first use (kept in the cache directory). */
  sshKnownHostsFile?: string;
}

export interface GitSourceOptions {
  url: string;
  /** Default: the remote's default branch. */
  branch?: string;
  /** Manifest root inside the repository; default the repository root. */
  path?: string;
  cacheDir: string;
  /** Poll interval; 0 = only webhooks and the heal interval. */
  intervalMs: number;
  auth?: GitAuth;
  /** Per git command; default 2 min. */
  timeoutMs?: number;
  random?: () => number;
  /** The process environment git runs with (PATH, HOME); credentials are added to it. */
  env?: NodeJS.ProcessEnv;
}

/** The remote as it may be logged: any `user:password@` removed. */
export const describeRemote = (url: string): string => url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1');

/** Secrets inside a remote URL (`https://user:token@host/...`), to redact. */
export const remoteSecrets = (url: string): string[] => {
  const userInfo = /^[a-z][a-z0-9+.-]*:\/\/([^@/]*)@/i.exec(url)?.[1];
  if (!userInfo) return [];
  const [user = '', password = ''] = userInfo.split(':');
  return [password, password ? '' : user].filter((s) => s.length >= 8);
};

const quote = (path: string): string => `'${path.replace(/'/g, `'\\''`)}'`;

/** The environment git runs with: the caller's PATH/HOME and the credentials, nothing else. */
const gitEnvironment = (options: GitSourceOptions): Record<string, string> => {
  const base = options.env ?? process.env;
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'SSL_CERT_FILE', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  const auth = options.auth ?? {};
  if (auth.token) {
    const basic = Buffer.from(`x-access-token:${auth.token}`).toString('base64');
    env.GIT_CONFIG_COUNT = '1';
    env.GIT_CONFIG_KEY_0 = 'http.extraHeader';
    env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${basic}`;
  }
  if (auth.sshKeyFile) {
    const knownHosts = auth.sshKnownHostsFile ?? join(options.cacheDir, 'known_hosts');
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

/** The base64 header value is as secret as the token: both are redacted. */
export const gitAuthSecrets = (auth: GitAuth | undefined): string[] =>
  auth?.token ? [auth.token, Buffer.from(`x-access-token:${auth.token}`).toString('base64')] : [];

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

export const createGitSource = (options: GitSourceOptions): Source & { remoteRevision(): Promise<string> } => {
  const checkout = join(options.cacheDir, 'checkout');
  const env = gitEnvironment(options);
  let git: SimpleGit | undefined;
  let branch = options.branch;
  let pollTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let lastSeen: string | undefined;

  const open = async (): Promise<SimpleGit> => {
    if (git) return git;
    await mkdir(checkout, { recursive: true });
    const instance = simpleGit({
      baseDir: checkout,
      maxConcurrentProcesses: 1,
      timeout: { block: options.timeoutMs ?? 120_000 },
      unsafe: { allowUnsafeSshCommand: true, allowUnsafeConfigEnvCount: true },
      // The git variables this module sets itself (nothing from the repository or a request).
      allowEnvironment: Object.keys(env).filter((name) => name.startsWith('GIT_')),
    }).env(env);
    if (!(await exists(join(checkout, '.git')))) {
      await instance.init();
      await instance.addRemote('origin', options.url);
    } else {
      await instance.remote(['set-url', 'origin', options.url]);
    }
    git = instance;
    return instance;
  };

  /** The followed branch: given, or the remote's HEAD. */
  const followed = async (g: SimpleGit): Promise<string> => {
    if (branch) return branch;
    const out = await g.raw(['ls-remote', '--symref', 'origin', 'HEAD']);
    const found = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(out)?.[1];
    if (!found) throw new Error(`cannot tell the default branch of ${describeRemote(options.url)}: pass --branch`);
    branch = found;
    return found;
  };

  const remoteRevision = async (): Promise<string> => {
    const g = await open();
    const name = await followed(g);
    const out = await g.raw(['ls-remote', 'origin', `refs/heads/${name}`]);
    const sha = /^([0-9a-f]{40,64})\s/m.exec(out)?.[1];
    if (!sha) throw new Error(`branch ${name} not found on ${describeRemote(options.url)}`);
    return sha;
  };

  const sync = async (): Promise<SourceSnapshot> => {
    const g = await open();
    const name = await followed(g);
    await g.raw(['fetch', '--depth', '1', '--no-tags', 'origin', `+refs/heads/${name}:refs/remotes/origin/${name}`]);
    await g.raw(['checkout', '--force', '--detach', `refs/remotes/origin/${name}`]);
    const revision = (await g.revparse(['HEAD'])).trim();
    lastSeen = revision;
    return { dir: options.path ? join(checkout, options.path) : checkout, revision };
  };

  return {
    description: `${describeRemote(options.url)}${options.branch ? `#${options.branch}` : ''}`,
    sync,
    remoteRevision,
    watch: async (onChange: (trigger: SourceTrigger) => void, onError: (error: Error) => void) => {
      if (options.intervalMs <= 0 || pollTimer) return;
      const schedule = () => {
        if (closed) return;
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
              .catch((error: unknown) => onError(error instanceof Error ? error : new Error(String(error))))
              .finally(schedule);
          },
          jittered(options.intervalMs, options.random),
        );
      };
      schedule();
    },
    close: async () => {
      closed = true;
      clearTimeout(pollTimer);
    },
  };
};

/** Reads a mounted secret file (trailing newline dropped). */
export const readSecretFile = async (path: string): Promise<string> => (await readFile(path, 'utf8')).trim();
