/**
 * A waiting apply wins over a lease the watcher only keeps: a watcher whose manifests change more
 * often than its linger (every 2 s under a 6 s linger here; 20 s is the default) would otherwise keep
 * the lease for ever, and a CLI apply of the same source would wait out its whole lease wait and fail. The watcher runs in-process against the
 * emulator; the apply is the CLI's, with a 40 s lease wait, from a clone of the same repository.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { generateRepository } from '../../packages/bench/src/generate.js';
import { resolveConfig } from '../../src/engine/config.js';
import { readLease, writeLease } from '../../src/engine/lease.js';
import { runCli } from '../../src/cli/main.js';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../src/watch/log.js';
import type { Source } from '../../src/watch/source.js';
import { type RunningWatcher, startWatcher } from '../../src/watch/watcher.js';
import { cli } from '../e2e/harness.js';
import { API_KEY, type Emulator, entityTitle, removeDir, startTestEmulator, tempDir } from './harness.js';

const SOURCE = 'lease-waiter-test';
const ORIGIN = 'github.com/acme/lease-waiter';

let emulator: Emulator;
let root: string;
let dir: string;
let watcher: RunningWatcher | undefined;
let logged: Record<string, unknown>[];

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  dir = join(root, 'repo');
  await generateRepository(dir, { entities: 60, sourceId: SOURCE });
  await writeFile(join(dir, 'cortex-sync.yaml'), `sourceId: ${SOURCE}\n`);
  logged = [];
});
afterEach(async () => {
  await watcher?.stop(5000);
  watcher = undefined;
  await emulator.stop();
  await removeDir(root);
});

const env = () => ({ CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: API_KEY, CORTEX_SYNC_ORIGIN: ORIGIN });

/** A source that changes only when the test says so. */
const manualSource = (at: string): Source => ({
  description: at,
  sync: () => Promise.resolve({ dir: at, revision: 'local' }),
  watch: () => Promise.resolve(),
  close: () => Promise.resolve(),
});

const startIt = async (options: { leaseLingerMs?: number } = {}): Promise<RunningWatcher> => {
  const w = await startWatcher({
    ...options,
    source: manualSource(dir),
    resolveConfig: (at) => resolveConfig({ dir: at }, env(), at),
    apiKey: API_KEY,
    host: '127.0.0.1',
    port: 0,
    healIntervalMs: 0,
    pruneSettleMs: 0,
    planLogFile: join(root, 'plan-log.jsonl'),
    logger: createLogger({
      write: (line) => logged.push(JSON.parse(line) as Record<string, unknown>),
      secrets: [API_KEY],
    }),
    manifestCache: { settleMs: 0 },
  });
  watcher = w;
  return w;
};

/** Resolves once run `n` is recorded and nothing runs. */
const settled = async (w: RunningWatcher, n: number): Promise<void> => {
  while (w.history.runs().length < n || w.runner.state().running || w.runner.state().pending !== undefined)
    await new Promise((r) => setTimeout(r, 10));
};

const serviceFile = (at: string, i: number) => join(at, '.cortex', 'catalog', `svc-${String(i).padStart(5, '0')}.yaml`);
const retitle = async (at: string, i: number, title: string): Promise<void> => {
  const file = serviceFile(at, i);
  await writeFile(file, (await readFile(file, 'utf8')).replace(/^ {2}title: .*$/m, `  title: ${title}`));
};

