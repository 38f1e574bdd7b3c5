#!/usr/bin/env node
// The published entrypoint: runs the bundled CLI (dist/bundle/, written by scripts/build-cli.mjs
// through `npm run build`, which `npm ci` and `npm pack` run via `prepare`).
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/bundle/cli.js', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write('cortex-sync is not built here: run `npm run build` in its folder (`npm ci` builds it too).\n');
  process.exit(1);
}
const { runProcess } = await import(bundle.href);
process.exitCode = await runProcess();
