/**
 * The watcher's memory under a webhook flood (`npm run build && node dist/bench/webhook-flood.js
 * [--connections 600]`): `cortex-sync watch --dir` as a process, then N connections at once, each
 * sending a chunked body of just under 1 MB and never finishing it, first unsigned, then with a
 * well-formed but wrong signature (the case that gets read). Samples the watcher's RSS every 50 ms
 * from `/proc` (Linux) and reports the growth over the idle RSS at its peak (`VmHWM`); the target is
 * ≤ 150 MB. Writes `bench/webhook-flood-results.json`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startEmulatorProcess } from './processes.js';

const REPO = join(import.meta.dirname, '..', '..', '..');
const API_KEY = 'bench-webhook-flood-key-0123456789';
const SECRET = 'bench-webhook-flood-secret';
const CHUNK = 'x'.repeat(64 * 1024);
/** Chunks per body: 15 × 64 KB, just under the 1 MB cap, and never the last chunk. */
const CHUNKS = 15;

const option = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};

/** `VmRSS` and `VmHWM` of a process, MB. */
const memoryOf = async (pid: number): Promise<{ rssMb: number; peakMb: number }> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
};

/** Resets the peak (`VmHWM`) to the current RSS (Linux: writing 5 to `clear_refs`). */
const resetPeak = (pid: number): Promise<void> => writeFile(`/proc/${pid}/clear_refs`, '5').catch(() => {});

interface FloodResult {
  variant: string;
  connections: number;
  idleRssMb: number;
  peakRssMb: number;
  growthMb: number;
  answered: Record<string, number>;
  wallMs: number;
}

/** Opens `n` never-finished bodies with `headers`; resolves when every connection is closed. */
const flood = async (port: number, n: number, headers: string): Promise<Record<string, number>> => {
  const answers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<string>((resolve) => {
          const socket = connect(port, '127.0.0.1');
          let answer = '';
          socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
          socket.on('error', () => {});
          socket.once('close', () => resolve(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 'none'));
          socket.write(
            `POST /webhook/github HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-GitHub-Event: push\r\n${headers}Transfer-Encoding: chunked\r\n\r\n`,
          );
          let sent = 0;
          const more = () => {
            while (!socket.destroyed && sent < CHUNKS) {
              sent += 1;
              if (!socket.write(`${CHUNK.length.toString(16)}\r\n${CHUNK}\r\n`)) return void socket.once('drain', more);
            }
          };
          more();
        }),
    ),
  );
  const counts: Record<string, number> = {};
  for (const a of answers) counts[a] = (counts[a] ?? 0) + 1;
  return counts;
};

const measure = async (child: ChildProcess, port: number, n: number, variant: string, headers: string) => {
  const pid = child.pid ?? 0;
  await new Promise((r) => setTimeout(r, 1000));
  await resetPeak(pid);
  const idle = await memoryOf(pid);
  let peak = idle.rssMb;
  const sampler = setInterval(() => {
    void memoryOf(pid).then((m) => (peak = Math.max(peak, m.rssMb, m.peakMb)));
  }, 50);
  const started = Date.now();
  const answered = await flood(port, n, headers);
  const wallMs = Date.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, (await memoryOf(pid)).peakMb);
  const result: FloodResult = {
    variant,
    connections: n,
    idleRssMb: Math.round(idle.rssMb),
    peakRssMb: Math.round(peak),
    growthMb: Math.round(peak - idle.rssMb),
    answered,
    wallMs,
  };
  console.log(JSON.stringify(result));
  return result;
};

const main = async () => {
  const connections = Number(option('--connections', '600'));
  const root = await mkdtemp(join(tmpdir(), 'cortex-sync-webhook-flood-'));
  const emulator = await startEmulatorProcess({ apiKey: API_KEY, rateLimit: 0 });
  let child: ChildProcess | undefined;
  try {
    await mkdir(join(root, 'manifests', '.cortex', 'catalog'), { recursive: true });
    await writeFile(join(root, 'manifests', 'cortex-sync.yaml'), 'sourceId: bench-flood\n');
    await writeFile(
      join(root, 'manifests', '.cortex', 'catalog', 'a.yaml'),
      'openapi: 3.0.1\ninfo:\n  title: a\n  x-cortex-tag: svc-a\n  x-cortex-type: service\n',
    );
    child = spawn(
      process.execPath,
      [join(REPO, 'bin', 'cortex-sync.js'), 'watch', '--dir', 'manifests', '--listen', '127.0.0.1:0'],
      {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          CORTEX_API_KEY: API_KEY,
          CORTEX_BASE_URL: emulator.url,
          CORTEX_SYNC_CACHE_DIR: join(root, 'cache'),
          CORTEX_SYNC_WEBHOOK_SECRET: SECRET,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let url = '';
    for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) {
      url ||= /^listening on (\S+)$/.exec(line)?.[1] ?? '';
      if (line.includes('"result":"applied"')) break;
    }
    child.stdout?.resume();
    const port = Number(new URL(url).port);
    const results = [
      await measure(child, port, connections, 'unsigned', ''),
      await measure(
        child,
        port,
        connections,
        'well-formed wrong signature',
        `X-Hub-Signature-256: sha256=${'0'.repeat(64)}\r\n`,
      ),
    ];
    await mkdir(join(REPO, 'bench'), { recursive: true });
    await writeFile(
      join(REPO, 'bench', 'webhook-flood-results.json'),
      `${JSON.stringify({ measuredAt: new Date().toISOString(), targetGrowthMb: 150, results }, null, 2)}\n`,
    );
  } finally {
    child?.kill('SIGTERM');
    await emulator.stop();
    await rm(root, { recursive: true, force: true });
  }
};

await main();
