#!/usr/bin/env node
// `npm run demo`: a demo sync of examples/ against the built-in emulator, the way a user runs it:
// start `cortex-sync emulator`, then `plan`, `apply`, and `plan` again (which must show no changes).
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
    lines.once('line', (url) => resolve({ child, url: url.trim() }));
    child.once('exit', (code) => reject(new Error(`emulator exited with code ${code}`)));
  });

const run = (title, args, baseUrl) =>
  new Promise((resolve) => {
    process.stdout.write(`\n\x1b[1m$ cortex-sync ${args.join(' ')}\x1b[0m   # ${title}\n`);
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
    ['what would change (exit 2: there are changes)', ['plan', '--dir', 'examples', '--detailed-exitcode'], [2]],
    ['apply them', ['apply', '--dir', 'examples', '--plan-log', join(logDir, 'plan-log.jsonl')], [0]],
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
