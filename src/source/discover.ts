/**
 * Finds the manifest files under a root: a walk that skips `.git` and `node_modules`, keeping the
 * files some kind owns. Every path it finds but cannot read as a manifest is a problem, never a
 * silent skip: a manifest that is missing from the load looks exactly like a manifest that was
 * deleted, and `--prune` would remove its objects.
 */
import { type Dirent, lstatSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { isInsideFolder, unreadableReason } from './regular-file.js';

/** Directory names never entered. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules']);

/** A manifest file found: its path relative to the root (`/`-separated) and the real file to read. */
export interface DiscoveredFile {
  relPath: string;
  /** Absolute path with every symlink resolved; always inside the root's real path. */
  realPath: string;
}

/** A path that could hold manifests but cannot be read as one. */
export interface DiscoveryProblem {
  /** Relative, `/`-separated path ('' for the root). */
  relPath: string;
  message: string;
}

interface Discovery {
  /** The root's real path (every `realPath` is inside it). */
  realRoot: string;
  files: DiscoveredFile[];
  problems: DiscoveryProblem[];
  /** YAML files (`.yaml`/`.yml`) no kind owns, relative and sorted: the loader says why each is not read. */
  unownedYaml: string[];
  /** JSON files no kind owns that look meant as manifests (`cortex.json`, any `.json` under `.cortex/`), sorted. */
  unownedJson: string[];
}

export const isYamlName = (name: string): boolean => /\.ya?ml$/i.test(name);

/** A JSON file where a manifest would be: `cortex.json` anywhere, or under a `.cortex/` folder. */
export const isManifestLikeJson = (relPath: string): boolean =>
  /\.json$/i.test(relPath) && (/(^|\/)cortex\.json$/i.test(relPath) || /(^|\/)\.cortex\//.test(relPath));

/**
 * Every file under `root` for which `owns(relPath)` is true, sorted by relative path, and every
 * problem found on the way:
 * - a directory that cannot be listed;
 * - a symlink that cannot be resolved (dangling, a loop, no permission), or that resolves outside
 *   the root (its content is never read, so nothing of it can leak into a message);
 * - an owned name that is not a regular file (a directory named `cortex.yaml`, a FIFO).
 * A symlink resolving inside the root is followed: to a file (read once, from its real path) or to
 * a directory (walked under the symlink's own path, so ownership follows the path the author
 * wrote); a directory already on the way down is a loop and a problem.
 * Throws only when the root itself cannot be resolved.
 */
export const discoverManifests = async (root: string, owns: (relPath: string) => boolean): Promise<Discovery> => {
  const realRoot = await fs.realpath(root);
  const files: DiscoveredFile[] = [];
  const problems: DiscoveryProblem[] = [];
  const unownedYaml: string[] = [];
  const unownedJson: string[] = [];
  const problem = (relPath: string, message: string): void => {
    problems.push({ relPath, message });
  };

  const followSymlink = async (relPath: string, ancestors: ReadonlySet<string>): Promise<void> => {
    let target: string;
    try {
      target = await fs.realpath(path.join(realRoot, relPath));
    } catch (error) {
      problem(relPath, `${relPath} ${unreadableReason(error)}`);
      return;
    }
    const stat = await fs.stat(target).catch(() => undefined);
    const ownedName = owns(relPath);
    if (!isInsideFolder(realRoot, target)) {
      // Outside the root only a file of a name no kind owns is harmless; anything else could be
      // (or hold) a manifest, and its content is not ours to read.
      if (ownedName || stat?.isDirectory() === true)
        problem(relPath, `${relPath} is a symlink that points outside the manifest directory; it is not read`);
      return;
    }
    if (stat?.isDirectory()) {
      if (ancestors.has(target)) {
        problem(relPath, `${relPath} is a symlink loop (it points at a directory that contains it)`);
        return;
      }
      if (ownedName) problem(relPath, `${relPath} is a directory, not a manifest file`);
      await walk(relPath, target, ancestors);
      return;
    }
    if (!ownedName) return;
    if (stat?.isFile()) files.push({ relPath, realPath: target });
    else problem(relPath, `${relPath} is not a regular file`);
  };

  /**
   * A name that is not valid UTF-8 is read as text with U+FFFD in place of its bad bytes; that path
   * then does not exist. (A name really holding U+FFFD does.)
   */
  const notUtf8Name = (name: string, realPath: string): boolean => {
    if (!name.includes('\ufffd')) return false;
    try {
      lstatSync(realPath);
      return false;
    } catch {
      return true;
    }
  };

  const walk = async (relDir: string, realDir: string, ancestors: ReadonlySet<string>): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(realDir, { withFileTypes: true });
    } catch (error) {
      problem(relDir, `the directory ${relDir === '' ? '.' : relDir} ${unreadableReason(error)}`);
      return;
    }
    const inside = new Set([...ancestors, realDir]);
    const pending: Promise<void>[] = [];
    for (const entry of entries) {
      const relPath = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      const realPath = path.join(realDir, entry.name);
      if (notUtf8Name(entry.name, realPath)) {
        // Read back as text, such a name is another path: it would look removed while being read.
        if (entry.isDirectory() || entry.isSymbolicLink() || owns(relPath) || isYamlName(entry.name))
          problem(
            relPath,
            `${relPath} has a name that is not valid UTF-8 (shown with \ufffd); it is not read: rename it`,
          );
        continue;
      }
      if (entry.isDirectory()) {
        if (SKIPPED_DIRECTORIES.has(entry.name)) continue;
        if (owns(relPath)) problem(relPath, `${relPath} is a directory, not a manifest file`);
        pending.push(walk(relPath, realPath, inside));
      } else if (entry.isSymbolicLink()) {
        if (SKIPPED_DIRECTORIES.has(entry.name)) continue;
        pending.push(followSymlink(relPath, inside));
      } else if (owns(relPath)) {
        if (entry.isFile()) files.push({ relPath, realPath });
        else problem(relPath, `${relPath} is not a regular file`);
      } else if (entry.isFile() && isYamlName(entry.name)) unownedYaml.push(relPath);
      else if (entry.isFile() && isManifestLikeJson(relPath)) unownedJson.push(relPath);
    }
    await Promise.all(pending);
  };

  await walk('', realRoot, new Set());
  files.sort((a, b) => (a.relPath < b.relPath ? -1 : a.relPath > b.relPath ? 1 : 0));
  problems.sort((a, b) => (a.relPath < b.relPath ? -1 : a.relPath > b.relPath ? 1 : 0));
  unownedYaml.sort();
  unownedJson.sort();
  return { realRoot, files, problems, unownedYaml, unownedJson };
};

/**
 * Relative paths of the manifest files under `root`, sorted; throws when anything that could be a
 * manifest cannot be read (see `discoverManifests`, which reports each problem instead).
 */
export const discoverManifestFiles = async (root: string, owns: (relPath: string) => boolean): Promise<string[]> => {
  const { files, problems } = await discoverManifests(root, owns);
  if (problems.length > 0) throw new Error(problems.map((p) => p.message).join('; '));
  return files.map((f) => f.relPath);
};
