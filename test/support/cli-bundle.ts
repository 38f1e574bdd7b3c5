/**
 * The binary's own entry (`src/cli/process.ts`, what `bin/cortex-sync.js` runs), bundled from
 * the sources into one file, so a test can run the CLI as a real child process without a build.
 */
import { join } from 'node:path';
import { build } from 'esbuild';

const ROOT = join(import.meta.dirname, '..', '..');

/** Writes the bundle to `outfile` (an `.mjs` path) and returns it. */
export const bundleCli = async (outfile: string): Promise<string> => {
  await build({
    stdin: {
      contents: "import { runProcess } from './src/cli/process.ts';\nprocess.exitCode = await runProcess();\n",
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'silent',
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  return outfile;
};
