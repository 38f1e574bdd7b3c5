/** Temporary directories and files for engine tests. */
import type { SyncConfig } from '../../src/engine/config.js';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A fresh temporary directory. */
export const tempDir = (prefix = 'cortex-sync-engine-'): Promise<string> => mkdtemp(join(tmpdir(), prefix));

export const removeDir = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });

/** Writes `files` (relative path → text) under `root`, creating folders. */
export const writeFiles = async (root: string, files: Record<string, string>): Promise<void> => {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
};

/** A `.git/config` whose `origin` remote is `url` (with another remote before it). */
export const gitConfigWithOrigin = (url: string): string =>
  [
    '[core]',
    '\trepositoryformatversion = 0',
    '\tbare = false',
    '[remote "upstream"]',
    '\turl = git@github.com:someone-else/fork.git',
    '\tfetch = +refs/heads/*:refs/remotes/upstream/*',
    '[remote "origin"]',
    `\turl = ${url}`,
    '\tfetch = +refs/heads/*:refs/remotes/origin/*',
    '[branch "main"]',
    '\tremote = origin',
    '',
  ].join('\n');

/** A resolved configuration for engine tests: prune on, mass deletes allowed, the rest as the defaults. */
export const syncConfig = (config: Pick<SyncConfig, 'dir' | 'baseUrl'> & Partial<SyncConfig>): SyncConfig => ({
  prune: true,
  pruneEntities: 'archive',
  allowMassDelete: true,
  allowTakeover: false,
  maxDeleteShare: 0.25,
  protect: [],
  concurrency: 4,
  requestsPerMinute: 1000,
  forceEntityTypeSchema: false,
  ...config,
});
