/**
 * Finds the manifest files under a root: a walk that skips `.git`, `node_modules` and symlinked
 * directories, keeping the files some kind owns.
 */
import { type Dirent, promises as fs } from 'node:fs';
import path from 'node:path';

/** Directory names never entered. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules']);

/**
 * Relative, `/`-separated paths of every file under `root` for which `owns(relPath)` is true, sorted.
 * Symlinked files are followed when they point at a file; symlinked directories are not entered.
 * Throws when a directory cannot be read (a silently skipped folder could turn into a prune).
 */
export const discoverManifestFiles = async (root: string, owns: (relPath: string) => boolean): Promise<string[]> => {
  const found: string[] = [];
  const walk = async (relDir: string): Promise<void> => {
    const entries: Dirent[] = await fs.readdir(path.join(root, relDir), { withFileTypes: true });
    const subdirectories: string[] = [];
    for (const entry of entries) {
      const relPath = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRECTORIES.has(entry.name)) subdirectories.push(relPath);
      } else if (entry.isFile()) {
        if (owns(relPath)) found.push(relPath);
      } else if (entry.isSymbolicLink() && owns(relPath)) {
        const target = await fs.stat(path.join(root, relPath)).catch(() => undefined);
        if (target?.isFile()) found.push(relPath);
      }
    }
    await Promise.all(subdirectories.map(walk));
  };
  await walk('');
  return found.sort();
};
