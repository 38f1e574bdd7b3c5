/**
 * A load that trusts the changes its caller noted (`ManifestCache.noteChanges`, from a file
 * watcher's events): from the listing of the last load and those paths alone, the manifest files
 * now and which of them to read again, without walking the root or stat-ing every file.
 *
 * Only what one `lstat` of a noted path settles is taken from here; anything else returns
 * `undefined` and the loader walks the whole root as it always does: the root is another folder
 * now, a noted path is a folder, a symlink, something other than a regular file, a path leading
 * through a symlink, a YAML or manifest-like JSON file no kind owns (their warnings), or a gone
 * path (or a file now) that held listed files. A file the events never named is taken as
 * unchanged: a missed event delays a change (until a load that walks: the caller's heal interval),
 * it never removes a file from the load, so it can never become a delete.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { type DiscoveredFile, isManifestLikeJson, isYamlName, SKIPPED_DIRECTORIES } from './discover.js';
import type { Listing } from './manifest-cache.js';

/** The manifest files after the noted changes, and those of them to read again. */
export interface NotedListing {
  files: DiscoveredFile[];
  reread: ReadonlySet<string>;
  unownedYaml: string[];
  unownedJson: string[];
}

/** A relative `/`-separated path the listing can answer for (no `.`, `..` or empty segment). */
const plainRelativePath = (relPath: string): boolean =>
  relPath !== '' &&
  !relPath.startsWith('/') &&
  relPath.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');

const gone = (error: unknown): boolean => {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

const byRelPath = (a: DiscoveredFile, b: DiscoveredFile): number =>
  a.relPath < b.relPath ? -1 : a.relPath > b.relPath ? 1 : 0;

const foldersAbove = (relPaths: readonly string[]): Set<string> => {
  const folders = new Set<string>();
  for (const relPath of relPaths)
    for (let slash = relPath.indexOf('/'); slash !== -1; slash = relPath.indexOf('/', slash + 1))
      folders.add(relPath.slice(0, slash));
  return folders;
};

/** See the module comment; `owns` says whether some kind reads a file at that path. */
export const listingAfterNotedChanges = async (
  listing: Listing,
  changed: ReadonlySet<string>,
  root: string,
  owns: (relPath: string) => boolean,
): Promise<NotedListing | undefined> => {
  const realRoot = await fs.realpath(root).catch(() => undefined);
  if (realRoot !== listing.realRoot) return undefined;
  const files = new Map(listing.files.map((f) => [f.relPath, f]));
  const unowned = new Set([...listing.unownedYaml, ...listing.unownedJson]);
  const reread = new Set<string>();
  // Every folder above a listed path, made once when first asked (paths dropped meanwhile only
  // make a walk more likely).
  let listedFolders: Set<string> | undefined;
  const holdsListed = (folder: string): boolean => {
    listedFolders ??= foldersAbove([...files.keys(), ...unowned]);
    return listedFolders.has(folder);
  };
  for (const relPath of changed) {
    if (!plainRelativePath(relPath)) return undefined;
    if (relPath.split('/').some((segment) => SKIPPED_DIRECTORIES.has(segment))) continue;
    const where = path.join(realRoot, relPath);
    let stat: Awaited<ReturnType<typeof fs.lstat>>;
    try {
      stat = await fs.lstat(where);
    } catch (error) {
      if (!gone(error)) return undefined;
      if (unowned.has(relPath) || holdsListed(relPath)) return undefined;
      files.delete(relPath);
      continue;
    }
    const owned = owns(relPath);
    const strayName = isYamlName(relPath) || isManifestLikeJson(relPath);
    if (stat.isSymbolicLink() || stat.isDirectory()) return undefined;
    // A folder of listed files replaced by a file: what was under it is gone, unnamed. (A path
    // that was itself listed was a file, not such a folder: the common edit skips the look.)
    if (!files.has(relPath) && !unowned.has(relPath) && holdsListed(relPath)) return undefined;
    if (!stat.isFile()) {
      if (owned || strayName) return undefined;
      continue;
    }
    // The path must lead to the file through folders only (a folder swapped for a symlink: walk).
    if ((await fs.realpath(where).catch(() => undefined)) !== where) return undefined;
    if (!owned) {
      if (strayName && !unowned.has(relPath)) return undefined;
      continue;
    }
    files.set(relPath, { relPath, realPath: where });
    reread.add(relPath);
  }
  return {
    files: [...files.values()].sort(byRelPath),
    reread,
    unownedYaml: [...unowned].filter((p) => isYamlName(p)).sort(),
    unownedJson: [...unowned].filter((p) => !isYamlName(p)).sort(),
  };
};