describe('a waiting apply wins over a kept lease', () => {
  it('beside a watcher changing every 2 s (6 s linger), a CLI apply with a 40 s lease wait is done', async () => {
    const w = await startIt({ leaseLingerMs: 6_000 });
    await settled(w, 1);
    // Someone else's clone of the repository, with a change of its own.
    const clone = join(root, 'clone');
    await cp(dir, clone, { recursive: true });
    await retitle(clone, 20, 'Service twenty, from the CLI');

    // The watcher: a change every 2 s, each applied under the lease it keeps.
    let changing = true;
    const churn = (async () => {
      for (let i = 0; changing; i++) {
        await retitle(dir, 1, `Service one, edit ${i}`);
        w.runner.trigger('file-change');
        await new Promise((r) => setTimeout(r, 2_000));
      }
    })();
    try {
      // Once the watcher keeps the lease between its runs.
      const api = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
      while (!((await readLease(api, SOURCE))?.expiresAt ?? 0)) await new Promise((r) => setTimeout(r, 50));
      await api.close();
      const started = performance.now();
      const run = await cli(['apply', '--dir', '.', '--auto-approve'], {
        cwd: clone,
        env: { ...env(), CORTEX_SYNC_LEASE_WAIT: '40' },
      });
      const tookMs = performance.now() - started;
      console.info(`the CLI apply beside the watcher was done in ${(tookMs / 1000).toFixed(1)} s`);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/kept idle by a watcher/);
      expect(entityTitle(emulator, 'svc-00020')).toBe('Service twenty, from the CLI');
    } finally {
      changing = false;
      await churn;
    }
    // The watcher goes on applying its changes afterwards.
    await retitle(dir, 1, 'Service one, after the CLI');
    const before = w.history.runs().length;
    w.runner.trigger('file-change');
    await settled(w, before + 1);
    expect(entityTitle(emulator, 'svc-00001')).toBe('Service one, after the CLI');
  }, 180_000);

  /** Starts the watcher, applies once, and resolves once it keeps the lease idle. */
  const idleWatcher = async (): Promise<RunningWatcher> => {
    const w = await startIt();
    await settled(w, 1);
    const api = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    try {
      while ((await readLease(api, SOURCE))?.idle !== true) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await api.close();
    }
    return w;
  };

  const cloneWithChange = async (name: string, i: number, title: string): Promise<string> => {
    const clone = join(root, name);
    await cp(dir, clone, { recursive: true });
    await retitle(clone, i, title);
    return clone;
  };

  it('a waiter with a lease wait of 0 beside an idle watcher: fails at once saying so, and asks nothing of it', async () => {
    await idleWatcher();
    const clone = await cloneWithChange('clone', 20, 'Service twenty, impatient');
    const from = emulator.requests.length;
    const run = await cli(['apply', '--dir', '.', '--auto-approve'], {
      cwd: clone,
      env: { ...env(), CORTEX_SYNC_LEASE_WAIT: '0' },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/the apply lease of this source is kept idle by a watcher between its runs \(held by /);
    expect(run.stderr).toMatch(/Try again with a longer lease wait \(CORTEX_SYNC_LEASE_WAIT/);
    expect(run.stderr).not.toMatch(/--break-lease/);
    expect(run.stderr).not.toMatch(/another apply of this source is running/);
    // No mark left behind: it did not wait.
    expect(emulator.requests.slice(from).filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('two waiters at once beside an idle watcher: both are done', async () => {
    await idleWatcher();
    const a = await cloneWithChange('clone-a', 20, 'Service twenty, from A');
    const b = await cloneWithChange('clone-b', 21, 'Service twenty-one, from B');
    const runs = await Promise.all(
      [a, b].map((cwd) =>
        cli(['apply', '--dir', '.', '--auto-approve'], { cwd, env: { ...env(), CORTEX_SYNC_LEASE_WAIT: '60' } }),
      ),
    );
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    // Each clone knows only its own change: whichever applied last put the other's title back.
    expect([
      entityTitle(emulator, 'svc-00020') === 'Service twenty, from A',
      entityTitle(emulator, 'svc-00021') === 'Service twenty-one, from B',
    ]).toContain(true);
  }, 180_000);

  it('a waiter killed -9 leaves its mark: the watcher lets the lease go once, then takes it again and applies', async () => {
    const w = await idleWatcher();
    const api = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    try {
      const kept = await readLease(api, SOURCE);
      await writeLease(api, { ...kept!, waiting: [{ holder: 'gone run 0badf00d', since: Date.now() }] });
      // The watcher sees the mark at its next look and lets the lease go, naming the waiter.
      while ((await readLease(api, SOURCE))?.expiresAt !== 0) await new Promise((r) => setTimeout(r, 50));
      expect(logged.some((l) => typeof l.msg === 'string' && l.msg.includes('gone run 0badf00d waits for it'))).toBe(
        true,
      );
    } finally {
      await api.close();
    }
    await retitle(dir, 2, 'Service two, after the ghost');
    const before = w.history.runs().length;
    w.runner.trigger('file-change');
    await settled(w, before + 1);
    expect(w.history.last()).toMatchObject({ result: 'applied' });
    expect(entityTitle(emulator, 'svc-00002')).toBe('Service two, after the ghost');
  }, 120_000);

  it('a waiter whose clock is two hours ahead of the watcher’s still gets the lease', async () => {
    await idleWatcher();
    const clone = await cloneWithChange('clone', 20, 'Service twenty, from the future');
    const out = new PassThrough();
    const err = new PassThrough();
    let stderr = '';
    err.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    out.resume();
    const ahead = 2 * 3600_000;
    const code = await runCli(['apply', '--dir', '.', '--auto-approve'], {
      stdout: out,
      stderr: err,
      env: { NO_COLOR: '1', ...env(), CORTEX_SYNC_LEASE_WAIT: '40' },
      cwd: clone,
      clock: {
        now: () => Date.now() + ahead,
        monotonic: () => performance.now(),
        sleep: (ms, signal) =>
          new Promise((resolve, reject) => {
            const t = setTimeout(resolve, ms);
            signal?.addEventListener('abort', () => {
              clearTimeout(t);
              reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
            });
          }),
      },
    });
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/kept idle by a watcher/);
    expect(entityTitle(emulator, 'svc-00020')).toBe('Service twenty, from the future');
  }, 120_000);
});
