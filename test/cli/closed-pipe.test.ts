/**
 * `cortex-sync … | head`: the reader closes the pipe before the CLI has written everything. The
 * CLI must neither crash with a stack trace nor change its exit code because of it.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../e2e/harness.js';
import { bundleCli } from '../support/cli-bundle.js';

let dir: string;
let entry: string;

beforeAll(async () => {
  dir = await tempDir('cortex-sync-pipe-');
  entry = await bundleCli(dir);
});
afterAll(async () => removeDir(dir));

/** Runs the CLI with stdout read for one chunk and then closed, as `| head -1` does. */
const runIntoClosedPipe = (args: string[]): Promise<{ code: number | null; stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [entry, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.stdout.once('data', () => child.stdout.destroy());
    child.on('close', (code) => resolve({ code, stderr }));
  });

describe('output into a closed pipe', () => {
  it('--help | head exits 0 with nothing on stderr', async () => {
    const { code, stderr } = await runIntoClosedPipe(['--help']);
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\.js/);
    expect(code).toBe(0);
  });
});
