/** CORTEX_API_KEY_FILE in the runtimes the CLI starts: watch and export (plan: trust-surfaces.test.ts). */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let dir: string;
let secrets: string;
beforeEach(async () => {
  dir = await tempDir();
  secrets = await tempDir();
  await writeFile(join(secrets, 'api-key'), `${API_KEY}\n`);
});
afterEach(async () => {
  await removeDir(dir);
  await removeDir(secrets);
});

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());

/** Resolves once the watcher's first run ended (or after 10 s). */
const untilListening = async (stdout: () => string): Promise<void> => {
  for (let i = 0; i < 200 && !/run (applied changes|found nothing|failed|refused)/.test(stdout()); i++)
    await new Promise((r) => setTimeout(r, 50));
};

describe('CORTEX_API_KEY_FILE', () => {
  it('--help says the key may come from a file, and where that file may be', async () => {
    const run = await cli(['--help'], { cwd: dir });
    expect(run.stdout).toMatch(
      /CORTEX_API_KEY_FILE\s+a file holding the key \(a mounted secret\): a regular file outside the\s+manifest root/,
    );
    expect(run.stdout).not.toContain('never read from a file');
  });

  it('watch --dir reads the key from the file and reconciles with it', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('key-file-watch'), 'cortex-sync.yaml': 'sourceId: kfw\n' });
    const run = await cli(['watch', '--dir', dir, '--listen', '127.0.0.1:0'], {
      cwd: dir,
      env: { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY_FILE: join(secrets, 'api-key') },
      untilStopped: untilListening,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(run.stdout).toContain('run applied changes');
    expect(run.stdout).not.toContain(API_KEY.slice(0, 12));
  });

  it('watch refuses a key file inside --dir, naming the variable', async () => {
    await writeFile(join(dir, 'api-key'), `${API_KEY}\n`);
    const run = await cli(['watch', '--dir', dir, '--listen', '127.0.0.1:0'], {
      cwd: dir,
      env: { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY_FILE: join(dir, 'api-key') },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: CORTEX_API_KEY_FILE \(.*api-key\) is inside the manifest directory/);
  });

  it("watch reads its webhook secret and git token under the key file's rules: never from inside --dir, never a FIFO", async () => {
    await writeFile(join(dir, 'hook-secret'), 'not-so-secret\n');
    const inside = await cli(['watch', '--dir', dir, '--listen', '127.0.0.1:0'], {
      cwd: dir,
      env: {
        CORTEX_BASE_URL: emulator.url,
        CORTEX_API_KEY: API_KEY,
        CORTEX_SYNC_WEBHOOK_SECRET_FILE: join(dir, 'hook-secret'),
      },
    });
    expect(inside.code).toBe(1);
    expect(inside.stderr).toMatch(
      /^error: CORTEX_SYNC_WEBHOOK_SECRET_FILE \(.*hook-secret\) is inside the manifest directory/,
    );
    expect(inside.stderr).not.toContain('not-so-secret');

    execFileSync('mkfifo', [join(secrets, 'token-fifo')]);
    const fifo = await cli(['watch', '--dir', dir, '--listen', '127.0.0.1:0'], {
      cwd: dir,
      env: {
        CORTEX_BASE_URL: emulator.url,
        CORTEX_API_KEY: API_KEY,
        CORTEX_SYNC_GIT_TOKEN_FILE: join(secrets, 'token-fifo'),
      },
    });
    expect(fifo.code).toBe(1);
    expect(fifo.stderr).toMatch(/^error: CORTEX_SYNC_GIT_TOKEN_FILE \(.*token-fifo\) .*(not a regular file|FIFO)/);
  });

  it('a key file that is not one key (an environ dump) is refused with a readable message', async () => {
    const dump = join(secrets, 'environ');
    await writeFile(dump, `CORTEX_API_KEY_FILE=${dump}\nPATH=/usr/bin\n`);
    const run = await cli(['validate'], { cwd: dir, env: { CORTEX_API_KEY_FILE: dump } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: CORTEX_API_KEY_FILE (${dump}) holds whitespace`);
    expect(run.stderr).not.toContain('PATH=');
  });

  it('export reads the key from the file', async () => {
    const run = await cli(['export', '--out', join(dir, 'out'), '--kinds', 'catalog-page'], {
      cwd: dir,
      env: { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY_FILE: join(secrets, 'api-key') },
    });
    expect(run.stderr).not.toMatch(/error/);
    expect(run.code).toBe(0);
  });
});
