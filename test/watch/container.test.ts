/**
 * The container as the Dockerfile builds it (Docker itself is not needed): the image sets the
 * listen address through `CORTEX_SYNC_LISTEN`, the entrypoint `cortex-sync watch` listens there,
 * and the HEALTHCHECK command probes that same address, whatever port it names.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { API_KEY, CONFIG_YAML, type Emulator, removeDir, startTestEmulator, tempDir, writeFiles } from './harness.js';

const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'bin', 'cortex-sync.js');

let emulator: Emulator;
let root: string;
let child: ChildProcess | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
});
afterEach(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  await emulator.stop();
  await removeDir(root);
});

/** The Dockerfile's instructions, continuation lines joined. */
const dockerfile = async (): Promise<string[]> =>
  (await readFile(join(REPO, 'Dockerfile'), 'utf8'))
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));

/** Runs the image's HEALTHCHECK command (paths inside the image mapped to this checkout). */
const healthcheck = async (listen: string): Promise<number | null> => {
  const line = (await dockerfile()).find((l) => l.startsWith('HEALTHCHECK'));
  const command = JSON.parse(/CMD (\[.*\])$/.exec(line ?? '')?.[1] ?? '[]') as string[];
  expect(command[0]).toBe('node');
  const script = (command[1] ?? '').replace(/^\/app\//, `${REPO}/`);
  expect(existsSync(script), `${script} (npm run build)`).toBe(true);
  const proc = spawn(process.execPath, [script], { env: { CORTEX_SYNC_LISTEN: listen }, stdio: 'ignore' });
  return new Promise((resolve) => proc.once('exit', resolve));
};

it('sets the listen address for every interface in one place, and exposes its port', async () => {
  const lines = await dockerfile();
  const env = lines.find((l) => l.startsWith('ENV ')) ?? '';
  const listen = /CORTEX_SYNC_LISTEN=(\S+)/.exec(env)?.[1];
  expect(listen).toBe('0.0.0.0:8080');
  expect(lines).toContain(`EXPOSE ${listen?.split(':')[1]}`);
  expect(lines).toContain('CMD ["watch"]');
});

it('the build stage copies every file `npm run build` runs (it builds the bundle the entrypoint runs)', async () => {
  const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const needed = [...(pkg.scripts.build ?? '').matchAll(/\b(?:scripts\/\S+\.mjs|tsconfig[\w.]*\.json)/g)].map(
    (m) => m[0],
  );
  expect(needed).toContain('scripts/build-cli.mjs');
  const copied = (await dockerfile())
    .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
    .flatMap((l) => l.slice('COPY '.length).split(/\s+/).slice(0, -1));
  for (const file of needed)
    expect(copied.some((c) => file === c || file.startsWith(`${c.replace(/\/$/, '')}/`))).toBe(true);
});

it('the entrypoint listens where CORTEX_SYNC_LISTEN says and the HEALTHCHECK finds it there', async () => {
  await writeFiles(join(root, 'manifests'), { 'cortex-sync.yaml': CONFIG_YAML });
  const proc = spawn(process.execPath, [BIN, 'watch', '--dir', 'manifests'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      CORTEX_API_KEY: API_KEY,
      CORTEX_BASE_URL: emulator.url,
      CORTEX_SYNC_CACHE_DIR: join(root, 'cache'),
      CORTEX_SYNC_LISTEN: '127.0.0.1:0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const found = /^listening on (\S+)$/m.exec(out)?.[1];
      if (found) resolve(found);
    });
    proc.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  const port = new URL(url).port;
  expect(url).toBe(`http://127.0.0.1:${port}`);
  // The image's wildcard address is probed on loopback.
  expect(await healthcheck(`0.0.0.0:${port}`)).toBe(0);
  expect(await healthcheck(`127.0.0.1:${port}`)).toBe(0);

  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(await healthcheck(`127.0.0.1:${port}`)).toBe(1);
});
