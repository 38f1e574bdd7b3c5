#!/usr/bin/env node
// `npm run demo`: a demo sync of examples/ against the emulator (packages/emulator/, which `npm ci`
// builds with the rest), the way a user runs it: start `cortex-sync emulator`, then `validate`, `apply` (which shows the plan, then applies it) and
// `plan` again (which must show no changes). No escape codes when the output is not a terminal.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin', 'cortex-sync.js');
const env = { ...process.env, CORTEX_API_KEY: 'demo-key-for-the-local-emulator' };

const startEmulator = () =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'emulator', '--port', '0'], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout });
    // The first line is `export CORTEX_BASE_URL=http://127.0.0.1:PORT`.
    lines.once('line', (line) => resolve({ child, url: line.trim().replace(/^export CORTEX_BASE_URL=/, '') }));
    child.once('exit', (code) => reject(new Error(`emulator exited with code ${code}`)));
  });

const run = (title, args, baseUrl) =>
  new Promise((resolve) => {
    const command = `$ cortex-sync ${args.join(' ')}`;
    process.stdout.write(`\n${process.stdout.isTTY ? `\x1b[1m${command}\x1b[0m` : command}   # ${title}\n`);
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...env, CORTEX_BASE_URL: baseUrl },
      stdio: 'inherit',
      cwd: root,
    });
    child.once('exit', (code) => resolve(code ?? 1));
  });

const { child: emulator, url } = await startEmulator();
process.stdout.write(`Emulator running at ${url}\n`);
const logDir = mkdtempSync(join(tmpdir(), 'cortex-sync-demo-'));
let failed = false;
try {
  const steps = [
    ['validate the manifests offline', ['validate', '--dir', 'examples'], [0]],
    [
      'show the plan, then apply it',
      ['apply', '--dir', 'examples', '--auto-approve', '--plan-log', join(logDir, 'plan-log.jsonl')],
      [0],
    ],
    ['plan again: the workspace matches', ['plan', '--dir', 'examples', '--detailed-exitcode'], [0]],
  ];
  for (const [title, args, ok] of steps) {
    const code = await run(title, args, url);
    if (!ok.includes(code)) {
      process.stderr.write(
        `\nDemo step failed: cortex-sync ${args.join(' ')} exited ${code}, expected ${ok.join(' or ')}\n`,
      );
      failed = true;
      break;
    }
  }
  if (!failed) process.stdout.write(`\nDemo done. The apply's plan log: ${join(logDir, 'plan-log.jsonl')}\n`);
} finally {
  emulator.kill('SIGTERM');
}
process.exitCode = failed ? 1 : 0;
