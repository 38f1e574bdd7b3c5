/**
 * The repository's cortex-sync.yaml cannot redirect the API key: a server on 127.0.0.1 that
 * records Authorization headers never receives one when only the file names it.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from '../cli/run.js';

let recorder: Server;
let recorderUrl: string;
const seen: (string | undefined)[] = [];
let emulator: RunningEmulator;
let dir: string;

beforeEach(async () => {
  seen.length = 0;
  recorder = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
  const address = recorder.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  recorderUrl = `http://127.0.0.1:${address.port}`;
  emulator = await startTestEmulator();
  dir = await tempDir();
});
afterEach(async () => {
  await new Promise<void>((resolve) => recorder.close(() => resolve()));
  await emulator.stop();
  await removeDir(dir);
});

describe('the key goes only where the operator points it', () => {
  it.each([['plan'], ['apply']])(
    '%s with baseUrl in cortex-sync.yaml exits 1 and sends nothing there',
    async (command) => {
      await writeFiles(dir, {
        'cortex-sync.yaml': `sourceId: github.com/acme/catalog\nbaseUrl: ${recorderUrl}\n`,
        'cortex.yaml': serviceYaml('payments'),
      });
      // With the operator's own URL set, and without it (the default would be the real API: the
      // run must stop before any request).
      for (const env of [{ CORTEX_BASE_URL: emulator.url }, { CORTEX_BASE_URL: '' }]) {
        const run = await cli([command, '--dir', '.'], { cwd: dir, env: { ...env, CORTEX_API_KEY: API_KEY } });
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/cortex-sync\.yaml:2.*baseUrl/);
        expect(run.stdout + run.stderr).not.toContain(API_KEY);
      }
      expect(seen).toEqual([]);
    },
  );
});
