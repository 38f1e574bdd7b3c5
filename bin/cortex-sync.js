#!/usr/bin/env node
// The published entrypoint: runs the compiled CLI (built by `npm run build`, which `npm ci` runs via `prepare`).
import { runProcess } from '../dist/cli/process.js';

process.exitCode = await runProcess();
