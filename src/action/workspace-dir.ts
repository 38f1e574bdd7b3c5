/**
 * The operator names the manifest folder (`dir`), the pull request decides what that path is: a
 * folder of the repository replaced by a symlink pointing out of the checkout would have the
 * Action read, plan and apply manifests from anywhere on the runner. A `dir` written inside the
 * workspace must stay inside it once symlinks are resolved; one the operator wrote outside it
 * (`../other`) is the operator's choice.
 */
import { realpath } from 'node:fs/promises';
import { isInsideFolder } from '../source/regular-file.js';
import { InputError } from './inputs.js';

/** Throws an `InputError` naming the input when `dir`, inside `workspace` as written, resolves outside it. */
export const checkDirStaysInWorkspace = async (dir: string, workspace: string, said: string): Promise<void> => {
  if (!isInsideFolder(workspace, dir)) return;
  const realDir = await realpath(dir).catch(() => undefined);
  // A folder that does not exist is the loader's to report.
  if (realDir === undefined) return;
  const realWorkspace = await realpath(workspace).catch(() => workspace);
  if (isInsideFolder(realWorkspace, realDir)) return;
  throw new InputError(
    `input \`dir\`: ${said} is outside the repository checkout once its symlinks are followed (a folder on the way points out of it); manifests are read only from inside the repository`,
  );
};
