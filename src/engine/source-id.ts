/**
 * The default source id: the repository's identity, stable across checkouts (a fresh CI clone in a
 * temporary directory must get the same id). GitHub Actions' `GITHUB_REPOSITORY`, else the
 * `origin` remote of the git repository holding the manifests.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

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

/**
 * The config of the git repository holding `start`. In a submodule or a worktree `.git` is a file
 * (`gitdir: …`) naming the real git directory; a worktree's shares its `commondir`'s config.
 */
const findGitConfig = async (start: string): Promise<string | undefined> => {
  let dir = start;
  for (;;) {
    const dotGit = join(dir, '.git');
    const config = await readText(join(dotGit, 'config'));
    if (config !== undefined) return config;
    const gitdir = /^gitdir:\s*(.+)$/m.exec((await readText(dotGit)) ?? '')?.[1]?.trim();
    if (gitdir) {
      const gitDir = resolve(dir, gitdir);
      const common = (await readText(join(gitDir, 'commondir')))?.trim();
      return readText(join(common ? resolve(gitDir, common) : gitDir, 'config'));
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
};

const originUrl = (gitConfig: string): string | undefined => {
  let inOrigin = false;
  for (const raw of gitConfig.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) inOrigin = /^\[remote\s+"origin"\]$/.test(line);
    else if (inOrigin) {
      const m = /^url\s*=\s*(.+)$/.exec(line);
      if (m?.[1]) return m[1];
    }
  }
  return undefined;
};

export const deriveSourceId = async (dir: string, env: NodeJS.ProcessEnv): Promise<string | undefined> => {
  if (env.GITHUB_REPOSITORY) return `github.com/${env.GITHUB_REPOSITORY}`.toLowerCase();
  const gitConfig = await findGitConfig(dir);
  const url = gitConfig ? originUrl(gitConfig) : undefined;
  return url ? normalizeRemoteUrl(url) : undefined;
};
