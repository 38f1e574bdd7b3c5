/**
 * A manifest folder of the layout (`.cortex/`, or a kind's `.cortex/<folder>/`) that exists but is
 * not a folder: a FIFO, a socket, or a regular file (a symlinked folder checked out as the text of
 * its target, where symlinks are not supported). The walk sees a name no kind owns and passes it
 * by; the manifests that folder held would then look deleted. Each is a problem of the walk.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { DiscoveryProblem } from './discover.js';

/** Is there something at `relPath` under `realRoot` that is not a folder? (A symlink counts as its target.) */
const notAFolder = async (realRoot: string, relPath: string): Promise<boolean> => {
  // Nothing there is fine; a symlink that resolves to nothing is the walk's own problem.
  const stat = await fs.stat(path.join(realRoot, relPath)).catch(() => undefined);
  return stat !== undefined && !stat.isDirectory();
};

const problem = (relPath: string): DiscoveryProblem => ({
  relPath,
  message: `${relPath} is not a folder, so no manifest under ${relPath}/ can be read`,
});

/** The layout folders (`.cortex/` and `.cortex/<folder>` of each of `folders`) that are not folders. */
export const layoutFolderProblems = async (
  realRoot: string,
  folders: readonly string[],
): Promise<DiscoveryProblem[]> => {
  if (await notAFolder(realRoot, '.cortex')) return [problem('.cortex')];
  const checked = await Promise.all(
    [...new Set(folders)].map(async (folder) => {
      const relPath = `.cortex/${folder}`;
      return (await notAFolder(realRoot, relPath)) ? problem(relPath) : undefined;
    }),
  );
  return checked.filter((p): p is DiscoveryProblem => p !== undefined).sort((a, b) => (a.relPath < b.relPath ? -1 : 1));
};
