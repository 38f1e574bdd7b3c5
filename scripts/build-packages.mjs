// Builds the workspace packages (`packages/*`: the emulator, the benchmark) after the product:
// `npm run build` runs it, so `npm ci` (through `prepare`) leaves a clone with `cortex-sync
// emulator`, `npm run demo` and `npm run bench` ready. npm itself runs no workspace's `prepare`.
// Each package's own `build.mjs` says what it builds, into its own `dist/`; none of it is in the
// published package. Where there is no `packages/` folder (the Docker image's build stage copies
// only the product), there is nothing to build.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const packages = join(import.meta.dirname, '..', 'packages');
const builds = existsSync(packages)
  ? readdirSync(packages, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(packages, entry.name, 'build.mjs')))
      .map((entry) => join(packages, entry.name, 'build.mjs'))
      .sort()
  : [];
for (const build of builds) await import(pathToFileURL(build).href);
