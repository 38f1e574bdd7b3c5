/**
 * `watch --dir` beside a manifest rewritten every 0.1 s without end (`npm run build && node
 * dist/bench/debounce.js [--trials 5]`): how long a change to another manifest takes to be stored,
 * from its write to the emulator holding it (target ≤ 6 s; the debounce's maximum wait is 3 s).
 * The watcher and the emulator run in this process; prints one JSON line.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startEmulator } from '../../emulator/src/server.js';
import { runWatch } from '../../../src/watch/run-command.js';

const KEY = 'bench-debounce-key-0123456789abcdef';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const service = (tag: string, title: string) =>
  `openapi: 3.0.1\ninfo:\n  title: ${title}\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n`;

const option = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};

const main = async () => {
  const trials = Number(option('--trials', '5'));
  const root = await mkdtemp(join(tmpdir(), 'cortex-sync-debounce-'));
  const catalog = join(root, 'manifests', '.cortex', 'catalog');
  await mkdir(catalog, { recursive: true });
  await writeFile(join(root, 'manifests', 'cortex-sync.yaml'), 'sourceId: bench-debounce\n');
  await writeFile(join(catalog, 'busy.yaml'), service('svc-busy', 'Busy'));
  await writeFile(join(catalog, 'quiet.yaml'), service('svc-quiet', 'Quiet'));
  const emulator = await startEmulator({ apiKey: KEY, rateLimitPerMinute: 0 });
  const title = (tag: string): unknown => {
    const id = emulator.state.entities.idByTag[tag];
    const info = id ? emulator.state.entities.byId[id]?.descriptor.info : undefined;
    return info && typeof info === 'object' && !Array.isArray(info) ? (info as { title?: unknown }).title : undefined;
  };
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const quiet = new Writable({ write: (_c, _e, done) => done() });
  const exit = runWatch(
    { dir: 'manifests', listen: '127.0.0.1:0', interval: 0, healInterval: 0, shutdownTimeout: 5000, backoff: 50 },
    {
      stdout: quiet,
      stderr: quiet,
      cwd: root,
      env: { CORTEX_API_KEY: KEY, CORTEX_BASE_URL: emulator.url, CORTEX_SYNC_CACHE_DIR: join(root, 'cache') },
      untilStopped: () => stopped,
    },
  );
  while (title('svc-quiet') !== 'Quiet') await sleep(50);
  let churning = true;
  const churn = (async () => {
    for (let i = 0; churning; i += 1) {
      await writeFile(join(catalog, 'busy.tmp'), service('svc-busy', `Busy ${i}`));
      await rename(join(catalog, 'busy.tmp'), join(catalog, 'busy.yaml'));
      await sleep(100);
    }
  })();
  await sleep(1000);
  const storedMs: number[] = [];
  for (let t = 0; t < trials; t += 1) {
    const want = `Quiet ${t}`;
    const started = performance.now();
    await writeFile(join(catalog, 'quiet.yaml'), service('svc-quiet', want));
    while (title('svc-quiet') !== want) await sleep(20);
    storedMs.push(Math.round(performance.now() - started));
    await sleep(700 + 500 * t);
  }
  churning = false;
  await churn;
  stop();
  await exit;
  await emulator.stop();
  await rm(root, { recursive: true, force: true });
  const sorted = [...storedMs].sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      trials,
      storedMs,
      medianMs: sorted[Math.floor(sorted.length / 2)],
      maxMs: sorted.at(-1),
      targetMs: 6000,
    }),
  );
};

await main();
