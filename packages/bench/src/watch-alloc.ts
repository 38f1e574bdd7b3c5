/**
 * Where a watcher's one-file change allocates: `node dist/bench/watch-alloc.js [--entities 10000]
 * [--changes 20] [--warmup 3] [--interval 8192] [--top 25] [--profile-out FILE.heapprofile]`. Generates a repository, starts the
 * emulator in its own process (so its allocations are not counted) and the watcher here, as the
 * watch benchmark does; after the first sync and a few warm-up changes, records V8's sampling heap
 * profile over `--changes` changes, counting objects the collector has already freed (the garbage
 * is what is measured, not what is kept), and prints the bytes allocated per change in all, by the
 * allocating function (self) and by the project function on the stack (inclusive).
 *
 * Samples, not every allocation: each stands for about `--interval` bytes, so the figures are good
 * to a few per cent over 20 changes; they do not depend on timing or on when the collector runs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { resolveConfig } from '../../../src/engine/config.js';
import { createDirSource } from '../../../src/watch/dir-source.js';
import { createLogger } from '../../../src/watch/log.js';
import { startWatcher } from '../../../src/watch/watcher.js';
import { numberOption, option } from './child-common.js';
import { generateRepository, retitleService } from './generate.js';
import { startEmulatorProcess } from './processes.js';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const entities = numberOption('--entities') ?? 10_000;
const changes = numberOption('--changes') ?? 20;
const warmup = numberOption('--warmup') ?? 3;
const interval = numberOption('--interval') ?? 8192;
const top = numberOption('--top') ?? 25;
/** The benchmark's `dist/`: the project's code is bundled into the program there; packages stay in node_modules. */
const distRoot = import.meta.dirname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `function file:line`, the file relative to dist/ (the bundled program) for the project's own code. */
const frameName = (frame: ProfileNode['callFrame']): string => {
  const path = frame.url.startsWith('file://') ? new URL(frame.url).pathname : frame.url;
  const file = path.startsWith(distRoot) ? relative(distRoot, path) : path.replace(/^.*node_modules\//, '');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
};
/** The project's code: the program's bundle (the benchmark's own harness, a few frames, included). */
const isOwn = (frame: ProfileNode['callFrame']): boolean => frame.url.includes(distRoot);

/** Self bytes per function, and inclusive bytes per project function (each counted once per stack). */
const aggregate = (root: ProfileNode) => {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode, stack: ReadonlySet<string>): number => {
    const name = frameName(node.callFrame);
    const own = isOwn(node.callFrame) && !stack.has(name);
    const below = own ? new Set([...stack, name]) : stack;
    let bytes = node.selfSize;
    for (const child of node.children) bytes += walk(child, below);
    self.set(name, (self.get(name) ?? 0) + node.selfSize);
    if (own) inclusive.set(name, (inclusive.get(name) ?? 0) + bytes);
    total += node.selfSize;
    return bytes;
  };
  walk(root, new Set());
  return { self, inclusive, total };
};

const workDir = await mkdtemp(join(tmpdir(), 'cortex-sync-watch-alloc-'));
const apiKey = `bench-${randomBytes(12).toString('hex')}`;
const emulator = await startEmulatorProcess({ apiKey, rateLimit: 0 });
try {
  const dir = join(workDir, 'repo');
  await generateRepository(dir, { entities, sourceId: 'bench-watch' });
  const env = { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: apiKey, CORTEX_RATE_LIMIT: '10000000' };
  const watcher = await startWatcher({
    source: createDirSource({ dir }),
    resolveConfig: (root) => resolveConfig({ dir: root }, { ...env, CORTEX_SYNC_CONCURRENCY: '16' }, root),
    apiKey,
    host: '127.0.0.1',
    port: 0,
    healIntervalMs: 0,
    planLogFile: join(workDir, 'plan-log.jsonl'),
    logger: createLogger({ write: () => {}, secrets: [apiKey] }),
  });
  let seen = 0;
  const nextRun = async (): Promise<string> => {
    for (;;) {
      const last = watcher.history.runs()[0];
      if (last && Number(last.runId.slice(4)) > seen) {
        seen = Number(last.runId.slice(4));
        return `${last.result}${last.read ? ` ${last.read.path}` : ''}`;
      }
      await sleep(2);
    }
  };
  const change = async (n: number): Promise<string> => {
    await retitleService(dir, n, `Service ${n} (edit ${n})`);
    const result = await nextRun();
    await sleep(50);
    return result;
  };
  process.stderr.write(`first sync: ${await nextRun()}\n`);
  for (let n = 1; n <= warmup; n += 1) process.stderr.write(`warm-up change ${n}: ${await change(n)}\n`);

  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: interval,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const results = new Map<string, number>();
  for (let n = warmup + 1; n <= warmup + changes; n += 1) {
    const result = await change(n);
    results.set(result, (results.get(result) ?? 0) + 1);
  }
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
  session.disconnect();
  // The raw profile opens in Chrome's DevTools (Memory tab), for the call paths behind a figure.
  const profileOut = option('--profile-out');
  if (profileOut !== undefined) await writeFile(profileOut, JSON.stringify(profile));
  await watcher.stop(5000);

  const { self, inclusive, total } = aggregate(profile.head);
  const mb = (bytes: number) => (bytes / changes / 2 ** 20).toFixed(2).padStart(7);
  const list = (title: string, rows: Map<string, number>) => {
    process.stdout.write(`\n${title} (MB per change)\n`);
    for (const [name, bytes] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top))
      process.stdout.write(`${mb(bytes)}  ${name}\n`);
  };
  process.stdout.write(
    `${entities} entities, ${changes} changes (${[...results].map(([r, n]) => `${n} ${r}`).join(', ')}): ${mb(total).trim()} MB allocated per change\n`,
  );
  list('by allocating function', self);
  list('by project function on the stack (inclusive)', inclusive);
} finally {
  await emulator.stop();
  await rm(workDir, { recursive: true, force: true });
}
