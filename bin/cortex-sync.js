#!/usr/bin/env node
// The published entrypoint: runs the compiled CLI (built by `npm run build`, which `npm ci` runs via `prepare`).
import { runCli } from '../dist/cli/main.js';

const untilStopped = () =>
  new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  untilStopped,
});
