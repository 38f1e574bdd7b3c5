/**
 * The drift proposal as one commit on a branch of the source's repository, made with git's
 * plumbing in the source's own repository (a temporary index, `commit-tree`): the working copy the
 * source syncs is never touched. Pushed with `--force-with-lease` naming the head cortex-sync
 * wrote (or none for a new branch): a branch someone else pushed to is refused by git, never
 * overwritten. A manifest that git holds as a symlink or a submodule is refused, not replaced.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import type { FileChange } from './proposal.js';

/** git in the source's repository, with the credentials the source uses (its fetch, its push). */
export interface DriftGit {
  run(args: readonly string[], env?: Record<string, string>): Promise<string>;
}

/** A manifest file git does not hold as a regular file (a symlink, a submodule): not edited. */
export class NotARegularFile extends Error {
  override readonly name = 'NotARegularFile';
}

const REGULAR = new Set(['100644', '100755']);
const COMMITTER = {
  GIT_AUTHOR_NAME: 'cortex-sync',
  GIT_AUTHOR_EMAIL: 'cortex-sync@users.noreply.github.com',
  GIT_COMMITTER_NAME: 'cortex-sync',
  GIT_COMMITTER_EMAIL: 'cortex-sync@users.noreply.github.com',
};

/** The head of `branch` on the remote, or undefined when it has none. */
export const remoteHead = async (git: DriftGit, branch: string): Promise<string | undefined> => {
  const out = await git.run(['ls-remote', 'origin', `refs/heads/${branch}`]);
  return /^([0-9a-f]{40,64})\s/m.exec(out)?.[1];
};

/** The mode git holds `path` with at `base` (undefined: it holds none). */
const modeAt = async (
  git: DriftGit,
  env: Record<string, string>,
  base: string,
  path: string,
): Promise<string | undefined> => {
  const out = await git.run(['ls-tree', '-z', base, '--', path], env);
  return /^(\d{6}) /.exec(out)?.[1];
};

/**
 * One commit on top of `base` with the files changed (paths relative to `prefix`, the manifest
 * root inside the repository): its sha.
 */
export const commitFiles = async (
  git: DriftGit,
  input: { base: string; prefix: string; files: readonly FileChange[]; message: string },
): Promise<string> => {
  const scratch = await mkdtemp(join(tmpdir(), 'cortex-sync-drift-'));
  try {
    const env = { GIT_INDEX_FILE: join(scratch, 'index') };
    await git.run(['read-tree', input.base], env);
    for (const [i, file] of input.files.entries()) {
      const path = posix.join(input.prefix, file.path);
      const mode = await modeAt(git, env, input.base, path);
      if (mode !== undefined && !REGULAR.has(mode))
        throw new NotARegularFile(`${path} is not a regular file in git (mode ${mode}): not edited`);
      if (file.text === undefined) {
        await git.run(['update-index', '--force-remove', '--', path], env);
        continue;
      }
      const blobFile = join(scratch, `blob-${i}`);
      await writeFile(blobFile, file.text, { mode: 0o600 });
      const blob = (await git.run(['hash-object', '-w', '--', blobFile], env)).trim();
      await git.run(['update-index', '--add', '--cacheinfo', `${mode ?? '100644'},${blob},${path}`], env);
    }
    const tree = (await git.run(['write-tree'], env)).trim();
    return (
      await git.run(['commit-tree', tree, '-p', input.base, '-m', input.message], { ...env, ...COMMITTER })
    ).trim();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
};

/** The tree of a commit (to see whether a new proposal changes anything). */
export const treeOf = async (git: DriftGit, commit: string): Promise<string | undefined> =>
  git.run(['rev-parse', `${commit}^{tree}`]).then(
    (out) => out.trim(),
    () => undefined,
  );

/**
 * Pushes `commit` to `branch`, only while the remote's head is `expected` (undefined: while the
 * branch does not exist). Rejected by git otherwise.
 */
export const pushBranch = async (
  git: DriftGit,
  commit: string,
  branch: string,
  expected: string | undefined,
): Promise<void> => {
  await git.run([
    'push',
    '--porcelain',
    `--force-with-lease=refs/heads/${branch}:${expected ?? ''}`,
    'origin',
    `${commit}:refs/heads/${branch}`,
  ]);
};

/**
 * git run as a child process in `cwd` with the caller's environment plus `env` (the Action's
 * checkout: the token actions/checkout left in its configuration pushes). A failure names the
 * command and git's last words, never a credential (git prints none).
 */
export const processGit = (cwd: string, base: NodeJS.ProcessEnv, timeoutMs = 120_000): DriftGit => ({
  run: (args, env = {}) =>
    new Promise((resolve, reject) => {
      execFile(
        'git',
        [...args],
        {
          cwd,
          env: { ...base, ...env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
          timeout: timeoutMs,
          maxBuffer: 16 * 1024 * 1024,
        },
        (error, stdout, stderr) => {
          if (!error) return resolve(stdout);
          const said = stderr
            .split('\n')
            .filter((l) => /^(fatal|error|remote):/.test(l.trim()))
            .slice(-3)
            .join(' / ');
          reject(new Error(`git ${args[0] ?? ''} failed${said ? `: ${said}` : ''}`));
        },
      );
    }),
});
