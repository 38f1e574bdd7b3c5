/**
 * The webhook under a flood, against the watcher as a process (`dist/`): many never-finished
 * chunked bodies, unsigned or carrying a well-formed but wrong signature, are answered and their
 * connections closed while the senders are still sending; a signed delivery and `/healthz` work
 * during and after. (The memory this costs is measured by `packages/bench/src/webhook-flood.ts`.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { signBody } from '../../src/watch/webhook.js';
import {
  API_KEY,
  CONFIG_YAML,
  type Emulator,
  removeDir,
  serviceYaml,
  startTestEmulator,
  tempDir,
  WEBHOOK_SECRET,
  writeFiles,
} from './harness.js';

const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'bin', 'cortex-sync.js');

let emulator: Emulator;
let root: string;
let child: ChildProcess | undefined;
const sockets: Socket[] = [];

beforeEach(async () => {
  if (!existsSync(join(REPO, 'dist', 'watch', 'command.js'))) throw new Error('run `npm run build` first');
  emulator = await startTestEmulator();
  root = await tempDir();
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  if (child?.exitCode === null) child.kill('SIGKILL');
  await emulator.stop();
  await removeDir(root);
});

/** Starts `cortex-sync watch --dir` as a process; resolves with its URL once its first run applied. */
const startWatcherProcess = async (): Promise<string> => {
  await writeFiles(join(root, 'manifests'), {
    'cortex-sync.yaml': CONFIG_YAML,
    '.cortex/catalog/a.yaml': serviceYaml('svc-a'),
  });
  const proc = spawn(process.execPath, [BIN, 'watch', '--dir', 'manifests', '--listen', '127.0.0.1:0'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      CORTEX_API_KEY: API_KEY,
      CORTEX_BASE_URL: emulator.url,
      CORTEX_SYNC_CACHE_DIR: join(root, 'cache'),
      CORTEX_SYNC_WEBHOOK_SECRET: WEBHOOK_SECRET,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child = proc;
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  let url = '';
  for await (const line of lines) {
    url ||= /^listening on (\S+)$/.exec(line)?.[1] ?? '';
    if (line.includes('"result":"applied"')) break;
  }
  return url;
};

interface Flooder {
  /** The status line's code once an answer came (undefined: none yet). */
  status(): number | undefined;
  closed: Promise<void>;
}

/** Opens a connection that sends a chunked body of 64 KB chunks and never ends it. */
const neverFinished = (url: string, headers: string): Flooder => {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  sockets.push(socket);
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const chunk = 'x'.repeat(64 * 1024);
  socket.write(
    `POST /webhook/github HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-GitHub-Event: push\r\n${headers}Transfer-Encoding: chunked\r\n\r\n`,
  );
  let sent = 0;
  const more = () => {
    // Up to 15 chunks (just under 1 MB): under the body cap, and never the last chunk.
    while (!socket.destroyed && sent < 15) {
      sent += 1;
      if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)) return void socket.once('drain', more);
    }
  };
  more();
  return { status: () => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]) || undefined, closed };
};

const signedDelivery = async (url: string): Promise<number> => {
  const body = JSON.stringify({ ref: 'refs/heads/main', after: 'f'.repeat(40) });
  const res = await fetch(`${url}/webhook/github`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-GitHub-Event': 'push',
      'X-Hub-Signature-256': signBody(body, WEBHOOK_SECRET),
    },
    body,
  });
  return res.status;
};

it('answers and closes many never-finished unsigned bodies at once, and still takes a signed delivery', async () => {
  const url = await startWatcherProcess();
  const flood = Array.from({ length: 200 }, () => neverFinished(url, ''));
  await Promise.all(flood.map((f) => f.closed));
  expect(new Set(flood.map((f) => f.status()))).toEqual(new Set([401]));
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  expect(await signedDelivery(url)).toBe(202);
}, 120_000);

it('reads only a few bodies with a well-formed wrong signature at once: the rest are refused, every one is closed', async () => {
  const url = await startWatcherProcess();
  const wrong = `X-Hub-Signature-256: sha256=${'0'.repeat(64)}\r\n`;
  const flood = Array.from({ length: 200 }, () => neverFinished(url, wrong));
  // While the admitted bodies are still being sent, the endpoints answer.
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  await Promise.all(flood.map((f) => f.closed));
  const statuses = flood.map((f) => f.status());
  // Over the bound: 503 at once; admitted: cut off at the body deadline (408); never a run.
  expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(150);
  expect(statuses.every((s) => s === 503 || s === 408)).toBe(true);
  expect(await signedDelivery(url)).toBe(202);
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
}, 120_000);

it('closes connections that never send a byte (which the header and request timeouts never see)', async () => {
  const url = await startWatcherProcess();
  const { port } = new URL(url);
  const idle = Array.from({ length: 50 }, () => {
    const socket = connect(Number(port), '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    return new Promise<void>((resolve) => socket.once('close', () => resolve()));
  });
  await Promise.all(idle);
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
}, 120_000);
