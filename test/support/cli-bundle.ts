/**
 * The binary as it ships, built fresh from the sources: `scripts/build-cli.mjs` (what `npm run
 * build` runs) writes the bundle into a folder laid out as the installed package is
 * (`bin/cortex-sync.js`, `dist/bundle/`, `node_modules` beside them), so a test runs the real
 * entrypoint as a child process, with the same bundle options, without a build of the checkout.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = join(import.meta.dirname, '..', '..');

/** Builds the package layout under `dir`; returns the path of its `bin/cortex-sync.js`. */
export const bundleCli = async (dir: string, options: { metafile?: string } = {}): Promise<string> => {
  await mkdir(join(dir, 'bin'), { recursive: true });
  await copyFile(join(ROOT, 'bin', 'cortex-sync.js'), join(dir, 'bin', 'cortex-sync.js'));
  // Dependencies the bundle leaves to run time (jq-wasm and its .wasm) resolve from here, as from an install.
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const args = [join(ROOT, 'scripts', 'build-cli.mjs'), '--outdir', join(dir, 'dist', 'bundle')];
  if (options.metafile) args.push('--metafile', options.metafile);
  await promisify(execFile)(process.execPath, args, { cwd: ROOT });
  return join(dir, 'bin', 'cortex-sync.js');
};
