/**
 * The measuring process of the many-sources benchmark (`watch-sources.ts`): runs `cortex-sync
 * watch --config sources.yaml` in this process (the command's own code, `runWatch`, on the real
 * client) against the emulator process, follows its JSON log lines as they are written (no
 * polling of its port), and prints one JSON line.
 *
 * `--scenario fleet` (`--root DIR` holds `sources.yaml` and the sources): waits until every source
 * has applied, then changes one file `--changes` times, a source after another, timing each until
 * its source's run is logged, with RSS after every change and the heap after a full collection
 * every `--memory-every` changes (needs `--expose-gc`); then the process's CPU while idle for
 * `--idle-seconds`.
 *
 * `--scenario fairness` (sources `big` and `small`): from the start, changes the small source's one
 * file every `--probe-every` seconds while the big source's first run (every entity to create) is
 * under way, `--probes` times at most, timing each change until the small source's run that
 * follows it is logged applied; then, without waiting for the big source to finish, stops.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { runWatch } from '../../../src/watch/run-command.js';
import { numberOption, option, report } from './child-common.js';
import { serviceFile } from './sources-repos.js';

const root = resolve(option('--root') ?? '.');
const scenario = option('--scenario') ?? 'fleet';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gc = (globalThis as { gc?: () => void }).gc;

/** What a log line of the watcher says, with when it was written. */
interface LogLine {
  at: number;
  msg: string;
  source?: string;
  runId?: string;
  result?: string;
  trigger?: string;
  durationMs?: number;
  read?: { path: string; reason?: string };
}

/** Waiters on the log: each sees every line until it returns true. */
const waiters = new Set<(line: LogLine) => boolean>();
const counts = { lines: 0, errors: 0 };
let pending = '';
const stdout = {
  write: (chunk: string | Uint8Array): boolean => {
    pending += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    let end = pending.indexOf('\n');
    while (end >= 0) {
      const text = pending.slice(0, end);
      pending = pending.slice(end + 1);
      end = pending.indexOf('\n');
      if (!text.startsWith('{')) continue;
      const line = { ...(JSON.parse(text) as Omit<LogLine, 'at'> & { level?: string }), at: performance.now() };
      counts.lines += 1;
      if (line.level === 'error') counts.errors += 1;
      for (const waiter of [...waiters]) if (waiter(line)) waiters.delete(waiter);
    }
    return true;
  },
};

/** Resolves with the first line (from now on) for which `match` holds. */
const nextLine = (match: (line: LogLine) => boolean, timeoutMs = 600_000): Promise<LogLine> =>
  new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      waiters.delete(waiter);
      reject(new Error(`no such log line within ${timeoutMs} ms`));
    }, timeoutMs);
    const waiter = (line: LogLine): boolean => {
      if (!match(line)) return false;
      clearTimeout(timer);
      resolvePromise(line);
      return true;
    };
    waiters.add(waiter);
  });

/** A run's closing log line (`logRun`): applied, nothing to change, or failed. */
const isRunEnd = (line: LogLine): boolean => line.runId !== undefined && line.result !== undefined;
const isApplied = (line: LogLine): boolean => isRunEnd(line) && line.result === 'applied';

