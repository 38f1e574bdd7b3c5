/**
 * The binary killed (SIGKILL) in the middle of an incremental apply — its write has reached the
 * workspace, the answer has not reached it — then started again: what it kept of the live state
 * died with it, so the first run after the start reads the whole workspace, and finds the write
 * that landed (nothing to do, so no lease to wait for either).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, request as httpRequest, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  API_KEY,
  CONFIG_YAML,
  type Emulator,
  entityTitle,
  removeDir,
  serviceYaml,
  sleep,
  startTestEmulator,
  tempDir,
  writeFiles,
} from './harness.js';

const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'bin', 'cortex-sync.js');

let emulator: Emulator;
let root: string;
const children: ChildProcess[] = [];
let proxy: Server | undefined;

const body = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

/**
 * A 127.0.0.1 proxy to the emulator that, once `held` matches a request, forwards it, calls
 * `landed` when the emulator has answered, and never answers the client.
 */
const startProxy = async (held: (method: string, text: string) => boolean, landed: () => void): Promise<string> => {
  const upstream = new URL(emulator.url);
  proxy = createServer((req, res) => {
    void body(req).then((sent) => {
      const hold = held(req.method ?? 'GET', sent.toString('utf8'));
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (reply) => {
          const chunks: Buffer[] = [];
          reply.on('data', (c: Buffer) => chunks.push(c));
          reply.on('end', () => {
            if (hold) {
              landed();
              return;
            }
            res.writeHead(reply.statusCode ?? 502, reply.headers);
            res.end(Buffer.concat(chunks));
          });
        },
      );
      forward.end(sent);
    });
  });
  const server = proxy;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
};

beforeEach(async () => {
  if (!existsSync(join(REPO, 'dist', 'engine', 'live-cache.js'))) {
    throw new Error('dist/ is older than the sources: run `npm run build` (npm ci does it through prepare)');
  }
  emulator = await startTestEmulator();
  root = await tempDir();
});
afterEach(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  children.length = 0;
  proxy?.closeAllConnections();
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  proxy = undefined;
  await emulator.stop();
  await removeDir(root);
});

/** Starts `cortex-sync watch --dir manifests`; its JSON log lines as they come. */
const startBinary = (baseUrl: string) => {
  const proc = spawn(process.execPath, [BIN, 'watch', '--dir', 'manifests', '--listen', '127.0.0.1:0'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      CORTEX_API_KEY: API_KEY,
      CORTEX_BASE_URL: baseUrl,
      CORTEX_SYNC_CACHE_DIR: join(root, 'cache'),
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let stdout = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  const logs = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const waitFor = async (what: string, found: (l: Record<string, unknown>) => boolean, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = logs().find(found);
      if (line) return line;
      if (Date.now() > deadline) throw new Error(`no ${what}; stdout: ${stdout}`);
      await sleep(10);
    }
  };
  return { proc, logs, waitFor };
};

it('killed during an incremental apply: the first run after the start reads everything, and converges', async () => {
  const files: Record<string, string> = { 'cortex-sync.yaml': CONFIG_YAML };
  for (let i = 0; i < 10; i += 1) files[`.cortex/catalog/svc-${i}.yaml`] = serviceYaml(`svc-${i}`);
  await writeFiles(join(root, 'manifests'), files);

  let landed: () => void = () => {};
  const written = new Promise<void>((resolve) => {
    landed = resolve;
  });
  const through = await startProxy(
    (method, text) => method === 'POST' && text.includes('Service three'),
    () => landed(),
  );
  const first = startBinary(through);
  expect(await first.waitFor('first run', (l) => l.runId === 'run-1' && typeof l.result === 'string')).toMatchObject({
    result: 'applied',
    read: { path: 'full', reason: 'no-cache' },
  });

  // An edit; the watcher is killed once its write has reached the workspace, before it hears so.
  const file = join(root, 'manifests', '.cortex', 'catalog', 'svc-3.yaml');
  const from = emulator.requests.length;
  await writeFile(file, (await readFile(file, 'utf8')).replace('title: svc-3', 'title: Service three'));
  await written;
  expect(entityTitle(emulator, 'svc-3')).toBe('Service three');
  const killed = new Promise((resolve) => first.proc.once('exit', resolve));
  first.proc.kill('SIGKILL');
  await killed;
  // It was an incremental run (no list of entities was read), killed before it said how it ended.
  const lists = emulator.requests.slice(from).filter((r) => r.path === '/api/v1/catalog/descriptors');
  expect(lists.filter((r) => r.query.includes('service'))).toEqual([]);
  expect(first.logs().find((l) => l.runId === 'run-2' && l.msg === 'run started')).toBeDefined();
  expect(first.logs().find((l) => l.runId === 'run-2' && typeof l.result === 'string')).toBeUndefined();

  const second = startBinary(emulator.url);
  const run = await second.waitFor(
    'first run after the start',
    (l) => l.runId === 'run-1' && typeof l.result === 'string',
  );
  expect(run).toMatchObject({ result: 'applied', reason: 'in-sync', read: { path: 'full', reason: 'no-cache' } });
  expect(entityTitle(emulator, 'svc-3')).toBe('Service three');
});
