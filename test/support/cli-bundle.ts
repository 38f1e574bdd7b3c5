/**
 * The binary as it ships, built fresh from the sources: `scripts/build-cli.mjs` (what `npm run
 * build` runs) writes the bundle into a folder laid out as the installed package is
 * (`bin/cortex-sync.js`, `dist/bundle/`, `node_modules` beside them), so a test runs the real
 * entrypoint as a child process, with the same bundle options, without a build of the checkout.
 *
 * One build per test run: the first file that asks builds it into the run's folder (given by
 * `global-setup.ts`), the others wait for it and link their `dist/` to it. A file that asks for a
 * metafile (what the build itself is tested with) builds its own.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';

export const ROOT = join(import.meta.dirname, '..', '..');

declare module 'vitest' {
  export interface ProvidedContext {
    /** A folder of this test run where the one shared bundle is built (see `global-setup.ts`). */
    cliBundleCache: string;
  }
}

const build = async (dir: string, metafile?: string): Promise<void> => {
  const args = [join(ROOT, 'scripts', 'build-cli.mjs'), '--outdir', join(dir, 'dist', 'bundle')];
  if (metafile) args.push('--metafile', metafile);
  await promisify(execFile)(process.execPath, args, { cwd: ROOT });
};

/** The run's shared package folder, its bundle built once (whichever worker comes first builds). */
const sharedBuild = async (cache: string): Promise<string> => {
  const pkg = join(cache, 'package');
  const done = join(cache, 'built');
  try {
    await mkdir(pkg); // atomic: exactly one caller gets to build
  } catch {
    const deadline = Date.now() + 240_000;
    while (!existsSync(done)) {
      if (Date.now() > deadline) throw new Error(`the shared CLI bundle in ${pkg} was not built within 240 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return pkg;
  }
  // Modules the bundle leaves to run time resolve from its real place: node_modules beside it.
  await symlink(join(ROOT, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  await build(pkg);
  await writeFile(done, '');
  return pkg;
};

/** Builds the package layout under `dir`; returns the path of its `bin/cortex-sync.js`. */
export const bundleCli = async (dir: string, options: { metafile?: string } = {}): Promise<string> => {
  await mkdir(join(dir, 'bin'), { recursive: true });
  await copyFile(join(ROOT, 'bin', 'cortex-sync.js'), join(dir, 'bin', 'cortex-sync.js'));
  // Dependencies the bundle leaves to run time (jq-wasm and its .wasm) resolve from here, as from an install.
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const cache = options.metafile ? undefined : inject('cliBundleCache');
  if (cache) await symlink(join(await sharedBuild(cache), 'dist'), join(dir, 'dist'), 'dir');
  else await build(dir, options.metafile);
  return join(dir, 'bin', 'cortex-sync.js');
};