let stop!: () => void;
const stopped = new Promise<void>((r) => {
  stop = r;
});
const listening = nextLine((line) => line.msg === 'watching');
const exit = runWatch(
  {
    config: 'sources.yaml',
    listen: '127.0.0.1:0',
    interval: 60_000,
    healInterval: 600_000,
    shutdownTimeout: 10_000,
    backoff: 5000,
    cacheDir: resolve(root, 'cache'),
  },
  {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: process.stderr,
    env: process.env,
    cwd: root,
    untilStopped: () => stopped,
  },
);
exit.catch((error: unknown) => {
  process.stderr.write(`watch failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
const started = (await listening).at;

const mb = (n: number) => Number((n / 2 ** 20).toFixed(1));
/** RSS as sampled; with `collect`, the heap after a full collection. */
const memory = (collect: boolean) => {
  const rssMb = mb(process.memoryUsage.rss());
  if (collect) {
    gc?.();
    gc?.();
  }
  const used = process.memoryUsage();
  return {
    rssMb,
    heapUsedMb: mb(used.heapUsed),
    externalMb: mb(used.external),
    collected: collect && gc !== undefined,
  };
};

/** Sets service `i`'s title in the file at `file`. */
const retitle = async (file: string, title: string): Promise<void> => {
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/^ {2}title: .*$/m, `  title: ${title}`));
};

/** Changes a file and times it until its source logs an applied run that started after it. */
const timedChange = async (source: string, file: string, title: string, timeoutMs?: number) => {
  const applied = nextLine((line) => line.source === source && isApplied(line), timeoutMs);
  const at = performance.now();
  await retitle(file, title);
  const line = await applied;
  const read = line.read ? `${line.read.path}${line.read.reason ? ` (${line.read.reason})` : ''}` : '';
  return { wallMs: line.at - at, runMs: line.durationMs ?? 0, read };
};

if (scenario === 'fleet') {
  const sources = numberOption('--sources') ?? 20;
  const names = Array.from({ length: sources }, (_, i) => `s${String(i).padStart(2, '0')}`);
  const firstApplied = new Map<string, number>();
  await new Promise<void>((done) => {
    waiters.add((line) => {
      if (line.source !== undefined && isRunEnd(line) && !firstApplied.has(line.source)) {
        if (line.result !== 'applied') throw new Error(`source ${line.source}'s first run: ${line.result}`);
        firstApplied.set(line.source, line.at - started);
      }
      if (firstApplied.size < sources) return false;
      done();
      return true;
    });
  });
  const firstSyncMs = Math.max(...firstApplied.values());
  await sleep(1000);
  const at = () => (performance.now() - started) / 1000;
  // After the first sync, then after each round (every source changed once), after a full collection.
  const memoryAfter = [{ changes: 0, atS: at(), ...memory(true) }];
  const changes = numberOption('--changes') ?? 100;
  const samples: { source: string; wallMs: number; runMs: number; read: string; rssMb: number }[] = [];
  for (let n = 1; n <= changes; n += 1) {
    const source = names[(n - 1) % sources] ?? 's00';
    const changed = await timedChange(source, serviceFile(resolve(root, source), `${source}-`, n), `Service edit ${n}`);
    samples.push({ source, ...changed, rssMb: mb(process.memoryUsage.rss()) });
    if (n % sources === 0 || n === changes) memoryAfter.push({ changes: n, atS: at(), ...memory(true) });
    await sleep(100);
  }
  // Converged: the apply leases kept after the last changes are let go, nothing is left to do.
  await sleep((numberOption('--settle-seconds') ?? 25) * 1000);
  const linesBefore = counts.lines;
  const cpu = process.cpuUsage();
  const idleStarted = performance.now();
  await sleep((numberOption('--idle-seconds') ?? 10) * 1000);
  const used = process.cpuUsage(cpu);
  const idleWallMs = performance.now() - idleStarted;
  const logLinesDuringIdle = counts.lines - linesBefore;
  stop();
  await exit;
  report({
    sources,
    firstSyncMs,
    firstApplied: Object.fromEntries(firstApplied),
    samples,
    memoryAfter,
    idleCpuShare: (used.user + used.system) / 1000 / idleWallMs,
    idleWallMs,
    logLinesDuringIdle,
    errors: counts.errors,
  });
} else {
  const probes = numberOption('--probes') ?? 6;
  const probeEveryMs = (numberOption('--probe-every') ?? 10) * 1000;
  const smallFile = serviceFile(resolve(root, 'small'), 'small-', 0);
  // How long the event loop was held at a time (the big source's work delays every other's by that).
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  // The small source's first run, beside the big source's load of every file.
  const smallFirst = await nextLine((line) => line.source === 'small' && isRunEnd(line));
  let bigDone: LogLine | undefined;
  void nextLine((line) => line.source === 'big' && isRunEnd(line)).then((line) => {
    bigDone = line;
  });
  const samples: { atS: number; wallMs: number; runMs: number; read: string; bigRunning: boolean }[] = [];
  for (let n = 1; n <= probes && !bigDone; n += 1) {
    const atS = (performance.now() - started) / 1000;
    const changed = await timedChange('small', smallFile, `Small edit ${n}`, 300_000);
    samples.push({ atS, ...changed, bigRunning: !bigDone });
    await sleep(Math.max(0, probeEveryMs - changed.wallMs));
  }
  loopDelay.disable();
  stop();
  await exit;
  report({
    eventLoopDelayMs: {
      p50: loopDelay.percentile(50) / 1e6,
      p99: loopDelay.percentile(99) / 1e6,
      max: loopDelay.max / 1e6,
    },
    smallFirstRunMs: smallFirst.at - started,
    smallFirstResult: smallFirst.result,
    samples,
    bigRunEnded: bigDone ? { atS: (bigDone.at - started) / 1000, result: bigDone.result } : undefined,
    errors: counts.errors,
  });
}
