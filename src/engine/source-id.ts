/**
 * The default source id: the repository's identity, stable across checkouts (a fresh CI clone in a
 * temporary directory must get the same id). GitHub Actions' `GITHUB_REPOSITORY`, else the
 * `origin` remote of the git repository holding the manifests; plus the manifest root's path
 * inside the repository when it is not the repository's root.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** `git@github.com:acme/catalog.git`, `https://x@github.com/acme/catalog` → `github.com/acme/catalog`. */
export const normalizeRemoteUrl = (url: string): string | undefined => {
  const trimmed = url
    .trim()
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)([^\\].*)$/.exec(trimmed);
  if (scp) return `${scp[1]}/${scp[2]}`.toLowerCase();
  try {
    const parsed = new URL(trimmed);
    const path = parsed.pathname.replace(/^\/+/, '');
    return path ? `${parsed.hostname}/${path}`.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
};

const readText = (path: string): Promise<string | undefined> => readFile(path, 'utf8').catch(() => undefined);

interface GitCheckout {
  /** The directory holding `.git` (the work tree's root). */
  root: string;
  config: string | undefined;
}

/**
 * The git checkout holding `start`: its root and config. In a submodule or a worktree `.git` is a
 * file (`gitdir: …`) naming the real git directory; a worktree's shares its `commondir`'s config.
 */
const findGitCheckout = async (start: string): Promise<GitCheckout | undefined> => {
  let dir = start;
  for (;;) {
    const dotGit = join(dir, '.git');
    const config = await readText(join(dotGit, 'config'));
    if (config !== undefined) return { root: dir, config };
    const gitdir = /^gitdir:\s*(.+)$/m.exec((await readText(dotGit)) ?? '')?.[1]?.trim();
    if (gitdir) {
      const gitDir = resolve(dir, gitdir);
      const common = (await readText(join(gitDir, 'commondir')))?.trim();
      return { root: dir, config: await readText(join(common ? resolve(gitDir, common) : gitDir, 'config')) };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
};

/**
 * `repo` for the repository root; `repo//teams/a` for the folder `teams/a` inside it (the `//`
 * of Terraform's module sources), so two manifest roots of one monorepo never share an id.
 */
const withSubdirectory = (repositoryId: string, subdirectory: string): string => {
  const clean = subdirectory
    .split(sep)
    .join('/')
    .replace(/^\/+|\/+$/g, '');
  return clean === '' || clean === '.' ? repositoryId : `${repositoryId}//${clean}`;
};

/** `dir` relative to `root`, or undefined when it is not inside it. */
const inside = (root: string, dir: string): string | undefined => {
  const rel = relative(root, dir);
  return rel.startsWith('..') || isAbsolute(rel) ? undefined : rel;
};

/**
 * The repository's remote URL: the `origin` remote's, else the only remote's (a clone whose one
 * remote has another name); several remotes and none named `origin`: undefined (which is the
 * repository's is not for us to guess).
 */
const originUrl = (gitConfig: string): string | undefined => {
  const urls = new Map<string, string>();
  let remote: string | undefined;
  for (const raw of gitConfig.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) remote = /^\[remote\s+"([^"]*)"\]$/.exec(line)?.[1];
    else if (remote !== undefined && !urls.has(remote)) {
      const m = /^url\s*=\s*(.+)$/.exec(line);
      if (m?.[1]) urls.set(remote, m[1]);
    }
  }
  if (urls.has('origin')) return urls.get('origin');
  return urls.size === 1 ? [...urls.values()][0] : undefined;
};

/**
 * The repository's identity (`GITHUB_REPOSITORY` at `githubHost`, else the `origin` remote) plus
 * the manifest root's path inside the repository when it is not the root (see `withSubdirectory`).
 * The root of the checkout is where `.git` is; in GitHub Actions without one, `GITHUB_WORKSPACE`.
 */
const repositoryIdentity = async (
  dir: string,
  env: NodeJS.ProcessEnv,
  githubHost: string,
  clean: (repositoryId: string) => string = (id) => id,
): Promise<string | undefined> => {
  const checkout = await findGitCheckout(dir);
  let repositoryId: string | undefined;
  if (env.GITHUB_REPOSITORY) repositoryId = `${githubHost}/${env.GITHUB_REPOSITORY}`.toLowerCase();
  else {
    const url = checkout?.config ? originUrl(checkout.config) : undefined;
    repositoryId = url ? normalizeRemoteUrl(url) : undefined;
  }
  if (repositoryId === undefined) return undefined;
  const root = checkout?.root ?? env.GITHUB_WORKSPACE;
  const subdirectory = root === undefined ? undefined : inside(resolve(root), resolve(dir));
  return withSubdirectory(clean(repositoryId), subdirectory ?? '');
};

/** The default source id: see the module comment. */
export const deriveSourceId = (dir: string, env: NodeJS.ProcessEnv): Promise<string | undefined> =>
  repositoryIdentity(dir, env, 'github.com');

/** Longest origin recorded; a longer one keeps its start and a hash of the whole. */
export const MAX_ORIGIN_LENGTH = 300;

const hostOfServerUrl = (url: string | undefined): string | undefined => {
  if (!url) return undefined;
  try {
    return new URL(url).hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
};

/**
 * Where a run comes from, bound to its source id at the source's first apply
 * (`core/source-binding.ts`): the repository (`GITHUB_REPOSITORY` on `GITHUB_SERVER_URL`'s host,
 * else the checkout's `origin` remote, normalised so that an https or ssh clone, a fresh CI clone
 * and a laptop's checkout are one origin, with no user, password, token, port, query or `.git`)
 * plus the manifest root's folder inside it; else `path:` and the manifest root's absolute path
 * as given (not resolved through symlinks).
 * Everything it reads is the operator's (the environment, the checkout's `.git`, which git never
 * takes from a repository's content), never a file of the repository.
 */
export const deriveOrigin = async (dir: string, env: NodeJS.ProcessEnv): Promise<string> => {
  // A remote no git would read as a URL (`user:token@host/...` without a scheme) may still leave
  // a user or token before an `@`: whatever precedes the repository's last `@` is never recorded
  // (nor a `.git` that a query string kept from being removed).
  const repository = await repositoryIdentity(dir, env, hostOfServerUrl(env.GITHUB_SERVER_URL) ?? 'github.com', (id) =>
    id.slice(id.lastIndexOf('@') + 1).replace(/\.git$/, ''),
  );
  // The path as given: a root that is a symlink (flipped to each new revision, as git-sync does)
  // stays one origin.
  const origin = repository ?? `path:${resolve(dir)}`;
  return origin.length <= MAX_ORIGIN_LENGTH
    ? origin
    : `${origin.slice(0, MAX_ORIGIN_LENGTH - 10)}#${createHash('sha256').update(origin).digest('hex').slice(0, 8)}`;
};
